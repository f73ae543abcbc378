"""The Unknown inbox: group Unknown answers into failures, and draft rules proven on past traffic.

    mask       what varies in a message (numbers, ids, UUIDs, hex, URLs, hosts, emails, quoted
               values, payloads, timestamps) replaced by placeholders; secrets redacted
    structure  the structural key: language, type and supertypes, origin, statuses, code,
               provider, the causes; never merged across
    miner      message templates within one structural key (drain3's Drain, the maintained fork)
    read       Unknown records from decision logs (rotated folders), JSON Lines and case files
    cluster    records into clusters: counts, share, first and last seen, versions, trend, examples
    report     each cluster against a ruleset (near misses, coverage) and the text, markdown and
               JSON renderers
    propose    a drafted rule per cluster, shown only once it loads, lints clean and replays
               to exactly that cluster

Imports the engine, the linter and the regression tools; the server and the CLI import it.
"""
