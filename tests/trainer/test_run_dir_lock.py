"""One training at a time in a run directory: a second one refuses in one line naming the process
that holds it, before writing anything; a lock left by a process that died does not block; DDP
processes other than rank 0 do not take it. (A finished run resumed in its directory:
``tests/jobs/test_train.py``.)"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from robust_mrc.core.errors import run_with_one_line_errors
from robust_mrc.core.files import LockHeld, exclusive_lock
from robust_mrc.jobs import train as train_job
from robust_mrc.jobs.train import train
from robust_mrc.trainer import run_dir as run_dir_module
from robust_mrc.trainer.run_dir import RUN_LOCK, RunDirBusy, hold_run_dir
from tests.helpers import make_cfg, printed_error

ROOT = Path(__file__).resolve().parents[2]
QUICK = ["model=tiny", "data.n_train=8", "data.n_val=4", "data.n_test=4", "trainer.max_epochs=1", "test_after_fit=false"]
# a child process that holds the lock of a run directory until its stdin closes
HOLDER = (
    "import sys; from robust_mrc.core.files import exclusive_lock\n"
    "with exclusive_lock(sys.argv[1], 'pid 4242 on host elsewhere, since 2026-01-01T00:00:00'):\n"
    "    print('held', flush=True); sys.stdin.read()\n"
)


@pytest.fixture
def held_by_child(tmp_path):
    """The run directory ``tmp_path / "run"`` locked by a live child process."""
    run = tmp_path / "run"
    run.mkdir()
    child = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(run / RUN_LOCK)], cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert child.stdout.readline().strip() == "held"
    yield run, child
    child.stdin.close()
    child.wait(timeout=30)


def test_a_second_training_in_a_held_run_dir_refuses_in_one_line(held_by_child, monkeypatch, capsys):
    run, child = held_by_child
    monkeypatch.setattr(train_job, "load_tokenizer", lambda *a: pytest.fail("work started in a held run directory"))
    with pytest.raises(SystemExit) as stop:
        run_with_one_line_errors(train, make_cfg(*QUICK, f"output_dir={run}"))
    assert stop.value.code == 1
    err = printed_error(capsys.readouterr().err)
    assert err.startswith(f"Error: output_dir={run} is in use by another run (pid 4242 on host elsewhere")
    assert "give another output_dir" in err
    assert not (run / "config.yaml").exists()  # nothing of the running one overwritten
    # once the holder ends (however it ends) the directory is free, the lock file left behind does not block
    child.stdin.close()
    child.wait(timeout=30)
    assert (run / RUN_LOCK).is_file()
    with hold_run_dir(run):
        assert str(os.getpid()) in (run / RUN_LOCK).read_text()


def test_the_lock_names_this_process_and_host_while_held(tmp_path):
    with hold_run_dir(tmp_path):
        with pytest.raises(RunDirBusy, match=rf"pid \d+ on host {socket.gethostname()}"):
            with hold_run_dir(tmp_path):  # a second open of the lock file conflicts like another process
                pass
    with hold_run_dir(tmp_path):  # released at exit
        pass


def test_an_error_inside_the_held_block_is_not_taken_for_a_held_lock(tmp_path):
    with pytest.raises(LockHeld, match="from the body"):
        with exclusive_lock(tmp_path / "x.lock", "me"):
            raise LockHeld(tmp_path / "other", "from the body")
    with exclusive_lock(tmp_path / "x.lock", "me"):
        pass


def test_processes_other_than_rank_zero_do_not_take_it(tmp_path, monkeypatch):
    with hold_run_dir(tmp_path):
        monkeypatch.setattr(run_dir_module, "is_global_zero", lambda: False)
        with hold_run_dir(tmp_path):  # a DDP child process: rank 0 holds it for the job
            pass
