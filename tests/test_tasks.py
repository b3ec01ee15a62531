import random

import pytest

import agentrl as arl
from agentrl.world.lang import ProgramError, edit_kind, parse_line, parse_program, replace_token, run
from agentrl.chapter.calibration import tasks_fixed_by
from agentrl.world.tasks import is_valid, passes_all, random_task


def test_splits_have_the_chapters_sizes():
    train, heldout, every = arl.make_tasks('train'), arl.make_tasks('heldout'), arl.make_tasks('all')
    assert (len(train), len(heldout), len(every)) == (20, 10, 30)
    assert every == train + heldout
    assert len({t.name for t in every}) == 30


def test_unknown_split_names_the_valid_ones():
    with pytest.raises(ValueError, match=r"'dev'.*all, train, heldout"):
        arl.make_tasks('dev')


def test_task_set_is_deterministic():
    assert arl.make_tasks('all') == arl.make_tasks('all')
    assert [t.prompt for t in arl.make_tasks('all')] == [t.prompt for t in arl.make_tasks('all')]


def test_heldout_differs_from_train_in_names_and_bugs():
    train, heldout = arl.make_tasks('train'), arl.make_tasks('heldout')
    assert not {t.name for t in train} & {t.name for t in heldout}
    assert not {(t.reference, t.bug_line, t.right, t.wrong) for t in train} & \
        {(t.reference, t.bug_line, t.right, t.wrong) for t in heldout}


def test_every_training_task_has_a_repair_of_its_own():
    train = arl.make_tasks('train')
    assert len({task.fix for task in train}) == 20
    for task in train:  # played, not compared as text: no fix solves another task
        assert tasks_fixed_by(task.fix, train) == [task.name]


@pytest.mark.parametrize('split', ['train', 'heldout'])
def test_bugs_sit_in_lines_1_to_3_and_cover_every_kind(split):
    tasks = arl.make_tasks(split)
    assert {task.bug_line for task in tasks} == {1, 2, 3}
    assert {edit_kind(task.right) for task in tasks} == {'variable', 'operator', 'constant', 'comparison'}


@pytest.mark.parametrize('task', arl.make_tasks('all'), ids=lambda t: t.name)
def test_reference_passes_and_bug_fails_on_every_task(task):
    assert passes_all(task, task.reference_program)
    assert not passes_all(task, task.buggy_program)
    assert is_valid(task)
    assert (task.wrong, task.right) in task.repairs(task.buggy_program, task.bug_line - 1)


@pytest.mark.parametrize('task', arl.make_tasks('all'), ids=lambda t: t.name)
def test_the_tasks_fix_action_solves_it(task):
    env = arl.BugFixEnv()
    env.reset(task)
    assert env.step(task.fix).observation.startswith(f'ok L{task.bug_line}')
    assert env.step('test').observation == 'pass'
    assert env.step('submit') == arl.Step('', True, 1.0)


def test_interpreter_semantics():
    program = parse_program(['t = a - b', 'if t < 0 then t = 0 - t', 'return t'])
    assert run(program, ('a', 'b'), (2, 7))[0] == 5
    assert run(program, ('a', 'b'), (7, 2))[0] == 5
    value, trace = run(parse_program(['t = a * u', 'return t']), ('a',), (3,))
    assert value is None and trace == [('error', 'undefined u')]


@pytest.mark.parametrize('text', ['t = a +', 'if a < b t = 1', 'return', 'x = 1', 't = a ^ b', 't = a + b + c'])
def test_parser_rejects_malformed_lines(text):
    with pytest.raises(ProgramError):
        parse_line(text)


def test_interpreter_never_calls_python_eval():
    line = parse_line('t = a + b')
    with pytest.raises(ProgramError):
        replace_token(line, 'a', '__import__')


def test_random_tasks_are_valid_seeded_and_outside_the_task_set():
    exclude = frozenset(t.reference for t in arl.make_tasks('all'))
    first = [random_task(random.Random(3), exclude) for _ in range(1)]
    draws = [random_task(rng, exclude) for rng in [random.Random(3)] for _ in range(200)]
    assert draws[0] == first[0]
    assert all(is_valid(t) and t.reference not in exclude for t in draws)
