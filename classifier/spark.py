"""`classifier.spark`, as the docs and existing jobs name it: `classifier.batch.spark`.

The Spark engine lives with the other batch engines (`classifier.batch`);
this module re-exports it so `from classifier.spark import classify_dataframe`
keeps working.
"""

from __future__ import annotations

from classifier.batch.spark import (
    ANSWER_SPARK_TYPES,
    SparkReplay,
    SparkSetupError,
    answer_fields,
    arrow_schema,
    classify_dataframe,
    java_home,
    replay_dataframe,
    session,
)

__all__ = [
    "ANSWER_SPARK_TYPES",
    "SparkReplay",
    "SparkSetupError",
    "answer_fields",
    "arrow_schema",
    "classify_dataframe",
    "java_home",
    "replay_dataframe",
    "session",
]
