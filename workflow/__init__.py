"""The Snakemake workflow's importable half: the design (axes, cells, schema), the seed plan and its looks, and the
state a design continues from. Pure Python (PyYAML, pyarrow and agentrl's pure modules): the Snakefile, the analysis
and the tests import it; it imports neither torch, pandas nor Snakemake at import time."""
