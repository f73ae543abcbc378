"""One local Spark for the whole test session (two cores, small splits so tables make several tasks)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

SPARK_CONF = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "4",
    "spark.sql.files.maxPartitionBytes": "32768",
    "spark.sql.files.openCostInBytes": "4096",
    "spark.sql.execution.arrow.maxRecordsPerBatch": "256",
    "spark.driver.memory": "1g",
}


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    from classifier.spark import java_home, session

    if java_home() is None:
        pytest.skip("no Java runtime (JAVA_HOME, or java on the PATH): the Spark tests need one")
    s = session("local[2]", app_name="classifier tests", conf=SPARK_CONF)
    s.sparkContext.setLogLevel("ERROR")
    yield s
    s.stop()
