import pytest

import agentrl as arl

# A task of its own, so that these tests do not follow the calibration of the task set.
CLAMP = arl.Task('clamp', ('a', 'b'), ('t = a + b', 'if t > 9 then t = 9', 'return t'), 1, '+', '-')


@pytest.fixture
def env():
    env = arl.BugFixEnv()
    env.reset(CLAMP)  # L1 t = a - b ; L2 if t > 9 then t = 9 ; L3 return t; fix: L1 - +
    return env


def test_test_reports_first_failing_case_and_differing_line(env):
    assert env.step('test') == arl.Step('fail a=1 b=2 L1 t = a - b', False, 0.0)


def test_valid_edit_echoes_the_new_line(env):
    assert env.step('edit L1 - *').observation == 'ok L1 t = a * b'
    assert env.step('edit L1 * +').observation == 'ok L1 t = a + b'
    assert env.step('test').observation == 'pass'


@pytest.mark.parametrize('action, answer', [
    ('', 'error empty'),
    ('   ', 'error empty'),
    ('fix it', 'error verb'),
    ('<unk>', 'error verb'),
    ('edit L1 - + now', 'error parse'),  # 5 words fit the 6-token cap
    ('edit L1 - + now please', 'error long'),
    ('edit L9 - +', 'error line'),
    ('edit L0 - +', 'error line'),
    ('edit line1 - +', 'error parse'),
    ('edit L1 -', 'error parse'),
    ('edit L1', 'error parse'),
    ('test now', 'error parse'),
    ('submit now', 'error parse'),
    ('edit L1 + -', 'error token'),  # no '+' in line 1
    ('edit L1 t a', 'error token'),  # the assigned variable is not editable
    ('edit L1 = +', 'error token'),
    ('edit L1 - a', 'error kind'),  # an operator cannot become an operand
    ('edit L1 a <', 'error kind'),
    ('edit L1 a fix', 'error kind'),
])
def test_malformed_actions_get_a_tool_message_not_an_exception(env, action, answer):
    step = env.step(action)
    assert step == arl.Step(answer, False, 0.0)
    assert env.program == CLAMP.buggy_program  # nothing changed


def test_submit_without_fix_scores_zero(env):
    assert env.step('submit') == arl.Step('', True, 0.0)


def test_turn_cap_ends_the_episode_with_reward_zero():
    env = arl.BugFixEnv(max_turns=3)
    env.reset(CLAMP)
    assert not env.step('edit L1 - +').done
    assert not env.step('test').done
    assert env.step('test') == arl.Step('', True, 0.0)  # fixed, but never submitted
    with pytest.raises(RuntimeError):
        env.step('submit')


def test_token_cap_ends_the_episode_with_reward_zero():
    env = arl.BugFixEnv(max_policy_tokens=8)
    env.reset(CLAMP)
    assert env.step('edit L1 - +').done is False  # 5 tokens with its end of turn
    assert env.token_budget == 3
    assert env.step('test') == arl.Step('pass', False, 0.0)  # 7 tokens
    step = env.step('test')  # cut at the cap of 8
    assert step == arl.Step('', True, 0.0) and env.policy_tokens == 8


def test_invalid_caps_are_rejected_with_their_values():
    with pytest.raises(ValueError, match='max_turns=0'):
        arl.BugFixEnv(max_turns=0)
