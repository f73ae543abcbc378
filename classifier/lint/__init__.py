"""What a valid ruleset gets wrong, before it ships.

    checks     the lint checks (conflicts, shadowing, catch-alls, ...) and `lint`
    witness    descriptors that prove a conflict or a shadow, confirmed by the engine
    patterns   what RE2 patterns can match, for witnesses

Each check reports with a code from `classifier.codes`.
"""
