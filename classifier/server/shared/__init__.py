"""What every room of the server shares (it imports nothing else of `server/`):

log              structured logs, one JSON object per line on stderr
serving_ruleset  the serving ruleset's home (`RulesetHolder`), with its bundle, and the
                 outcome of the last reload
serving_bundle   building and signing the serving bundle (the `--bundle-*` flags)
token_bucket     the server's one token bucket (the console's pages, the explain budget)
internals        every private detail of grpcio the server relies on, each asserted by
                 tests/server/shared/test_internals.py
"""
