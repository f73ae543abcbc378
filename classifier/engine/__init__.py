"""From rule documents to answers.

    compiler     named, pure stages from loaded documents to a Ruleset
    ruleset      the compiled model: CompiledRule, Outcome, Ruleset
    conditions   the closed union of compiled conditions
    literals     the literal runs a pattern's every match contains
    portable     whether every client's RE2 reads a pattern alike
    index        candidate lookup by type name, split by a plain field
    evaluate     classify: precedence over the matching rules (pure; no grpc, yaml or pydantic)
    trace        the tracer behind explain
    explain      explain, and its text rendering

One engine serves the server, explain, the linter and the regression runner.
"""
