"""Trainer cells by configuration: the baseline, the ablation axes, and a cell picked by its config values."""
from __future__ import annotations

import math


def same(a, b) -> bool:
    """Config values equal (numbers up to float rounding; bools and None only equal themselves)."""
    numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (a, b))
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12) if numbers else a == b


def differences(config: dict, reference: dict) -> list[str]:
    """Fields (sorted) in which config differs from reference; a field missing on one side differs."""
    return sorted(k for k in set(config) | set(reference)
                  if k not in config or k not in reference or not same(config[k], reference[k]))


def matches(config: dict, values: dict) -> bool:
    """Whether config holds every field of values with the same value."""
    return all(k in config and same(config[k], v) for k, v in values.items())


def find_baseline(configs: dict[str, dict], name: str = 'baseline', defaults: dict | None = None) -> str | None:
    """The cell named name; without one, the first cell (by name) whose config holds the chapter defaults."""
    if name in configs:
        return name
    found = [cell for cell, config in sorted(configs.items()) if defaults and matches(config, defaults)]
    return found[0] if found else None


def order(value) -> tuple:
    """A sort key over config values of mixed types: None, then numbers, then the rest as text."""
    if value is None:
        return (0, 0.0, '')
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return (1, float(value), '')
    return (2, 0.0, str(value))


def axes(configs: dict[str, dict], baseline: str | None) -> dict[str, list[str]]:
    """Ablation axes: field -> cells whose config differs from the baseline's in that field only, by value."""
    out: dict[str, list[str]] = {}
    if baseline not in configs:
        return out
    for cell, config in sorted(configs.items()):
        diff = differences(config, configs[baseline])
        if len(diff) == 1:
            out.setdefault(diff[0], []).append(cell)
    return {axis: sorted(cells, key=lambda c: (order(configs[c].get(axis)), c)) for axis, cells in sorted(out.items())}


def select(configs: dict[str, dict], values: dict, baseline: str | None) -> str | None:
    """The cell holding values that differs least from the baseline (ties by name); {} is the baseline."""
    if not values:
        return baseline if baseline in configs else None
    reference = configs.get(baseline)
    found = sorted((len(differences(config, reference)) if reference else 0, cell)
                   for cell, config in configs.items() if matches(config, values))
    return found[0][1] if found else None
