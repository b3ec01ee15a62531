"""config/README.md, generated from the config schema (workflow.design.config_schema): every key of a design, what it
means, what it allows and its default. `python -m workflow.config_docs` writes it; tests/test_config_docs.py checks
that the file is current, so a key added to the schema without a description, or the file left stale, fails."""
from __future__ import annotations

import argparse
from pathlib import Path

from agentrl.files import write_text
from workflow.design import AXES, config_schema, json_types, text

README = Path(__file__).resolve().parents[1] / 'config' / 'README.md'

INTRO = """\
# Configuring the workflow

A design is one YAML file: `config/config.yaml` (the full ablation, the default) or `config/test.yaml` (the test
design, a few minutes on two cores), or your own, given with `--configfile FILE`:

```bash
snakemake --profile workflow/profiles/default --cores 2 --configfile config/test.yaml
python -m workflow.design cells --configfile FILE      # the design's cells, by name
python -m workflow.design stages --configfile FILE     # its stages: seeds at each stage, the most run jobs
```

The file is validated against `workflow/schemas/config.schema.yaml` before any job runs; every mapping rejects a key
it does not know, and each fault stops the workflow in one line naming the key, the value and what is allowed. An ablation axis is declared once, in `workflow/design.py` (`AXES`), which generates the schema's
axis sections. A cell is named by the axes where it differs from the baseline (`lam~0.95`, `epochs~8_minibatches~8`);
its config file holds the TrainConfig fields (`agentrl/learning/config.py`) the design sets, and every other field takes
TrainConfig's default (the chapter's).

This file is generated from the schema by `python -m workflow.config_docs`; edit the schema, not this file.
"""


def allowed(fragment: dict, defs: dict) -> str:
    """A schema fragment in words: `integer >= 1`, `number or null, > 0`, `one of epoch, minibatch`."""
    if '$ref' in fragment:
        return allowed(defs[fragment['$ref'].split('/')[-1]], defs)
    if 'enum' in fragment:
        return 'one of ' + ', '.join(text(value) for value in fragment['enum'])
    if 'oneOf' in fragment:
        return '; or '.join(allowed(option, defs) for option in fragment['oneOf'])
    kinds = sorted(json_types(fragment), key=lambda kind: kind == 'null')
    words = ' or '.join({'array': 'a list', 'object': 'a mapping'}.get(kind, kind) for kind in kinds)
    if 'items' in fragment:
        words += f' of ({allowed(fragment["items"], defs)})'
    if 'properties' in fragment and 'object' in kinds:
        words += ' {' + ', '.join(fragment['properties']) + '}'
    bounds = [f'{sign} {text(fragment[key])}' for key, sign in (
        ('minimum', '>='), ('exclusiveMinimum', '>'), ('maximum', '<='), ('exclusiveMaximum', '<')) if key in fragment]
    return ', '.join([words or 'any', *bounds])


def described(key: str, fragment: dict) -> str:
    """The fragment's description on one line; a key without one is an error naming it."""
    if not fragment.get('description'):
        raise ValueError(f'config key `{key}` has no description in workflow/schemas/config.schema.yaml')
    return ' '.join(fragment['description'].split())


def table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> str:
    """A Markdown table; `|` inside a cell escaped."""
    lines = [header, tuple('---' for _ in header), *rows]
    return '\n'.join('| ' + ' | '.join(cell.replace('|', '\\|') for cell in line) + ' |' for line in lines) + '\n'


def top_level_rows(schema: dict) -> list[tuple[str, ...]]:
    """One row per top-level key and per key of the staged `seeds` mapping (its policy says which it takes)."""
    defs, rows = schema['$defs'], []
    for key, fragment in schema['properties'].items():
        required = 'required' if key in schema['required'] else text(fragment.get('default', ''))
        rows.append((f'`{key}`', described(key, fragment), allowed(fragment, defs), required))
        for option in fragment.get('oneOf', []):
            rows += [(f'`{key}.{name}`', described(f'{key}.{name}', part), allowed(part, defs),
                      'required' if name in option.get('required', ()) else '')
                     for name, part in option.get('properties', {}).items()]
    return rows


def render() -> str:
    """config/README.md's text."""
    schema = config_schema()
    defs = schema['$defs']
    trainer = [(f'`{name}`', described(f'trainer.{name}', fragment), allowed(fragment, defs))
               for name, fragment in defs['trainer']['properties'].items()]
    axes = [(f'`{name}`', described(f'baseline.{name}', defs['axes'][name]), allowed(axis.schema, defs),
             ', '.join(axis.algorithms), f'`{name}~`') for name, axis in AXES.items()]
    return '\n'.join([
        INTRO,
        '## Top-level keys\n',
        table(('key', 'what it sets', 'allowed', 'default'), top_level_rows(schema)),
        '## Trainer constants: `trainer.<key>` and `algorithms.<algorithm>.<key>`\n',
        'Absent, a constant takes TrainConfig\'s default (`agentrl/learning/config.py`). `trainer` requires `iterations` and '
        '`episodes_per_iteration`: a design states its run length.\n',
        table(('key', 'what it sets', 'allowed'), trainer),
        '## Ablation axes: `baseline.<axis>`, `sweeps.<axis>`, `factorial[].<axis>`\n',
        '`baseline` gives every axis a level; `sweeps` gives an axis a list of levels, one cell each, the other axes '
        'at the baseline; a `factorial` block crosses the levels of two or more axes. An axis applies to the '
        'algorithms named: the cells of another algorithm leave it out of their name and config.\n',
        table(('axis', 'what it sets', 'a level', 'applies to', 'in a cell\'s name'), axes),
    ])


def main(argv: list[str] | None = None) -> None:
    """`python -m workflow.config_docs [--out FILE]`: write config/README.md (or FILE) from the schema."""
    parser = argparse.ArgumentParser(prog='python -m workflow.config_docs', description=main.__doc__)
    parser.add_argument('--out', type=Path, default=README, help='where to write it (default: %(default)s)')
    write_text(parser.parse_args(argv).out, render())


if __name__ == '__main__':
    main()
