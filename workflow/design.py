"""The ablation design: the axis registry, the config schema's axis sections, the design's expansion and cell names.

One place per axis. An axis is declared once, in AXES, under its TrainConfig field name: the one name the config,
the cell names (`target_kl~0.02`), the cell files, the claims, the tables and the figures use; its values are checked by the JSON schema
fragment declared with it, from which the config schema's axis sections (`$defs/axes`, `baseline`,
`$defs/levels`) are generated. A cell is named by the axes where it differs from the baseline, so an axis
added at its baseline level renames no cell. Adding an axis touches this file, TrainConfig if the trainer
lacks the field, and the config that varies it.

Pure Python (PyYAML, jsonschema, and agentrl's pure modules): the Snakefile, the tests and `analysis` import it; it
imports neither torch nor pandas.
"""
from __future__ import annotations

import functools
import itertools
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from agentrl.learning.algorithms import ALGORITHMS, CRITIC_FIELDS, WHITENING
from agentrl.world.substrates import DEFAULT as DEFAULT_SUBSTRATE, SUBSTRATES
from workflow.faults import OneLineParser, json_types, validated, yaml_fault
from workflow.lr_scale import at_lr_scale
from workflow.plan import DEFAULT_POLICY, FIXED_SEEDS, POLICIES, DesignError, seed_plan

REPO = Path(__file__).resolve().parents[1]
SCHEMA_FILE = Path(__file__).with_name('schemas') / 'config.schema.yaml'
MERGED = ('trainer', 'baseline', 'seeds')  # a design that extends another merges these key by key where both are
# mappings; every other key replaces
PPO = ('ppo',)  # REINFORCE ignores the PPO-only axes: its cells leave them out of name and config
BASELINE = 'baseline'  # the baseline cell's name; every other cell is named by where it differs from it
# the published designs, one per substrate, the default design first (paths from the repository root)
PUBLISHED_DESIGNS = ('config/config.yaml', 'config/substrates/larger.yaml', 'config/substrates/longer.yaml')
ALWAYS_RECORDED = object()  # an axis's field that every published record holds


@dataclass(frozen=True)
class Axis:
    """One ablation axis: a TrainConfig field (its name everywhere), where it applies, its schema, what it is."""
    field: str
    algorithms: tuple[str, ...]
    schema: dict  # JSON schema of one level
    description: str = ''
    default: object = ALWAYS_RECORDED  # the value of a record without the field: TrainConfig's default when added

    def show(self, value) -> str:
        """A level as cell names, figures and tables show it: `epochs=8`, `target_kl=none`."""
        return f'{self.field}={text(value)}'


def _number(**bounds) -> dict:
    return {'type': 'number', **bounds}


def _optional_number(**bounds) -> dict:
    return {'type': ['number', 'null'], **bounds}


AXES: dict[str, Axis] = {axis.field: axis for axis in (
    Axis('algorithm', ALGORITHMS, {'enum': list(ALGORITHMS)},
         "ppo, or reinforce: Chapter 6's baseline (its cells ignore the PPO-only axes)"),
    Axis('lam', PPO, _number(minimum=0, maximum=1), 'GAE lambda'),
    Axis('epochs', PPO, {'type': 'integer', 'minimum': 1}, 'PPO epochs over each batch'),
    Axis('minibatches', PPO, {'type': 'integer', 'minimum': 1}, 'minibatches per epoch (at most episodes_per_iteration)'),
    Axis('clip_low', PPO, _number(minimum=0, maximum=1), 'the lower clip range epsilon_low (with clip_high: a symmetric '
         'clip)'),
    Axis('clip_high', PPO, _number(minimum=0), 'the upper clip range epsilon_high'),
    Axis('value_clip', PPO, _optional_number(minimum=0), "the critic's value clip; null: none"),
    Axis('target_kl', PPO, _optional_number(exclusiveMinimum=0), 'early stopping on the k3 KL estimate; null: none'),
    Axis('lr', PPO, _number(exclusiveMinimum=0), "the policy's Adam learning rate"),
    Axis('whiten_advantages', PPO, {'enum': list(WHITENING)},
         'advantages scaled to mean 0, standard deviation 1 over the policy tokens: true, of each batch (the chapter); '
         'minibatch, of each minibatch, before its loss (Andrychowicz et al. 2021); false, not scaled'),
    Axis('kl_penalty', PPO, _optional_number(exclusiveMinimum=0),
         'PPO-penalty (exercise 4): no clipping, initial beta of an adaptive KL term; null: clipped PPO'),
    Axis('substrate', ALGORITHMS, {'enum': list(SUBSTRATES)},
         'the agent and its tasks (agentrl/world/substrates.py); records made before the axis ran the default',
         default=DEFAULT_SUBSTRATE),
)}


