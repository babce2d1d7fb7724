"""`robust-mrc export`: an ``out=`` whose directory takes no new files is one line, found
before the checkpoint is read, with nothing written."""

from __future__ import annotations

import errno
import os
import tempfile

import pytest

import robust_mrc.export as export
from robust_mrc.cli.export import main


def test_an_unwritable_out_parent_is_refused_before_the_work(tmp_path, monkeypatch, capsys):
    locked = tmp_path / "locked"
    locked.mkdir()
    real = tempfile.mkstemp

    def mkstemp(*args, dir=None, **kwargs):  # a read-only directory (chmod does not stop root)
        if dir is not None and os.path.samefile(dir, locked):
            raise PermissionError(errno.EACCES, "Permission denied")
        return real(*args, dir=dir, **kwargs)

    def no_export(*args, **kwargs):
        raise AssertionError("the checkpoint was read before the output was checked")

    monkeypatch.setattr(tempfile, "mkstemp", mkstemp)
    monkeypatch.setattr(export, "export_checkpoint", no_export)
    ckpt = tmp_path / "best.ckpt"
    ckpt.write_bytes(b"not read")
    with pytest.raises(SystemExit) as done:
        main([f"ckpt={ckpt}", f"out={locked / 'model'}"])
    err = capsys.readouterr().err.strip()
    assert done.value.code == 1 and err == (
        f"Error: cannot write {locked / 'model'}: the directory {locked} is not writable (Permission denied); "
        "write elsewhere or fix its permissions"
    )
    assert not any(locked.iterdir())
