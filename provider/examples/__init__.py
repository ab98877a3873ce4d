"""Example material for the DAG templates: the streaming lake's tables, sample data and demo report."""
