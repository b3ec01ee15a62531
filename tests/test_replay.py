"""The replay verb (analysis/ledger/replay.py): a design's stages on recorded runs, what each buys and decides, as the
workflow's looks would, and the seeds it would need that the records lack."""
import pytest
from test_analysis import ctx, runs, tree  # noqa: F401 (the synthetic runs, 7 cells and 6 experiments x 12 seeds)

from analysis.ledger.chapter import Context
from analysis.records.load import Runs
from analysis.ledger import replay as replay_module
from analysis.ledger.replay import CRITIC_S, JOB_FIXED_S, LOOK_S, replay, report
from analysis.ledger.sequential import next_stage
from workflow.plan import seed_plan
from workflow.state import JobCosts


def plan(initial: int, step: int, most: int):
    return seed_plan({'seeds': dict(initial=initial, step=step, max=most)})


@pytest.fixture(scope='module')
def every_seed(runs):  # noqa: F811
    """The synthetic runs without clip_gradients (recorded at seed 0 only): every source at every seed."""
    keep = lambda frame: frame[frame['name'] != 'clip_gradients'].reset_index(drop=True)  # noqa: E731
    kept = Runs(keep(runs.runs), runs.configs, keep(runs.summaries), {k: keep(v) for k, v in runs.tables.items()})
    return Context.build(kept), kept


def test_each_stage_buys_the_runs_its_look_asks_for_and_decides_what_the_look_decides(every_seed):
    context, recorded = every_seed
    design = plan(8, 2, 12)
    result = replay(context, recorded, design)
    stages = result.stages
    assert list(stages['stage']) == list(range(1, len(stages) + 1)) and result.missing == {}
    sources = recorded.runs['name'].nunique()
    trainer = recorded.runs.loc[recorded.runs['kind'] == 'train', 'name'].nunique()
    first = 8 * trainer * (80.0 + JOB_FIXED_S) + 8 * (sources - trainer) * JOB_FIXED_S + 8 * CRITIC_S + LOOK_S
    assert (stages.loc[0, 'runs'], stages.loc[0, 'job_seconds']) == (8 * sources, round(first, 1))
    for row in stages.itertuples():
        look = next_stage(context, design, row.stage)
        assert (row.decided, row.futile, row.open) == (len(look['decided']), len(look['futile']),
                                                       len(look['undecided']))
        if row.stage < len(stages):
            assert stages.loc[row.stage, 'runs'] == 2 * len(look['next']['sources'])
    assert result.decided == stages['decided'].sum() and 'job-seconds per decided claim' in report(result, design)
    assert (f"Job-seconds: wall seconds, as the records' runs state them plus {JOB_FIXED_S} s a job, {CRITIC_S} s a "
            f'warmed critic and {LOOK_S} s a look (no cost table: python -m workflow.costs).') in report(result, design)


def test_a_stage_that_needs_seeds_the_records_lack_stops_the_replay_naming_them(runs, every_seed):  # noqa: F811
    result = replay(Context.build(runs), runs, plan(8, 2, 12))  # clip_gradients: seed 0 only
    assert result.stages.empty and result.missing == {'clip_gradients': list(range(1, 8))}
    assert '- clip_gradients: 1, 2, 3, 4, 5, 6, 7' in report(result, plan(8, 2, 12))
    longer = replay(*every_seed, plan(8, 4, 16))  # looks at 8, 12, 16: the records end at 12 seeds
    assert len(longer.stages) == 2 and longer.stages['open'].iloc[-1] > 0  # claims still open at 12 seeds
    assert longer.missing and all(seeds == [12, 13, 14, 15] for seeds in longer.missing.values())
    assert set(longer.missing) == set(next_stage(every_seed[0], plan(8, 4, 16), 2)['next']['sources'])
    with pytest.raises(ValueError, match='a replay needs a sequential seed plan'):
        replay(*every_seed, seed_plan({'seeds': [0, 1, 2]}))


def test_with_a_cost_table_each_run_is_priced_by_its_source_and_the_report_says_so(every_seed, monkeypatch):
    context, recorded = every_seed
    trainer = set(recorded.runs.loc[recorded.runs['kind'] == 'train', 'name'])
    experiments = set(recorded.runs['name']) - trainer
    lacking = JobCosts('results/costs.csv', {'baseline': 10.0}, 2.0, 'AMD EPYC', '2026-12-06', '5')
    with pytest.raises(ValueError, match='results/costs.csv lacks epochs8, importance_weights, .*: measure it again'):
        replay(context, recorded, plan(8, 4, 12), lacking)
    costs = JobCosts('results/costs.csv', {**dict.fromkeys(trainer, 10.0), **dict.fromkeys(experiments, 3.0)}, 2.0,
                     'AMD EPYC', '2026-12-06', '5')
    done = dict(decided=[], futile=[], undecided=[], deferred=[], next={})  # a look that ends the design: one stage
    monkeypatch.setattr(replay_module, 'next_stage', lambda *_: done)
    monkeypatch.setattr(replay_module, 'sequential_ledger', lambda *_: None)
    result = replay(context, recorded, plan(8, 4, 12), costs)
    first = 8 * len(trainer) * 10.0 + 8 * len(experiments) * 3.0 + 8 * 2.0 + LOOK_S  # 8 seeds: 8 critics
    assert list(result.stages['job_seconds']) == [round(first, 1)]
    assert f'Job-seconds: CPU seconds of jobs by {costs}, and {LOOK_S} s a look.' in report(result, plan(8, 4, 12))
