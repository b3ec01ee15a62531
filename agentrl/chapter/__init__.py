"""The chapter's experiments outside the trainer, the base agent's calibration statistics and the length buckets
the analysis shares."""
