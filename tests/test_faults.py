"""What a user got wrong, one line each (workflow/faults.py): a design's schema faults naming the file, the key path,
the value and what is allowed, names the design lacks with their close matches, a design file that is not YAML
naming its line, and the faults of the design and seeds commands."""
import pytest

from workflow import design as design_verb, seeds as seeds_verb
from workflow.design import checked, config_schema, load_design
from workflow.faults import did_you_mean, not_in_design
from workflow.plan import DesignError

DEFAULT = 'config/config.yaml'
TRAINER_KEYS = ', '.join(config_schema()['$defs']['trainer']['properties'])


def faults(**design) -> list[str]:
    """The lines of the DesignError that checking this design (extending the default one) raises, as from x.yaml."""
    with pytest.raises(DesignError) as raised:
        checked(dict(extends=DEFAULT, **design), 'x.yaml')
    return str(raised.value).splitlines()


@pytest.mark.parametrize('design, lines', [
    (dict(seeds=dict(initial=10, step=5, max=-5)), ['x.yaml: seeds.max = -5: at least 2']),  # the mapping's branch
    (dict(seeds=[0, 1, 1]), ['x.yaml: seeds = [0, 1, 1]: each item once']),  # the list's branch
    (dict(seeds=[]), ['x.yaml: seeds = []: at least 1 item']),
    (dict(seeds=3), ['x.yaml: seeds = 3: a list or a mapping']),  # neither branch's type
    (dict(baseline=dict(lamda=0.5)), ['x.yaml: baseline.lamda: unknown key; did you mean lam?']),
    (dict(baseline=dict(epoch=2)), ['x.yaml: baseline.epoch: unknown key; did you mean epochs?']),
    (dict(trainer=dict(epoch=2)), [f'x.yaml: trainer.epoch: unknown key; the keys are: {TRAINER_KEYS}']),
    (dict(sweep=dict(lam=[0.5])), ['x.yaml: sweep: unknown key; did you mean sweeps or seeds?']),
    (dict(algorithms=dict(reinforc=dict(lr=2))), ['x.yaml: algorithms.reinforc: unknown key; did you mean reinforce?']),
    (dict(sweeps=dict(epochs=['four'])), ['x.yaml: sweeps.epochs[0] = "four": an integer']),
    (dict(baseline=dict(target_kl='x')), ['x.yaml: baseline.target_kl = "x": a number or null']),
    (dict(trainer=dict(early_stop='epochs')),
     ['x.yaml: trainer.early_stop = "epochs": one of epoch, minibatch; did you mean epoch?']),
    (dict(sweeps=dict(lam=[0.5, 2])), ['x.yaml: sweeps.lam[1] = 2: at most 1']),
    (dict(sweeps=dict(target_kl=[0])), ['x.yaml: sweeps.target_kl[0] = 0: more than 0']),
    (dict(factorial=[dict(lam=[0.5])]), ['x.yaml: factorial[0] = {"lam": [0.5]}: at least 2 keys']),
    (dict(results_dir=''), ['x.yaml: results_dir = "": at least 1 character']),
])
def test_a_fault_is_one_line_naming_the_file_the_key_the_value_and_what_is_allowed(design, lines):
    assert faults(**design) == lines


def test_every_fault_has_its_line_in_the_schemas_order():
    assert faults(seeds=dict(initial=1, step=0, max=40), baseline=dict(lamda=0.5, algorithm='ppo2')) == [
        'x.yaml: seeds.initial = 1: at least 2',
        'x.yaml: seeds.step = 0: at least 1',
        'x.yaml: baseline.lamda: unknown key; did you mean lam?',
        'x.yaml: baseline.algorithm = "ppo2": one of ppo, reinforce; did you mean ppo?',
    ]


def test_a_design_that_extends_none_names_every_key_it_lacks():
    with pytest.raises(DesignError) as raised:
        checked(dict(seeds=dict(max=-5), trainer=dict(iterations=2, episodes_per_iteration=4),
                     baseline=dict(algorithm='ppo')), 'x.yaml')
    lines = str(raised.value).splitlines()
    assert lines[:3] == ['x.yaml: seeds.initial: missing (a required key)', 'x.yaml: seeds.step: missing (a required key)',
                         'x.yaml: seeds.max = -5: at least 2']
    assert lines[3:5] == ['x.yaml: baseline.lam: missing (a required key)',
                          'x.yaml: baseline.epochs: missing (a required key)']


def test_a_missing_design_to_extend_names_the_file_that_extends_it():
    with pytest.raises(DesignError, match=r'^x.yaml: extends: none.yaml: No such file or directory'):
        checked(dict(extends='none.yaml'), 'x.yaml')


