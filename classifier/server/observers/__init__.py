"""The observers' room: what is told of every answer after it is given, and never slows it.

`metrics` the registry with the answer and RPC instruments (every room declares its
own on it and moves them through its own methods), `decisions` the decision log (one JSON line per
answer, its writer on a thread of its own), `shadow` the candidate ruleset's comparisons,
`unknown_sample` the live sample of Unknowns, `activity` what the console shows of recent
traffic.
"""
