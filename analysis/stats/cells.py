"""Trainer cells by configuration: the baseline, the ablation axes and factorial blocks (by the design's axis
registry), and a cell picked by its config values."""
from __future__ import annotations

import itertools
import math

from workflow.design import AXES


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


def varied(config: dict, reference: dict) -> list[str]:
    """The axes (registry order) in which config differs from reference, among those of config's algorithm: other
    fields (REINFORCE's run length, its learning rate) are its algorithm's constants, not levels."""
    diff = set(differences(config, reference))
    algorithm = config.get('algorithm')
    return [name for name, axis in AXES.items() if name in diff and (algorithm is None or algorithm in axis.algorithms)]


def axes(configs: dict[str, dict], baseline: str | None) -> dict[str, list[str]]:
    """Ablation axes: field -> cells that vary that axis only from the baseline, by value."""
    out: dict[str, list[str]] = {}
    if baseline not in configs:
        return out
    for cell, config in sorted(configs.items()):
        diff = varied(config, configs[baseline])
        if len(diff) == 1:
            out.setdefault(diff[0], []).append(cell)
    return {axis: sorted(cells, key=lambda c: (order(configs[c].get(axis)), c)) for axis, cells in sorted(out.items())}


def block_name(fields: tuple[str, ...]) -> str:
    """A factorial block as tables and figure files name it: `epochs_x_minibatches`."""
    return '_x_'.join(fields)


def blocks(configs: dict[str, dict], baseline: str | None) -> dict[tuple[str, ...], list[str]]:
    """Factorial blocks: the axes some cells vary together -> the block's cells but the baseline (those varying only
    these axes, at levels the block's cells take), by level."""
    if baseline not in configs:
        return {}
    reference = configs[baseline]
    fields = {cell: tuple(varied(config, reference)) for cell, config in configs.items()}
    together = {f for f in fields.values() if len(f) > 1}
    out = {}
    for block in sorted(f for f in together if not any(set(f) < set(g) for g in together)):
        members = [c for c, f in fields.items() if len(f) > 1 and set(f) <= set(block)]
        levels = {name: [reference[name]] + [configs[c][name] for c in members] for name in block}
        cells = [c for c, f in fields.items() if f and set(f) <= set(block)
                 and all(any(same(configs[c][name], v) for v in levels[name]) for name in block)]
        out[block] = sorted(cells, key=lambda c: (tuple(order(configs[c][name]) for name in block), c))
    return out


def interaction(configs: dict[str, dict], cell: str, baseline: str) -> list[tuple[str | None, int]]:
    """The terms of a factorial cell's interaction contrast: (cell, weight) for each subset T of the axes S it
    varies, the cell at its levels on T and the baseline's elsewhere, weight (-1)^(|S| - |T|) (for two axes
    y(a, b) - y(a, 0) - y(0, b) + y(0, 0)); None for a term the design lacks."""
    config, reference = configs[cell], configs[baseline]
    axes_varied = varied(config, reference)
    terms = []
    for k in range(len(axes_varied), -1, -1):
        for subset in itertools.combinations(axes_varied, k):
            found = select(configs, {name: config[name] for name in subset}, baseline)
            exact = found is not None and varied(configs[found], reference) == list(subset)
            terms.append((found if exact else None, (-1) ** (len(axes_varied) - k)))
    return terms


def select(configs: dict[str, dict], values: dict, baseline: str | None) -> str | None:
    """The cell holding values that differs least from the baseline (ties by name); {} is the baseline."""
    if not values:
        return baseline if baseline in configs else None
    reference = configs.get(baseline)
    found = sorted((len(differences(config, reference)) if reference else 0, cell)
                   for cell, config in configs.items() if matches(config, values))
    return found[0][1] if found else None
