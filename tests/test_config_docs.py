"""config/README.md documents every key of a design: generated from the schema (workflow/config_docs.py), current."""
from pathlib import Path

import pytest
import yaml

from agentrl.learning.algorithms import ALGORITHMS
from workflow.config_docs import README, described, main, render

REPO = Path(__file__).resolve().parents[1]
DESIGNS = sorted((REPO / 'config').glob('*.yaml'))


def key_paths(value, path=()):
    """Every key path of a design (factorial blocks' axes too), an algorithm's name under `algorithms` left out."""
    if isinstance(value, list):
        for item in value:
            yield from key_paths(item, path)
    elif isinstance(value, dict):
        for key, item in value.items():
            if not (path == ('algorithms',) and key in ALGORITHMS):
                yield (*path, key)
            yield from key_paths(item, (*path, key))


def test_the_readme_is_the_one_the_schema_generates(tmp_path):
    main(['--out', str(tmp_path / 'README.md')])
    assert (tmp_path / 'README.md').read_text() == render()
    assert README.read_text() == render(), 'config/README.md is stale: run `python -m workflow.config_docs`'


@pytest.mark.parametrize('design', DESIGNS, ids=lambda path: path.name)
def test_every_key_of_a_design_is_documented(design):
    readme = README.read_text()
    paths = list(key_paths(yaml.safe_load(design.read_text())))
    assert ('trainer', 'iterations') in paths and (('baseline', 'lam') in paths or ('extends',) in paths)
    undocumented = ['.'.join(path) for path in paths if f'`{path[-1]}`' not in readme and f'`{".".join(path)}`'
                    not in readme]
    assert not undocumented, f'config/README.md does not name {undocumented}'


def test_a_key_without_a_description_stops_the_generation():
    with pytest.raises(ValueError, match='`trainer.new_field` has no description'):
        described('trainer.new_field', {'type': 'number'})
