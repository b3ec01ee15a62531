"""A copy of this checkout as a user's clone has it: the files git tracks or would track, nothing ignored."""
import shutil
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def copy_checkout(target: Path) -> Path:
    """Copy the repository's tracked and untracked, not ignored, files to target (the working tree, uncommitted edits included)."""
    listed = subprocess.run(['git', 'ls-files', '--cached', '--others', '--exclude-standard', '-z'], cwd=REPO,
                            check=True, stdout=subprocess.PIPE).stdout.decode().split('\0')
    for name in filter(None, listed):
        source = REPO / name
        if source.is_file():  # a file deleted but not yet committed is listed and absent
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    return target
