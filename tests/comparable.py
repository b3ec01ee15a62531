"""Run outputs with the wall times left out, to compare two runs of the same design number for number."""
from agentrl.golden import comparable_csv, comparable_run  # noqa: F401 (the tests' names for them)
