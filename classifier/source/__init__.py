"""The file formats, read with every position kept.

    yamlsource       safe YAML with positions and hostile-input guards
    documents        the rule documents (RuleDoc, ManifestDoc, CatalogDoc) as pydantic models,
                     and the parsers that turn their values into the taxonomy's
    loader           a ruleset folder: manifest, catalog and rule files, with diagnostics
    descriptor_file  the descriptor-file format (YAML or JSON), read and written

Nothing here evaluates a rule: the engine compiles what this package reads.
"""
