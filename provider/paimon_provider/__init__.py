"""Apache Airflow provider for Apache Paimon tables: operators and sensors running the bundled table engine's
Spark application (``table_engine/spark/app.py``) and reading table metadata without Spark.

Importing this package is cheap: hooks, operators, sensors and triggers live in submodules, and neither PySpark
nor the engine is imported at module level anywhere under ``provider``.
"""

from __future__ import annotations

__version__ = "0.1.0"
