import copy
import json
import math

import pytest
import torch

import agentrl as arl
from agentrl.numerics.golden import comparable_csv, comparable_run
from agentrl.jobs.cli import main
from agentrl.learning.config import TrainConfig
from agentrl.jobs.critic_store import load_critic, save_critic
from agentrl.learning import trainer
from agentrl.learning.advantages import whiten
from agentrl.learning.losses import adam
from agentrl.learning.trainer import Learner, adapt_beta, ppo_epochs, ppo_prepare, sample_batch

SHORT = dict(iterations=2, episodes_per_iteration=16, critic_warmup_steps=5, critic_warmup_episodes_per_task=2,
             eval_episodes_per_task=2)


@pytest.mark.parametrize('field, value, message', [
    ('lam', 1.5, r'lam=1.5 is out of range; expected \[0, 1\]'),
    ('lam', -0.1, r'lam=-0.1'),
    ('gamma', 2.0, r'gamma=2.0'),
    ('epochs', 0, r'epochs=0 is out of range; expected an integer >= 1'),
    ('epochs', 2.5, r'epochs=2.5'),
    ('minibatches', 0, r'minibatches=0'),
    ('minibatches', 128, r'minibatches=128 is more than episodes_per_iteration=64'),
    ('clip_low', -0.2, r'clip_low=-0.2'),
    ('clip_high', -1.0, r'clip_high=-1.0'),
    ('value_clip', -0.05, r'value_clip=-0.05'),
    ('target_kl', -0.01, r'target_kl=-0.01'),
    ('dual_clip', 0.5, r'dual_clip=0.5 is out of range; expected > 1 or None'),
    ('lr', 0.0, r'lr=0.0'),
    ('loss_mode', 'mean', r"loss_mode='mean' is not allowed; expected one of token_mean"),
    ('early_stop', 'batch', r"early_stop='batch'"),
    ('algorithm', 'grpo', r"algorithm='grpo'"),
    ('seed', -1, r'seed=-1'),
    ('whiten_advantages', 'batch', r"whiten_advantages='batch' is not allowed; expected one of True, False, "
                                   r"'minibatch'$"),
    ('whiten_advantages', 1, r"whiten_advantages=1 is not allowed; expected one of True, False, 'minibatch'$"),
    ('whiten_advantages', None, r"whiten_advantages=None is not allowed"),
])
def test_out_of_range_config_values_name_the_field(field, value, message):
    with pytest.raises(ValueError, match=message):
        TrainConfig(**{field: value})


def test_whiten_advantages_takes_true_false_or_minibatch_and_says_so_in_one_line_otherwise():
    for level in (True, False, 'minibatch'):
        assert TrainConfig.from_dict({'whiten_advantages': level}).whiten_advantages == level
    for bad in (1, 0.0, 'Minibatch', 'batch', None, [True]):
        with pytest.raises(ValueError) as error:
            TrainConfig(whiten_advantages=bad)
        assert str(error.value) == (f"whiten_advantages={bad!r} is not allowed; expected one of True, False, "
                                    f"'minibatch'")


def test_config_is_frozen_and_round_trips():
    config = TrainConfig(lam=0.95, target_kl=0.02, value_clip=None)
    with pytest.raises(AttributeError):
        config.lam = 0.9
    assert TrainConfig.from_dict(config.to_dict()) == config
    with pytest.raises(ValueError, match='unknown config key.*lamda'):
        TrainConfig.from_dict({'lamda': 0.9})


def test_norm_mode_needs_a_norm_const():
    with pytest.raises(ValueError, match='norm_const=None'):
        TrainConfig(loss_mode='seq_mean_token_sum_norm')


def test_same_config_and_seed_give_identical_numbers(base, tok):
    first, second = (arl.train(base, tok, TrainConfig(**SHORT)) for _ in range(2))
    assert first.iterations[0]['reward'] == second.iterations[0]['reward']
    strip = lambda records: [{k: v for k, v in r.items() if not k.endswith('_s')} for r in records]
    assert strip(first.iterations) == strip(second.iterations)
    assert first.minibatches == second.minibatches
    other = arl.train(base, tok, TrainConfig(**SHORT, seed=1))
    assert strip(other.iterations) != strip(first.iterations)


