import torch
import pytest

import agentrl as arl

TOK = arl.build_tokenizer(arl.make_tasks('all'))
TASKS = arl.make_tasks('train')


def untrained_agent(seed=0):
    torch.manual_seed(seed)
    return arl.TinyAgent(arl.TinyAgentConfig(vocab_size=len(TOK)))


def rollout(model, tasks, seed):
    return arl.rollout_batch(model, [arl.BugFixEnv() for _ in tasks], tasks, TOK,
                             generator=torch.Generator().manual_seed(seed))


def test_tokenizer_round_trips_in_vocabulary_text():
    text = ' '.join(t.prompt for t in arl.make_tasks('all')) + ' test edit L3 <= >= submit fail pass ok error long'
    assert TOK.decode(TOK.encode(text)) == text
    assert TOK.encode('frobnicate') == [TOK.unk_id]
    assert len({TOK.pad_id, TOK.bos_id, TOK.eot_id, TOK.unk_id}) == 4


def test_mismatched_envs_and_tasks_raise():
    with pytest.raises(ValueError, match='2 envs and 3 tasks'):
        arl.rollout_batch(untrained_agent(), [arl.BugFixEnv()] * 2, TASKS[:3], TOK)


def test_same_generator_same_trajectories_bit_for_bit():
    model = untrained_agent()
    first, second = rollout(model, TASKS * 2, 5), rollout(model, TASKS * 2, 5)
    assert [t.ids for t in first] == [t.ids for t in second]
    assert [t.logps for t in first] == [t.logps for t in second]
    assert [t.ids for t in rollout(model, TASKS * 2, 6)] != [t.ids for t in first]


def test_trajectories_follow_the_environment():
    trajs = rollout(untrained_agent(), TASKS, 0)
    for traj, task in zip(trajs, TASKS):
        prompt = [TOK.bos_id] + TOK.encode(task.prompt) + [TOK.eot_id]
        assert traj.ids[:len(prompt)] == prompt and not any(traj.policy[:len(prompt)])
        assert traj.task == task and 1 <= traj.turns <= 5 and len(traj.actions) == traj.turns
        assert traj.policy_tokens <= 32


def test_collate_shapes_and_masks():
    trajs = rollout(untrained_agent(), TASKS[:6], 1)
    batch = arl.collate(trajs, TOK.pad_id)
    B, T = batch['ids'].shape
    assert B == 6 and T == max(len(t.ids) for t in trajs)
    assert batch['action_mask'].shape == batch['sample_logp'].shape == (B, T - 1)
    assert batch['action_mask'].sum(-1).tolist() == [t.policy_tokens for t in trajs]
    assert (batch['sample_logp'][batch['action_mask'] == 0] == 0).all()
    assert (batch['sample_logp'][batch['action_mask'] > 0] < 0).all()


def test_trainer_log_probs_agree_with_the_sampler():
    model = untrained_agent(3)
    batch = arl.collate(rollout(model, TASKS * 3, 2), TOK.pad_id)
    with torch.no_grad():
        logp = arl.sequence_log_probs(model, batch['ids'])
    diff = ((logp - batch['sample_logp']).abs() * batch['action_mask']).max().item()
    assert diff < 1e-5


def test_kv_cache_with_ragged_appends_matches_full_forward():
    model = untrained_agent(4)
    ids = torch.randint(len(TOK), (3, 32), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        full = model(ids)  # [3, 32, V]; rows are only ever read up to position 20
        cache = arl.KVCache(model.config, 3)
        done = torch.zeros(3, dtype=torch.long)
        for counts in ([7, 3, 1], [1, 5, 12], [12, 12, 7]):  # each row appends its own number of tokens
            counts = torch.tensor(counts)
            flat = torch.cat([ids[b, done[b]:done[b] + counts[b]] for b in range(3)])
            logits = model.next_token_logits(flat, counts, cache)
            done += counts
            assert torch.allclose(logits, full[torch.arange(3), done - 1], atol=1e-5)
    assert cache.lengths.tolist() == [20, 20, 20]


def test_critic_copies_the_trunk_and_gives_values_per_state():
    model = untrained_agent()
    critic = arl.make_critic(model)
    ids = torch.randint(len(TOK), (2, 9))
    assert arl.critic_values(critic, ids).shape == (2, 8)
    assert torch.equal(critic.trunk.tok_emb.weight, model.trunk.tok_emb.weight)
    critic.trunk.tok_emb.weight.data.add_(1.0)
    assert not torch.equal(critic.trunk.tok_emb.weight, model.trunk.tok_emb.weight)


def test_rollout_stats():
    trajs = rollout(untrained_agent(), TASKS[:4], 0)
    stats = arl.rollout_stats(trajs)
    assert stats['episodes'] == 4
    assert stats['policy_tokens'] == sum(t.policy_tokens for t in trajs) / 4
    assert stats['pass_rate'] == sum(t.reward for t in trajs) / 4
