"""Changes and streaming: incremental and diff reads, scan start, streaming scans, consumers, changelog API."""