def test_records_have_the_shape_the_analysis_needs(base, tok):
    result = arl.train(base, tok, TrainConfig(**SHORT, epochs=3, minibatches=2))
    assert [r['iteration'] for r in result.iterations] == [0, 1]
    assert len(result.epochs) == 2 * 3 and len(result.minibatches) == 2 * 3 * 2
    assert {'clip_frac', 'approx_kl', 'ratio_min', 'ratio_max', 'clip_frac_low', 'clip_frac_high', 'clip_frac_dual',
            'kl_k1', 'entropy', 'grad_norm', 'value_loss'} <= set(result.epochs[0])
    summary = result.summary
    assert summary['diverged'] is False and summary['gradient_steps'] == 12
    assert 0 <= summary['pass_train'] <= 1 and 0 <= summary['pass_heldout'] <= 1


def test_early_stopping_per_epoch_and_per_minibatch(base, tok):
    epoch = arl.train(base, tok, TrainConfig(**SHORT, epochs=8, target_kl=1e-6))
    assert all(r['epochs_used'] == 1 for r in epoch.iterations)  # the first epoch already passes the target
    minibatch = arl.train(base, tok, TrainConfig(**SHORT, epochs=8, target_kl=1e-6, early_stop='minibatch'))
    assert all(r['gradient_steps'] < 4 for r in minibatch.iterations)


def test_kl_penalty_beta_adapts():
    assert adapt_beta(1.0, 0.1, 0.01) == 2.0
    assert adapt_beta(1.0, 0.001, 0.01) == 0.5
    assert adapt_beta(1.0, 0.01, 0.01) == 1.0


def test_reinforce_baseline_is_a_run_of_the_same_form(base, tok):
    result = arl.train(base, tok, TrainConfig(algorithm='reinforce', lr=2e-3, **SHORT))
    assert [r['gradient_steps'] for r in result.iterations] == [1, 1]
    assert len(result.minibatches) == 2 and not result.summary['diverged']


def test_diverged_run_stops_and_is_marked(base, tok):
    result = arl.train(base, tok, TrainConfig(**{**SHORT, 'iterations': 4}, lr=1e30))
    assert result.summary['diverged'] is True
    assert result.summary['diverged_at'] == len(result.iterations) < 4
    assert 'nan' in result.summary['diverged_reason'].lower()
    assert math.isnan(result.summary['pass_train']) and math.isnan(result.summary['pass_heldout'])


def test_cli_writes_a_complete_run_directory(base, tmp_path, capsys):
    config = tmp_path / 'short.json'
    config.write_text(json.dumps(SHORT))
    out = tmp_path / 'runs' / 'short' / 'seed~3'
    main(['train', '--config', str(config), '--seed', '3', '--out', str(out)])
    meta = json.loads((out / 'run.json').read_text())
    assert meta['seed'] == 3 and meta['config']['seed'] == 3 and meta['config']['iterations'] == 2
    assert {'pass_train', 'pass_heldout', 'diverged', 'gradient_steps'} <= set(meta['summary'])
    assert {'git_commit', 'torch', 'threads', 'wall_s', 'host'} <= set(meta['provenance'])
    assert meta['provenance']['threads'] == 1
    for table in ('iterations', 'epochs', 'minibatches'):
        assert (out / f'{table}.csv').read_text().count('\n') > 1
    assert sorted(p.name for p in out.parent.iterdir()) == ['seed~3']  # no temporary left behind
    assert 'iter   2/2 | reward' in capsys.readouterr().err


def test_cli_rejects_a_bad_config_naming_the_value(tmp_path):
    config = tmp_path / 'bad.json'
    config.write_text(json.dumps({'epochs': 0}))
    with pytest.raises(SystemExit, match='epochs=0'):
        main(['train', '--config', str(config), '--seed', '0', '--out', str(tmp_path / 'run')])
    assert not (tmp_path / 'run').exists()


