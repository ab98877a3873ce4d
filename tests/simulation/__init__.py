"""Deterministic simulation testing (DST) of the commit protocol: actors run real engine code over an in-memory
FileIO whose every operation is a scheduling point, so a seed (or a decision list) fixes the interleaving exactly."""
