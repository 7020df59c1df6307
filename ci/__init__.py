"""Results, verdicts, PR comments and the gemmwatch command line."""