def recorded(config: dict) -> dict:
    """A run's config as the design reads it: an axis field the record lacks (made before the axis existed) holds
    the axis's default."""
    return {**{name: axis.default for name, axis in AXES.items()
               if axis.default is not ALWAYS_RECORDED and name not in config}, **config}


# --- values: canonical JSON and canonical text ------------------------------------------------

def canonical(schema: dict, value):
    """A config value as the trainer reads it: 1 and 1.0 are the same number (float or int by the schema)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return value
    return int(value) if 'integer' in json_types(schema) else float(value)


def text(value) -> str:
    """A value as it appears in a path: none, true/false, numbers without repr noise (1.0 -> 1, 0.95 -> 0.95)."""
    if value is None:
        return 'none'
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (int, float)):
        return format(value, '.12g')
    return str(value)


# --- the config schema: the file's sections plus the axis sections generated from AXES ---------

def config_schema() -> dict:
    """The schema file with `$defs/axes`, `baseline`, `$defs/levels` and the trainer constants that are axes
    (their levels; the file gives their descriptions) generated from AXES, and the seeds' policies from
    workflow/plan.py (POLICIES)."""
    schema = yaml.safe_load(SCHEMA_FILE.read_text())
    defs = schema['$defs']
    defs['axes'] = {name: {'description': axis.description, **axis.schema} for name, axis in AXES.items()}
    constants = defs['trainer']['properties']
    constants.update({name: {'description': constants[name]['description'], **AXES[name].schema}
                      for name in constants if name in AXES})
    schema['properties']['baseline'].update(
        required=list(AXES), properties={name: {'$ref': f'#/$defs/axes/{name}'} for name in AXES})
    defs['levels']['properties'] = {
        name: {'type': 'array', 'minItems': 1, 'uniqueItems': True, 'items': {'$ref': f'#/$defs/axes/{name}'}}
        for name in AXES}
    staged = schema['properties']['seeds']['oneOf'][1]
    staged['properties']['policy']['enum'] = list(POLICIES)
    keys = list(staged)  # each policy's keys required right after the ones every policy takes: one line each, in order
    by_policy = [{'if': {'required': ['policy'], 'properties': {'policy': {'const': policy}}},
                  'then': {'required': list(taken)}} for policy, taken in POLICIES.items()]
    by_policy.append({'if': {'not': {'required': ['policy']}}, 'then': {'required': list(POLICIES[DEFAULT_POLICY])}})
    at = keys.index('required') + 1
    schema['properties']['seeds']['oneOf'][1] = {**{k: staged[k] for k in keys[:at]}, 'allOf': by_policy,
                                                 **{k: staged[k] for k in keys[at:]}}
    return schema


@functools.cache
def trainer_fields() -> dict:
    """The schema fragments of the trainer constants (`$defs/trainer` of the schema file)."""
    return yaml.safe_load(SCHEMA_FILE.read_text())['$defs']['trainer']['properties']


def field_schema(name: str) -> dict:
    """The schema fragment of one TrainConfig field the design sets: an axis's, else the trainer section's."""
    return AXES[name].schema if name in AXES else trainer_fields()[name]


# --- the design: baseline, one-factor-at-a-time sweeps, full-factorial blocks -----------------

@dataclass(frozen=True)
class Cell:
    """One trainer cell: its canonical name, its TrainConfig fields (no seed), and its axis values."""
    name: str
    values: dict
    levels: dict = field(default_factory=dict)  # axis field -> level, the axes that apply to its algorithm


def design_points(config: dict) -> list[dict]:
    """Every point of the design as axis -> value, the baseline first (duplicates included)."""
    baseline = config['baseline']
    points = [dict(baseline)]
    for name, levels in config.get('sweeps', {}).items():
        points += [{**baseline, name: level} for level in levels]
    for block in config.get('factorial', []):
        for levels in itertools.product(*block.values()):
            points.append({**baseline, **dict(zip(block, levels))})
    return points


def make_cell(point: dict, config: dict) -> Cell:
    """The cell of a design point: axes of its algorithm in AXES order, `trainer` and `algorithms` constants; named
    by cell_name."""
    algorithm = point['algorithm']
    applies = [name for name, axis in AXES.items() if algorithm in axis.algorithms and name in point]
    levels = {name: canonical(AXES[name].schema, point[name]) for name in applies}
    baseline = {name: canonical(AXES[name].schema, value) for name, value in config['baseline'].items()}
    constants = {**config.get('trainer', {}), **config.get('algorithms', {}).get(algorithm, {})}
    constants = {name: canonical(field_schema(name), value) for name, value in constants.items()}
    return Cell(cell_name(levels, baseline), dict(sorted({**constants, **levels}.items())), levels)


def cell_name(values: dict, baseline: dict) -> str:
    """A cell's name from its config values and the baseline cell's: `<field>~<value>` for each axis of its algorithm
    (registry order) where the two differ, joined by `_` (`lam~0.95`, `epochs~8_minibatches~8`); `baseline` where
    none does. Derived from the config alone, so a published run keeps its cell when names change."""
    algorithm = values.get('algorithm')
    return '_'.join(f'{name}~{text(values[name])}' for name, axis in AXES.items()
                    if algorithm in axis.algorithms and name in values and values[name] != baseline.get(name)) \
        or BASELINE


def expand_design(config: dict) -> dict[str, Cell]:
    """Cell name -> Cell, in design order, every learning rate at the design's scale (workflow/lr_scale.py); a cell
    shared by two sweeps appears once."""
    config = at_lr_scale(config)
    cells: dict[str, Cell] = {}
    for point in design_points(config):
        cell = make_cell(point, config)
        if cells.setdefault(cell.name, cell).values != cell.values:
            raise DesignError(f'two cells of the design have the name {cell.name}: '
                              f'{cells[cell.name].values} and {cell.values}')
        minibatches, episodes = cell.values.get('minibatches', 1), cell.values.get('episodes_per_iteration')
        if episodes is not None and minibatches > episodes:
            raise DesignError(f'cell {cell.name}: minibatches={minibatches} is more than episodes_per_iteration='
                              f'{episodes} (trainer or algorithms.{point["algorithm"]})')
    substrates = {recorded(cell.values)['substrate'] for cell in cells.values()}
    if len(substrates) > 1:
        raise DesignError(f'the cells of one design run on one substrate (baseline.substrate), these on '
                          f'{", ".join(sorted(substrates))}: a design file per substrate (config/substrates/)')
    return cells


def substrate_of(config: dict) -> str:
    """The substrate every run of a design trains on or experiments with: its baseline's."""
    return recorded(config['baseline'])['substrate']


