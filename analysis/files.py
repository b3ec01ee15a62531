"""Atomic file output: write to a temporary sibling, then rename into place."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_bytes(path: Path | str, data: bytes) -> Path:
    """Write data to path atomically (temporary file in the same folder + os.replace)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f'.{path.name}.tmp-')
    try:
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
