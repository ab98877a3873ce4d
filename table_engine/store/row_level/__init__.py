"""Row-level changes: DELETE, UPDATE and MERGE INTO, as Paimon's Spark commands make them.

:mod:`.clauses` evaluates what a change does to rows (Arrow, chunk by chunk); :mod:`.support` decides which table
takes which change (one place); :mod:`.append` applies a change to an append table (deletion vectors, or the
touched files rewritten). A primary-key table takes a change as rows with row kinds (:mod:`table_engine.table
.row_level`).
"""
