"""Same numbers on any x86-64 machine with AVX2: the numeric libraries' code paths, fixed before torch loads.

NUMERICS_VERSION names what the numbers of a run depend on besides its configuration and seed: the
code's arithmetic and the settings below. Bump it whenever a change moves any run's numbers, even at
float rounding; a run made under another version is never reused.

Pure Python: imports neither torch nor pandas, so the workflow can read the version cheaply.
"""
from __future__ import annotations

NUMERICS_VERSION = 2
