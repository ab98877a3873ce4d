"""Triggers that poll Paimon table metadata in the triggerer (no Spark, no connection lookups)."""
