"""Paimon's on-disk artifacts: snapshot, schema, manifest, manifest-list, data, index, deletion-vector, tag and
changelog files, and the BinaryRow encoding (read and written through a FileIO, no table logic)."""
