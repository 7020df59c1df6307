"""asv suites for gemmwatch, and the timing protocol and cells they share."""
