"""Runs in: run directories and the published records (Parquet), and published runs made again bit for bit."""
