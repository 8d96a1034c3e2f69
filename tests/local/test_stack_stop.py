"""A local stack stops at once, from the process that started it and from another one (issue 18, item 4).

``down`` waits for the supervisor to exit. An exited supervisor stays a zombie until its parent reaps it,
and a zombie still answers ``kill(pid, 0)``. So ``down`` in the process that started the stack (``up`` in a
test) used to wait its whole timeout for a child it never reaped, and ``ocr-platform local down`` from
another shell waited as long while that process still ran. Each test starts a small stack of its own,
in a state directory of its own on free ports, and stops it one way. How long a stop takes on this machine
is reported by ``benchmarks/stack_stop.py``; here it only has to end long before ``down``'s timeout.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from ocr_platform.local import supervisor
from ocr_platform.local.stack import LocalOptions, StackInfo

OCR_PLATFORM = str(Path(sys.executable).parent / "ocr-platform")
#: ``down``'s timeout (the CLI's too): waiting on a zombie took all of it.
TIMEOUT = 30.0


@pytest.fixture
def stack_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A state directory of this test's own (subprocesses inherit it); a stack a failed test left is stopped."""
    home = tmp_path / "local"
    monkeypatch.setenv(supervisor.STATE_DIR_ENV, str(home))
    monkeypatch.setenv("OCR_MODEL_HUB", "off")  # offline: every model from installed packages
    monkeypatch.setenv("OCR_MODEL_CACHE_DIR", str(tmp_path / "models"))
    yield home
    supervisor.down(timeout=TIMEOUT)


def _start(home: Path) -> tuple[StackInfo, list[psutil.Process]]:
    """A stack started by this process, and the processes its supervisor started (its Lambda workers)."""
    info, started = supervisor.up(options=LocalOptions(period_seconds=0.5, visibility_timeout_seconds=2), timeout=300)
    assert started and (home / "stack.json").is_file()
    workers = psutil.Process(info.pid).children(recursive=True)
    assert workers  # the Lambda functions' execution environments
    return info, workers


def _state(pid: int) -> str | None:
    """``pid``'s state letter from ``/proc`` (``Z``: exited, not reaped yet), or ``None`` once it is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except FileNotFoundError:
        return None


def _still_running(processes: list[psutil.Process]) -> list[psutil.Process]:
    running = []
    for process in processes:
        try:
            if process.is_running() and process.status() != psutil.STATUS_ZOMBIE:
                running.append(process)
        except psutil.NoSuchProcess:
            pass
    return running


def test_down_in_the_process_that_started_the_stack_stops_it_at_once(stack_home: Path) -> None:
    info, workers = _start(stack_home)

    started = time.monotonic()
    assert supervisor.down(timeout=TIMEOUT)
    seconds = time.monotonic() - started

    assert seconds < TIMEOUT / 2, f"down() took {seconds:.1f} s of its {TIMEOUT:.0f} s timeout"
    assert _state(info.pid) is None  # exited and reaped: no zombie left behind
    assert _still_running(workers) == []
    assert supervisor.running_stack() is None and not (stack_home / "stack.json").exists()
    assert not supervisor.down()  # nothing left to stop


def test_local_down_from_another_process_stops_it_at_once(stack_home: Path) -> None:
    info, workers = _start(stack_home)  # this process started it, and reaps it only when it chooses to

    started = time.monotonic()
    command = subprocess.run([OCR_PLATFORM, "local", "down"], capture_output=True, text=True, timeout=TIMEOUT + 120)
    seconds = time.monotonic() - started

    assert command.returncode == 0 and "local stack stopped" in command.stderr, command.stderr
    assert seconds < TIMEOUT / 2, f"ocr-platform local down took {seconds:.1f} s; its timeout is {TIMEOUT:.0f} s"
    assert _state(info.pid) in ("Z", None)  # exited: only this process's reaping is left
    assert _still_running(workers) == []
    assert supervisor.running_stack() is None and not (stack_home / "stack.json").exists()
    try:
        os.waitpid(info.pid, 0)  # this process's part: reap its child
    except ChildProcessError:  # reaped already (subprocess reaps the children it lost track of)
        pass
