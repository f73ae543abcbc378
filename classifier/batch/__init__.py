"""Classifying at table scale: Arrow batches in process, files on all cores, and replays.

`arrow` classifies a pyarrow Table or RecordBatch of descriptors and adds
the answer's columns; `pin` says which ruleset a worker process loads and
fails it when the digest is not the one the job was pinned to; `replay`
compares two rulesets over batches and builds the same report `classifier
diff` prints; `files` reads Parquet and JSON Lines and runs either over a
process pool. `classifier.spark` runs the same over a Spark DataFrame.

Needs the `arrow` extra (pyarrow); nothing outside this package and
`classifier.spark` imports it.
"""
