"""The chapter's own listing, run unchanged against agentrl, where ../shared/ has it."""
import contextlib
import io
import re
from pathlib import Path

import pytest
import torch

LISTING = Path(__file__).resolve().parents[2] / 'shared' / 'chapter08' / 'chapter08_listing.py'
pytestmark = pytest.mark.skipif(not LISTING.exists(), reason=f'the chapter listing is not at {LISTING} '
                                                              '(only the project workspace has ../shared/)')


def listing_blocks() -> dict[int, str]:
    """The listing's code by block number, split at its `# %% block N` markers."""
    parts = re.split(r'^# %% block (\d+).*$', LISTING.read_text(), flags=re.M)
    return {int(number): code for number, code in zip(parts[1::2], parts[2::2])}


def run_blocks(numbers, namespace):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        for number in numbers:
            exec(compile(listing_blocks()[number], f'{LISTING.name} block {number}', 'exec'), namespace)
    return out.getvalue()


@pytest.fixture(scope='module')
def chapter():
    torch.set_num_threads(1)
    namespace = {'__name__': 'chapter08_listing'}
    run_blocks([0, 1, 2], namespace)
    return namespace


def test_old_batch_has_the_chapters_shape(chapter):
    batch = chapter['old_batch']
    assert batch['ids'].shape[0] == 320
    assert chapter['old_logp'].shape == batch['action_mask'].shape == (320, batch['ids'].shape[1] - 1)


def test_block_20_first_line_trainer_and_sampler_agree(chapter):
    first_line = '\n'.join(listing_blocks()[20].strip().splitlines()[:2])  # the diff and its print
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        exec(first_line, dict(chapter))
    printed = buffer.getvalue()
    diff = float(re.search(r'policy tokens: (\S+)', printed).group(1))
    assert diff < 1e-5, printed


def test_blocks_3_to_5_run_and_print_their_tables(chapter):
    printed = run_blocks([3, 4, 5], dict(chapter)).splitlines()
    assert printed[0].startswith(' k | sd log w')
    rows = [line.split('|') for line in printed[1:6]]
    assert [int(r[0]) for r in rows] == [0, 1, 3, 10, 30]
    assert float(rows[0][3]) == pytest.approx(1.0)  # ESS / N at k = 0
    assert float(rows[4][3]) < float(rows[0][3])  # ESS / N falls as the policy moves
    assert sum(int(re.search(r'(\d+) episodes', line).group(1)) for line in printed[6:9]) == 320
    assert [line.split(':')[0] for line in printed[9:12]] == ['k =  1', 'k =  3', 'k = 10']


def test_library_trainer_matches_the_listings_run_ppo(chapter):
    from agentrl import TrainConfig, train
    namespace = dict(chapter)
    run_blocks([6, 10, 11, 12, 13, 14], namespace)
    _, history = namespace['run_ppo'](1.0, iters=2)
    result = train(namespace['base'], namespace['tok'], TrainConfig(iterations=2))
    assert [h['reward'] for h in history] == [r['reward'] for r in result.iterations]
    assert [h['ev'] for h in history] == pytest.approx([r['ev'] for r in result.iterations], abs=1e-6)
    ours = [e for e in result.epochs]
    theirs = [e for h in history for e in h['per_epoch']]
    assert len(ours) == len(theirs) == 8
    for mine, chapters in zip(ours, theirs):
        for key in ('clip_frac', 'approx_kl', 'ratio_min', 'ratio_max'):
            assert mine[key] == pytest.approx(chapters[key], rel=1e-4, abs=1e-6), key
