"""Atomic output, the one writer of every file, folder and weights file: written under a temporary sibling name,
then renamed into place, so that a killed job leaves no partial file where a later step reads a finished one.
A folder may carry a manifest of its files' SHA-256 (SHA256SUMS, `sha256sum -c` reads it), written in the same
step, so that damage done later (a truncated or edited file) is found before anything reads it.

A folder (a run directory, the analysis' records) is replaced by exchanging it with the new one in one step
(Linux renameat2 RENAME_EXCHANGE): its path never goes missing while it is rewritten. Pure Python: agentrl,
analysis and the workflow all import it; it imports neither torch nor pandas.
"""
from __future__ import annotations

import ctypes
import errno
import hashlib
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

_AT_FDCWD, _RENAME_EXCHANGE = -100, 2  # <fcntl.h>, <linux/fs.h>
_UNSUPPORTED = {errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP}  # kernel or file system lacks it
try:
    _renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
except (OSError, AttributeError):  # not Linux, or a C library older than glibc 2.28
    _renameat2 = None


def default_mode(directory: bool = False) -> int:
    """The mode open() or mkdir() would give a new file or folder under the user's umask (tempfile's are 0600/0700)."""
    mask = os.umask(0)  # reading the mask means setting it: set it back at once
    os.umask(mask)
    return (0o777 if directory else 0o666) & ~mask


def default_cache_dir() -> Path:
    """agentrl's cache folder (base agents, built kernels, the audit's scans): AGENTRL_CACHE_DIR, else
    ~/.cache/agentrl."""
    return Path(os.environ.get('AGENTRL_CACHE_DIR', Path.home() / '.cache' / 'agentrl'))


def write_file(path: Path | str, write: Callable[[BinaryIO], object]) -> Path:
    """Make path the file that write(f) writes to the binary file object f (torch.save(obj, f), say), atomically.
    Writing through the open file, not its random name, keeps the bytes identical for identical content."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f'.{path.name}.tmp-')
    try:
        os.fchmod(fd, default_mode())
        with os.fdopen(fd, 'wb') as f:
            write(f)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    return path


def write_bytes(path: Path | str, data: bytes) -> Path:
    """Write data to path atomically."""
    return write_file(path, lambda f: f.write(data))


def write_text(path: Path | str, text: str) -> Path:
    """Write UTF-8 text to path atomically, with the line endings given."""
    return write_bytes(path, text.encode('utf-8'))


def exchange(a: Path, b: Path) -> bool:
    """Swap two existing paths in one step (renameat2 RENAME_EXCHANGE); False where the kernel, the C library or
    the file system (NFS, for one) cannot."""
    if _renameat2 is None:
        return False
    if _renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in _UNSUPPORTED:
        return False
    raise OSError(code, os.strerror(code), str(a), None, str(b))


def write_folder(path: Path | str, files: dict[str, bytes]) -> list[Path]:
    """Make path a folder holding exactly these files (name -> bytes), atomically -> the files' paths. The files
    go into a temporary sibling folder that then takes path's place; an older folder there is exchanged with it
    in one step (where the file system cannot: moved aside just before), then deleted."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    staged = Path(tempfile.mkdtemp(dir=path.parent, prefix=f'.{path.name}.tmp-'))
    aside = staged.with_name(f'{staged.name}.old')
    try:
        staged.chmod(default_mode(directory=True))
        for name, data in files.items():
            (staged / name).write_bytes(data)
        if not path.exists():
            os.rename(staged, path)
        elif not exchange(staged, path):  # exchanged: the old folder is at staged, deleted below
            os.rename(path, aside)
            os.rename(staged, path)
    finally:
        for leftover in (staged, aside):
            if leftover.exists():
                shutil.rmtree(leftover)
    return [path / name for name in files]


MANIFEST = 'SHA256SUMS'


def with_manifest(files: dict[str, bytes]) -> dict[str, bytes]:
    """files and their MANIFEST (sha256sum's format, by name), to be written as one folder with write_folder."""
    lines = ''.join(f'{hashlib.sha256(data).hexdigest()}  {name}\n' for name, data in sorted(files.items()))
    return {**files, MANIFEST: lines.encode()}


def damage(folder: Path | str) -> str | None:
    """What is wrong with a folder written with_manifest (its manifest missing or unreadable, a file missing or not
    the one written), naming the file; None where every file is as written."""
    folder = Path(folder)
    try:
        lines = (folder / MANIFEST).read_text().splitlines()
        expected = dict(reversed(line.split('  ', 1)) for line in lines)
    except (OSError, UnicodeDecodeError, ValueError) as error:
        return f'{folder / MANIFEST} cannot be read ({type(error).__name__}), so nothing in {folder} can be verified'
    for name, digest in sorted(expected.items()):
        try:
            found = hashlib.sha256((folder / name).read_bytes()).hexdigest()
        except OSError as error:
            return f'{folder / name} cannot be read ({error.strerror})'
        if found != digest:
            return f'{folder / name} is not the file written with {MANIFEST} (its SHA-256 differs)'
    return None


class DamagedRecords(ValueError):
    """A run-records folder whose files are not the ones written with it."""


def verify_records(folder: Path | str) -> None:
    """Refuse a run-records folder (analysis/records/records.py writes them) that is damaged: DamagedRecords, one line
    naming the file and the way back. A folder that does not exist holds no records and is not refused."""
    folder = Path(folder)
    found = damage(folder) if folder.exists() else None
    if found:
        results = folder.parent
        raise DamagedRecords(f'the run records are damaged: {found}. Restore the published records with '
                             f'`git checkout -- {folder}`, or rebuild them from the run directories, where they are '
                             f'present, with `python -m analysis aggregate --runs {results}/runs --experiments '
                             f'{results}/experiments --out {results}`')
