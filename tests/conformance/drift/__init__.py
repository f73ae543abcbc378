"""The SDK drift check (issue 11, part 2): every exception an SDK exports has a rule, or a reason.

The check takes *entries*: one per exception class an SDK exports (its type name and its
supertypes exactly as our helper would send them, and the language), and one per error
code the SDK's own sources list (botocore's Bedrock Runtime service model). An entry is
**decided** when some rule of the bundled ruleset *can decide* it:

- the rule's `language` condition, if it has one, names the entry's language;
- for a class: the rule's `type` condition names the class or one of its supertypes, other
  than a root every exception derives from (`Exception`, `BaseException`, `Error`);
  an untyped rule (an HTTP status, an origin) does not count, because it would decide
  every class alike;
- for a code: the rule's `code` condition (or its `cause`'s) lists the code, and its
  `type` condition, if any, names the type the SDK raises it as (or a supertype);
- every other condition (`origin`, `provider`, `http_status`, `grpc_status`, `code` for a
  class, `cause`, `message`, `attributes`) is taken as satisfiable: those are values of
  the live failure, not of the class, so some descriptor of that type could carry them.

An entry that no rule can decide must be listed, with a reason, in
`deliberately-unknown.yaml` beside this file; the check fails on every other one (a new
class after a pin bump), and on a listed entry that is gone or now decided (so the list
stays true). Python entries come from walking the pinned packages (`python_sdks.py`, in a
subprocess, offline); Node entries are a JSON list the Node side writes (`entries.py`
reads both), so one check serves both languages:

    python -m tests.conformance.drift                       # the pinned Python SDKs
    python -m tests.conformance.drift --entries node.json   # any entries, e.g. Node's
"""