def baseline_name(config: dict) -> str:
    """The name of the design's baseline cell."""
    config = at_lr_scale(config)
    return make_cell(config['baseline'], config).name


# --- what the jobs need: their time, the warmed critic they share, the design they were planned with

# One job's time, one thread: a PPO cell does (epochs + 1) passes over each batch (sampling, then the
# epochs), REINFORCE two. Measured from substrate 1's published records (their wall_s over episodes x passes, two
# runs at a time on a 2-core Intel Xeon): a median of 6.4 ms per episode and pass across its 22 cells, 17.5 ms in
# the slowest run; a job adds about 5 s to start Python, import torch and load the base agent and the critic. The
# estimate is tripled and rounded up (21 ms per episode and pass). `python -m agentrl.numerics.bench --chapter-run`
# alone on the cores gives about 3 ms.
SECONDS_PER_EPISODE_PASS, SECONDS_FIXED = 0.007, 5


def runtime_minutes(values: dict) -> int:
    """Minutes to allow one trainer run of a cell (its TrainConfig fields), at least 5; a substrate's runs take its
    run_cost times the tinyagent's."""
    passes = values['epochs'] + 1 if values['algorithm'] == 'ppo' else 2
    episodes = values['iterations'] * values['episodes_per_iteration']
    cost = SUBSTRATES[recorded(values)['substrate']].run_cost
    seconds = SECONDS_FIXED + SECONDS_PER_EPISODE_PASS * episodes * passes * cost
    return max(5, math.ceil(3 * seconds / 60))


def shared_critic(cells: dict[str, dict]) -> str:
    """The critic's constants (CRITIC_FIELDS) that the PPO cells (name -> values) share, as a cell file: one warmed
    critic per seed serves them all; a DesignError naming the cells where they differ."""
    found = {}
    for name, values in cells.items():
        if values['algorithm'] == 'ppo':
            found.setdefault(cell_json({f: values[f] for f in CRITIC_FIELDS if f in values}), name)
    if len(found) > 1:
        raise DesignError("the PPO cells must share the critic's constants (one warmed critic per seed); they differ:"
                          '\n  ' + '\n  '.join(f'{cell}: {text.strip()}' for text, cell in found.items()))
    return next(iter(found), cell_json({}))


ABSENT = object()  # a key one of two designs lacks


def design_differences(planned, seen, prefix: str = '') -> list[str]:
    """'key: planned -> seen' for every dotted key whose value differs between two configs."""
    if not (isinstance(planned, dict) and isinstance(seen, dict)):
        shown = ['(absent)' if value is ABSENT else json.dumps(value) for value in (planned, seen)]
        return [] if planned == seen else [f"{prefix or 'config'}: {shown[0]} -> {shown[1]}"]
    return [line for key in sorted(set(planned) | set(seen), key=str)
            for line in design_differences(planned.get(key, ABSENT), seen.get(key, ABSENT),
                                           f'{prefix}.{key}' if prefix else str(key))]


