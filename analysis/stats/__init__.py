"""Statistics across seeds: estimators and tests, the metrics read from runs, the cells' contrasts, the design's cells."""
