"""The Unknown inbox: group Unknown answers into failures, and draft rules proven on past traffic.

    mask             what varies in a message (numbers, ids, UUIDs, hex, URLs, hosts, emails,
                     quoted values, payloads, timestamps) replaced by placeholders; secrets
                     redacted
    structure        the structural key: language, type and supertypes, origin, statuses,
                     code, provider, the causes; never merged across
    miner            message templates within one structural key (drain3's Drain, the
                     maintained fork)
    read             Unknown records from decision logs (rotated folders), JSON Lines and case
                     files
    cluster          records into clusters: counts, share, first and last seen, versions,
                     trend, examples
    inbox_report     each cluster against a ruleset (near misses, coverage) and the text,
                     markdown and JSON renderers of what `classifier unknowns` prints
    class_choice     the class, action and id a drafted rule carries, from the evidence
    drafts           the drafts for a cluster: the `when`s to try, the rule and cases of each
    proof            a draft compiled in memory over the target: loads, lints clean, replays
                     to exactly its cluster, its cases pass
    propose          a drafted rule per cluster, shown only once its proof passes
    proposal_output  the proposals as text, markdown, JSON and files to review

Imports the engine, the linter and the regression tools; the server and the CLI import it.
(`report` is the old name of `inbox_report`, kept for the server until it imports the new.)
"""
