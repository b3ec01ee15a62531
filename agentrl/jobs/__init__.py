"""What a workflow job calls and writes: the command line, the run directory, the warmed critics."""
