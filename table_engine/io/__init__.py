"""File access: the FileIO interface and its implementations (local disk, S3 API object stores, HDFS)."""

from table_engine.io.file_io import ArrowFileIO, FileIO, FileStatus, LocalFileIO, file_io_for, normalize_path

__all__ = ["ArrowFileIO", "FileIO", "FileStatus", "LocalFileIO", "file_io_for", "normalize_path"]