# --- files and the command line ---------------------------------------------------------------

def cell_json(values: dict) -> str:
    """A cell's config file: one JSON object of TrainConfig fields, keys sorted (what `agentrl train --config` reads)."""
    return json.dumps(values, sort_keys=True) + '\n'


def extend(design: dict, root: Path = REPO, seen: tuple[str, ...] = ()) -> dict:
    """A design with the design it `extends` (a file, relative to the repository root) filled in: every key the
    design does not state comes from the file it extends; trainer, baseline and seeds are merged key by key where
    both are mappings (MERGED; seeds of another policy replace them).
    Resolved again in the file extended, so designs chain; a missing file, one that is not YAML or a cycle is a
    DesignError naming it."""
    if 'extends' not in design:
        return dict(design)
    name = design['extends']
    if name in seen:
        raise DesignError(f'extends: {name} extends itself through {" -> ".join(seen)}')
    try:
        text = (root / name).read_text()
    except OSError as error:
        raise DesignError(f'extends: {name}: {error.strerror} (a design file, relative to {root})') from None
    base = extend(parsed(text, name), root, (*seen, name))
    own = {key: value for key, value in design.items() if key != 'extends'}
    return {**base, **own, **{key: merged(base.get(key), own[key]) for key in MERGED if key in own}}


def merged(base, own):
    """A key's value in a design that extends another: the two mappings merged key by key, else its own (seeds of
    another policy than the extended design's: its own, whole)."""
    if not (isinstance(base, dict) and isinstance(own, dict)):
        return own
    policy = base.get('policy', DEFAULT_POLICY)
    return {**base, **own} if own.get('policy', policy) == policy else own


def checked(design: dict, source: str) -> dict:
    """A design with what it extends filled in, validated against the generated schema (defaults filled in), as the
    Snakefile sees it; a DesignError of one line per fault, each naming the source (the design's file)."""
    try:
        return validated(extend(design), config_schema())
    except DesignError as error:
        raise DesignError('\n'.join(f'{source}: {line}' for line in str(error).splitlines())) from None


def parsed(text: str, source: str) -> dict:
    """A design file's text as a mapping ({} where it is empty); where it is not YAML, a DesignError of one line naming
    the source and the line (`config/x.yaml:7: could not parse YAML: ...`)."""
    try:
        return yaml.safe_load(text) or {}
    except yaml.YAMLError as error:
        raise DesignError(yaml_fault(source, error)) from None


def load_design(path: Path | str) -> dict:
    """A design file, checked (`checked`); one it cannot read is a DesignError of one line naming it."""
    try:
        text = Path(path).read_text()
    except OSError as error:
        raise DesignError(f'{path}: {error.strerror}') from None
    return checked(parsed(text, str(path)), str(path))


def main(argv: list[str] | None = None) -> None:
    """`python -m workflow.design cells | cell NAME | stages [--configfile F]`: the design's cells, one cell's config
    file, or its stages (seeds at each look, the most stages and run jobs)."""
    parser = OneLineParser(prog='python -m workflow.design', description=main.__doc__)
    parser.add_argument('what', choices=['cells', 'cell', 'stages'])
    parser.add_argument('name', nargs='?', help='the cell (for `cell`)')
    parser.add_argument('--configfile', default='config/config.yaml', help='the design (default: %(default)s)')
    args = parser.parse_args(argv)
    try:
        design = load_design(args.configfile)
        cells = expand_design(design)
    except DesignError as error:
        parser.error(str(error))
    try:
        plan = seed_plan(design)
    except DesignError as error:
        parser.error(f'{args.configfile}: {error}')
    if args.what == 'cells':
        print('\n'.join(cells))
    elif args.what == 'stages':
        sources = len(cells) + len(design['experiments'])
        kind = (f'budgeted design (policy {plan.policy}, batches of {plan.batch:g} and a budget of {plan.budget:g} '
                f'fixed {FIXED_SEEDS}-seed designs\' job-seconds by its cost table)' if plan.budgeted
                else 'staged design' if plan.staged else 'fixed design')
        print(f'{kind}: seeds per cell or experiment at each stage\'s look {list(plan.looks)}'
              f'{", then each its own" if plan.budgeted else ""}; at most {plan.stages} stages and '
              f'{plan.most_jobs(sources)} run jobs ({sources} cells and experiments x {plan.max_seeds} seeds)')
    elif args.name not in cells:
        parser.error(f'cell {args.name!r} is not in {args.configfile}; its cells are: {", ".join(cells)}')
    else:
        print(cell_json(cells[args.name].values), end='')


if __name__ == '__main__':
    main()
