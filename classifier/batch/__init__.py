"""Classifying at table scale: Arrow batches in process, files on all cores, Spark, and replays.

`arrow` classifies a pyarrow Table or RecordBatch of descriptors and adds
the answer's columns; `pin` says which ruleset a worker process loads (every
layer shipped, or a folder's path) and fails it when the digest is not the
one the job was pinned to, with one cache of pinned rulesets per process;
`replay` compares two rulesets over batches and builds the same report
`classifier diff` prints; `files` reads Parquet and JSON Lines and runs
either over a process pool; `spark` runs the same over a Spark DataFrame
(`classifier.spark` re-exports it); `jobs` is the one `reclassify(...,
run=Run(engine=...))` (and `replay`) both engines run through.

Needs the `arrow` extra (pyarrow; `spark` needs the `spark` extra); nothing
outside this package and `classifier.spark` imports it.
"""
