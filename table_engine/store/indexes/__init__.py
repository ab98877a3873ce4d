"""Indexes of data files: deletion vectors, and skipping data files by their file indexes at scan planning."""
