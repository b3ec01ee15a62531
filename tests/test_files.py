"""analysis.files: atomic writes that leave the user's umask in force (group-readable results on a shared file system)."""
import os
import stat

from analysis.files import write_folder, write_text


def test_written_files_and_folders_have_the_umasks_modes(tmp_path):
    old = os.umask(0o027)
    try:
        table = write_text(tmp_path / 'tables' / 'runs.csv', 'a,b\n')
        (figure,) = write_folder(tmp_path / 'figures', {'fig.svg': b'<svg/>'})
    finally:
        os.umask(old)
    mode = lambda path: stat.S_IMODE(path.stat().st_mode)
    assert (mode(table), mode(figure), mode(figure.parent)) == (0o640, 0o640, 0o750)
    assert table.read_text() == 'a,b\n'