def test_a_saved_critic_gives_the_same_run_bit_for_bit(base, tmp_path):
    config = tmp_path / 'short.json'
    config.write_text(json.dumps(SHORT))
    critic = tmp_path / 'critics' / 'seed~3.pt'
    main(['warm-critic', '--config', str(config), '--seed', '3', '--out', str(critic)])
    assert sorted(p.name for p in critic.parent.iterdir()) == ['seed~3.pt']  # no temporary left behind
    here, loaded = tmp_path / 'here', tmp_path / 'loaded'
    main(['train', '--config', str(config), '--seed', '3', '--out', str(here)])
    main(['train', '--config', str(config), '--seed', '3', '--out', str(loaded), '--critic', str(critic)])
    assert comparable_run(here / 'run.json') == comparable_run(loaded / 'run.json')
    for table in ('iterations', 'epochs', 'minibatches'):
        assert comparable_csv(here / f'{table}.csv') == comparable_csv(loaded / f'{table}.csv'), table


@pytest.mark.parametrize('seed, changes, message', [
    (4, {}, r'seed: file 3, run 4'),
    (3, {'critic_lr': 2e-3}, r'critic_lr: file 0.001, run 0.002'),
    (3, {'critic_warmup_steps': 6}, r'critic_warmup_steps: file 5, run 6'),
])
def test_a_critic_of_another_seed_or_constants_is_refused_naming_the_difference(base, tmp_path, seed, changes,
                                                                               message):
    warmed = TrainConfig(**SHORT, seed=3)
    save_critic(arl.make_critic(base), base, warmed, tmp_path / 'critic.pt')
    with pytest.raises(ValueError, match=message):
        load_critic(tmp_path / 'critic.pt', base, TrainConfig(**{**SHORT, **changes}, seed=seed))


def test_a_critic_of_another_base_agent_or_a_corrupt_file_is_refused(base, tmp_path):
    config = TrainConfig(**SHORT)
    other = arl.TinyAgent(base.config)
    save_critic(arl.make_critic(other), other, config, tmp_path / 'critic.pt')
    with pytest.raises(ValueError, match='another base agent'):
        load_critic(tmp_path / 'critic.pt', base, config)
    (tmp_path / 'corrupt.pt').write_bytes(b'not a critic')
    with pytest.raises(ValueError, match='corrupt.pt is unusable'):
        load_critic(tmp_path / 'corrupt.pt', base, config)


def test_cli_refuses_a_critic_for_reinforce(base, tmp_path):
    config = tmp_path / 'reinforce.json'
    config.write_text(json.dumps(dict(SHORT, algorithm='reinforce')))
    with pytest.raises(SystemExit, match="algorithm='reinforce' uses no critic"):
        main(['train', '--config', str(config), '--seed', '0', '--out', str(tmp_path / 'run'),
              '--critic', str(tmp_path / 'critic.pt')])


def test_ppo_penalty_does_not_clip_and_adapts_beta(base, tok):
    """Exercise 4: with kl_penalty set the surrogate is unclipped (no token counts as clipped) and beta moves per batch."""
    result = arl.train(base, tok, TrainConfig(**SHORT, epochs=4, minibatches=4, kl_penalty=1.0, clip_high=0.01,
                                              clip_low=0.01))
    assert all(epoch['clip_frac'] == 0.0 for epoch in result.epochs)
    assert max(epoch['approx_kl'] for epoch in result.epochs) > 0.0
    betas = [it['beta'] for it in result.iterations if it.get('beta') is not None]
    assert betas[0] == 1.0 and betas[1] in (0.5, 1.0, 2.0)
    clipped = arl.train(base, tok, TrainConfig(**SHORT, epochs=4, minibatches=4, clip_high=0.01, clip_low=0.01))
    assert max(epoch['clip_frac'] for epoch in clipped.epochs) > 0.0  # the same tiny clip range binds without it