def test_a_valid_design_comes_back_with_the_schemas_defaults():
    design = checked(dict(extends=DEFAULT, experiments=['surrogate']), 'x.yaml')
    assert design['experiments'] == ['surrogate'] and design['results_dir'] == 'results' and 'extends' not in design


def test_a_name_the_design_lacks_is_named_with_the_close_ones_or_with_all():
    cells = ['baseline', 'lam~0.95', 'lam~0.9', 'epochs~8']
    assert not_in_design('cell', 'lam~0.59', cells) == 'cell lam~0.59 is not in this design; did you mean lam~0.9 or lam~0.95?'
    assert not_in_design('experiment', 'x', ['surrogate', 'staleness']) == (
        'experiment x is not in this design; it has: surrogate, staleness')
    assert did_you_mean('lamda', ['lr', 'lam', 'lambda']) == '; did you mean lambda or lam?'  # the closest first
    assert did_you_mean('abcde', ['abcxx', 'abcdx', 'abcde']) == '; did you mean abcde, abcdx or abcxx?'
    assert did_you_mean('zzz', ['epochs']) == ''


NOT_YAML = 'extends: config/config.yaml\nseeds: [0, 1\nresults_dir: results/x\n'  # the list is not closed
NOT_YAML_LINE = "3: could not parse YAML: expected ',' or ']', but got ':' (while parsing a flow sequence, line 2)"


def test_a_design_that_is_not_yaml_is_one_line_naming_its_file_and_line(tmp_path):
    bad = tmp_path / 'bad.yaml'
    bad.write_text(NOT_YAML)
    with pytest.raises(DesignError) as raised:
        load_design(bad)
    assert str(raised.value) == f'{bad}:{NOT_YAML_LINE}'
    with pytest.raises(DesignError) as raised:  # through extends: the design's file, then the one it extends
        checked(dict(extends=str(bad)), 'x.yaml')
    assert str(raised.value) == f'x.yaml: {bad}:{NOT_YAML_LINE}'
    with pytest.raises(DesignError) as raised:
        load_design(tmp_path / 'none.yaml')
    assert str(raised.value) == f'{tmp_path / "none.yaml"}: No such file or directory'


def refusal(capsys, main, argv: list[str]) -> str:
    """All that a command's main(argv) writes as it stops (exit status 2): stdout and stderr, together."""
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    assert stopped.value.code == 2
    out, err = capsys.readouterr()
    return out + err


@pytest.mark.parametrize('argv, line', [
    (['stages', '--configfile', '{bad}'], '{bad}:' + NOT_YAML_LINE),
    (['cells', '--configfile', '{none}'], '{none}: No such file or directory'),
    (['cell', 'lam~0.59'], "cell 'lam~0.59' is not in config/config.yaml; its cells are: "),
    (['stage'], "argument what: invalid choice: 'stage' (choose from 'cells', 'cell', 'stages')"),
])
def test_the_design_command_stops_in_one_line(tmp_path, capsys, argv, line):
    """`python -m workflow.design`: a design that cannot be read, a cell it lacks, a bad argument: one line each."""
    (tmp_path / 'bad.yaml').write_text(NOT_YAML)
    paths = dict(bad=tmp_path / 'bad.yaml', none=tmp_path / 'none.yaml')
    said = refusal(capsys, design_verb.main, [arg.format(**paths) for arg in argv])
    assert said.startswith(f'python -m workflow.design: error: {line.format(**paths)}') and said.count('\n') == 1


@pytest.mark.parametrize('argv, line', [
    ([], 'the following arguments are required: name, count'),
    (['lam~0.5', '60'], 'cell or experiment lam~0.5 is not in this design; did you mean lam~0.95, lam~0.9 or '
                        'lr~0.0005?'),
    (['baseline', 'sixty'], "argument count: invalid int value: 'sixty'"),
    (['baseline', '60', '--configfile', '{bad}'], '{bad}:' + NOT_YAML_LINE),
    (['baseline', '60', '--configfile', '{none}'], '{none}: No such file or directory'),
])
def test_the_seeds_command_stops_in_one_line(tmp_path, capsys, argv, line):
    """`python -m workflow.seeds`: a missing or bad argument, an unknown cell, a design that cannot be read."""
    (tmp_path / 'bad.yaml').write_text(NOT_YAML)
    paths = dict(bad=tmp_path / 'bad.yaml', none=tmp_path / 'none.yaml')
    said = refusal(capsys, seeds_verb.main, [arg.format(**paths) for arg in argv])
    assert said == f'python -m workflow.seeds: error: {line.format(**paths)}\n'
