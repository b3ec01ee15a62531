"""Atomic file output: write to a temporary sibling (a file or a whole folder), then rename into place."""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path


def default_mode(directory: bool = False) -> int:
    """The mode open() or mkdir() would give a new file or folder under the user's umask (tempfile's are 0600/0700)."""
    mask = os.umask(0)  # reading the mask means setting it: set it back at once
    os.umask(mask)
    return (0o777 if directory else 0o666) & ~mask


def write_bytes(path: Path | str, data: bytes) -> Path:
    """Write data to path atomically (temporary file in the same folder + os.replace)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f'.{path.name}.tmp-')
    try:
        os.fchmod(fd, default_mode())
        with os.fdopen(fd, 'wb') as f:
            f.write(data)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    return path


def write_text(path: Path | str, text: str) -> Path:
    """Write UTF-8 text to path atomically, with Unix line endings."""
    return write_bytes(path, text.encode('utf-8'))


def write_folder(path: Path | str, files: dict[str, bytes]) -> list[Path]:
    """Make path a folder holding exactly these files (name -> bytes), atomically: the files are written into a
    temporary sibling folder that then replaces path; returns the files' paths."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=path.parent, prefix=f'.{path.name}.tmp-'))
    tmp.chmod(default_mode(directory=True))
    old = path.with_name(f'.{path.name}.old-{os.getpid()}')
    try:
        for name, data in files.items():
            (tmp / name).write_bytes(data)
        if path.exists():
            os.replace(path, old)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)
    if old.exists():  # only once the new folder is in place
        shutil.rmtree(old)
    return [path / name for name in files]