def whitening_seen_by_the_loss(base, tok, monkeypatch, level, epochs=2, minibatches=4):
    """One batch prepared and updated under whiten_advantages=level -> (its PreparedBatch, the minibatches' rows in
    update order, the (advantages, mask) that ppo_policy_loss received for each)."""
    config = TrainConfig(**SHORT, epochs=epochs, minibatches=minibatches, whiten_advantages=level)
    policy = copy.deepcopy(base)
    with torch.random.fork_rng():
        torch.manual_seed(0)
        critic = arl.make_critic(base)
    batch = sample_batch(policy, tok, config.episodes_per_iteration, torch.Generator().manual_seed(0))
    prepared = ppo_prepare(policy, critic, batch, config, tok.pad_id)
    seen, loss = [], trainer.ppo_policy_loss

    def spy(logp, old_logp, adv, mask, *rest):
        seen.append((adv, mask))
        return loss(logp, old_logp, adv, mask, *rest)

    monkeypatch.setattr(trainer, 'ppo_policy_loss', spy)
    learner = Learner(policy, critic, adam(policy.parameters(), config.lr), adam(critic.parameters(), config.critic_lr))
    ppo_epochs(learner, prepared, config, torch.Generator().manual_seed(5))
    order = torch.Generator().manual_seed(5)  # ppo_epochs draws only the shuffles from its generator
    rows = [r for _ in range(epochs) for r in torch.randperm(len(prepared.ids), generator=order).chunk(minibatches)]
    return batch, prepared, rows, seen


def test_per_minibatch_whitening_gives_each_minibatch_mean_0_std_1(base, tok, monkeypatch):
    """'minibatch' (Andrychowicz et al. 2021): not whitened per batch; each minibatch's policy-token advantages
    whitened over that minibatch just before the loss."""
    batch, prepared, rows, seen = whitening_seen_by_the_loss(base, tok, monkeypatch, 'minibatch')
    raw = arl.gae_advantages(arl.outcome_rewards(batch['rewards'], batch['action_mask']), prepared.old_values,
                             batch['action_mask'], 1.0, 1.0)[0]
    assert torch.equal(prepared.advantages, raw)  # prepared as without whitening
    assert len(seen) == len(rows) == 8
    per_batch = whiten(raw, prepared.mask)
    for (adv, mask), mb_rows in zip(seen, rows):
        on = mask > 0
        assert abs(adv[on].mean().item()) < 1e-5 and adv[on].std().item() == pytest.approx(1.0, abs=1e-4)
        assert torch.equal(adv[~on], torch.zeros_like(adv[~on]))
        assert torch.equal(mask, prepared.minibatch(mb_rows).mask)
    # whitening the whole batch leaves some minibatch off mean 0: the two levels differ
    assert max(abs(per_batch[r][prepared.mask[r] > 0].mean().item()) for r in rows) > 1e-3


@pytest.mark.parametrize('level', [True, False])
def test_true_and_false_whiten_per_batch_or_not_as_before(base, tok, monkeypatch, level):
    """True: the prepared advantages are the batch's GAE advantages whitened once over the batch's policy tokens (the
    expression of the chapter, bit for bit); False: left as they are; the loss sees each minibatch's slice unchanged."""
    batch, prepared, rows, seen = whitening_seen_by_the_loss(base, tok, monkeypatch, level)
    m = batch['action_mask']
    adv = arl.gae_advantages(arl.outcome_rewards(batch['rewards'], m), prepared.old_values, m, 1.0, 1.0)[0]
    if level:
        on = m > 0
        adv = (adv - adv[on].mean()) / (adv[on].std() + 1e-8) * m
    assert torch.equal(prepared.advantages, adv)
    assert all(torch.equal(seen_adv, prepared.minibatch(r).advantages) for (seen_adv, _), r in zip(seen, rows))


def test_a_run_with_per_minibatch_whitening_trains(base, tok):
    result = arl.train(base, tok, TrainConfig(**SHORT, whiten_advantages='minibatch'))
    assert not result.summary['diverged'] and result.summary['gradient_steps'] == 2 * 4 * 4
