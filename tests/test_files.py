"""agentrl.files, the one atomic writer: files, folders (run directories, records) and weights, under the user's umask;
a folder rewritten in place never goes missing, and a write that fails leaves the old one whole."""
import json
import os
import stat
import threading

import pytest

from agentrl import files
from agentrl.learning.base_agent import save_atomically
from agentrl.files import write_folder, write_text
from agentrl.jobs.runio import write_run


def names(folder):
    return sorted(p.name for p in folder.iterdir())


def test_every_writer_gives_the_umasks_modes(tmp_path):
    """Files and folders get the user's umask (here 0o027: group may read), not tempfile's owner-only modes."""
    old = os.umask(0o027)
    try:
        table = write_text(tmp_path / 'tables' / 'runs.csv', 'a,b\n')
        (figure,) = write_folder(tmp_path / 'figures', {'fig.svg': b'<svg/>'})
        run = write_run(tmp_path / 'runs' / 'cell' / 'seed~0', dict(kind='train'), dict(iterations=[dict(x=1)]))
        save_atomically(dict(w=1), tmp_path / 'base_agent.pt')
    finally:
        os.umask(old)
    mode = lambda path: stat.S_IMODE(path.stat().st_mode)
    assert mode(figure.parent) == mode(run) == 0o750
    assert {mode(p) for p in (table, figure, run / 'run.json', run / 'iterations.csv', tmp_path / 'base_agent.pt')} \
        == {0o640}
    assert table.read_text() == 'a,b\n'


def test_write_folder_replaces_the_folder_whole(tmp_path):
    folder = tmp_path / 'records'
    write_folder(folder, {'a.bin': b'1', 'old.bin': b'2'})
    assert write_folder(folder, {'a.bin': b'3'}) == [folder / 'a.bin']
    assert names(folder) == ['a.bin'] and (folder / 'a.bin').read_bytes() == b'3'
    with pytest.raises(TypeError):  # fails while filling: the old folder stays, no temporary is left
        write_folder(folder, {'b.bin': b'4', 'c.bin': 'not bytes'})
    assert names(folder) == ['a.bin'] and names(tmp_path) == ['records']


def test_a_run_rewritten_in_place_never_goes_missing(tmp_path, monkeypatch):
    """Every rename the writer makes leaves the run's path in place (it is exchanged, never moved aside), and a
    reader polling the run meanwhile always finds a whole run.json, the old or the new."""
    (tmp_path / 'a').mkdir(), (tmp_path / 'b').mkdir()
    if not files.exchange(tmp_path / 'a', tmp_path / 'b'):
        pytest.skip(f'the file system of {tmp_path} cannot exchange two paths (renameat2)')
    run = tmp_path / 'runs' / 'cell' / 'seed~0'
    write_run(run, dict(version=-1), dict(iterations=[dict(x=0)]))
    missing_after = []
    real_rename = os.rename

    def rename(src, dst):
        real_rename(src, dst)
        if not run.exists():
            missing_after.append((src, dst))
    monkeypatch.setattr(files.os, 'rename', rename)

    seen, errors, done = set(), [], threading.Event()

    def read():
        while not done.is_set():
            try:
                seen.add(json.loads((run / 'run.json').read_text())['version'])
            except (OSError, ValueError) as error:
                errors.append(error)
    reader = threading.Thread(target=read)
    reader.start()
    try:
        for version in range(200):
            write_run(run, dict(version=version), dict(iterations=[dict(x=version)]))
    finally:
        done.set()
        reader.join()
    assert missing_after == [] and errors == []
    assert seen <= {-1, *range(200)} and len(seen) > 1
    assert json.loads((run / 'run.json').read_text())['version'] == 199 and names(run.parent) == ['seed~0']


def test_where_paths_cannot_be_exchanged_the_old_folder_is_moved_aside_then_deleted(tmp_path, monkeypatch):
    monkeypatch.setattr(files, '_renameat2', None)
    folder = tmp_path / 'records'
    write_folder(folder, {'a.bin': b'1'})
    write_folder(folder, {'b.bin': b'2'})
    assert names(folder) == ['b.bin'] and names(tmp_path) == ['records']


def test_a_failed_exchange_leaves_the_old_run_whole(tmp_path, monkeypatch):
    run = write_run(tmp_path / 'seed~0', dict(version=1), dict(iterations=[dict(x=1)]))

    def fail(a, b):
        raise OSError('the disk went away')
    monkeypatch.setattr(files, 'exchange', fail)
    with pytest.raises(OSError, match='went away'):
        write_run(run, dict(version=2), dict(iterations=[dict(x=2)]))
    assert json.loads((run / 'run.json').read_text())['version'] == 1
    assert names(run) == ['iterations.csv', 'run.json'] and names(tmp_path) == ['seed~0']


def test_a_manifest_finds_every_kind_of_damage_naming_the_file(tmp_path):
    folder = tmp_path / 'records'
    write_folder(folder, files.with_manifest({'runs.parquet': b'PAR1 rows PAR1', 'aggregate.json': b'{}\n'}))
    assert (folder / files.MANIFEST).read_text().splitlines()[1].endswith('  runs.parquet')  # sha256sum's format
    assert files.damage(folder) is None
    files.verify_records(folder)
    data = (folder / 'runs.parquet').read_bytes()
    (folder / 'runs.parquet').write_bytes(data[:len(data) // 2])  # truncated
    assert files.damage(folder) == (f'{folder}/runs.parquet is not the file written with SHA256SUMS (its SHA-256 '
                                    'differs)')
    (folder / 'runs.parquet').unlink()
    assert files.damage(folder).startswith(f'{folder}/runs.parquet cannot be read')
    (folder / 'runs.parquet').write_bytes(data)
    (folder / files.MANIFEST).write_text('not a manifest\n')
    assert 'SHA256SUMS cannot be read' in files.damage(folder)
    (folder / files.MANIFEST).unlink()
    with pytest.raises(files.DamagedRecords) as refused:
        files.verify_records(folder)
    message = str(refused.value)
    assert '\n' not in message and f'{folder}/SHA256SUMS cannot be read' in message
    assert f'`git checkout -- {folder}`' in message and f'--runs {tmp_path}/runs' in message
    files.verify_records(tmp_path / 'none')  # no records folder: nothing to refuse
