"""Benchmark stopping the local stack: ``down()`` in the process that started it, and ``local down`` from another.

    .venv/bin/python benchmarks/stack_stop.py               # 3 runs of each
    .venv/bin/python benchmarks/stack_stop.py --runs 5 --settle 10

Each run starts a stack with ``ocr_platform.local.supervisor.up`` (its supervisor a child of this process,
as in a test or a notebook), lets it run ``--settle`` seconds (its Lambda workers finish their init), then
stops it, one of two ways:

- in-process: ``supervisor.down(timeout=30)`` here, the process that started it and must reap it;
- other process: ``ocr-platform local down`` in a fresh process while this one still runs, as a user's
  second shell does; its time is the whole command's, interpreter start included.

A stop counts only if the supervisor has exited by then (no zombie left in-process, none running from the
other process). Before the fix of issue 18 item 4 the in-process stop took its full 30 s timeout, and the
other process's waited as long for a supervisor whose parent had not reaped it yet.

Every run has its own state directory (``OCR_LOCAL_HOME``) under a temp dir and its own free ports: a
stack the user runs, and their ``~/.aws``, are never touched. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OCR_PLATFORM = str(Path(sys.executable).parent / "ocr-platform")
TIMEOUT = 30.0


def _isolate(home: Path) -> None:
    """This process and its children: their own state directory, no AWS files of the user, models offline."""
    os.environ.update({
        "OCR_LOCAL_HOME": str(home / "local"),
        "AWS_CONFIG_FILE": str(home / "no-aws-config"),
        "AWS_SHARED_CREDENTIALS_FILE": str(home / "no-aws-credentials"),
        "OCR_MODEL_HUB": "off",
        "OCR_MODEL_CACHE_DIR": str(home / "models"),
    })
    for name in [n for n in os.environ if n.startswith("AWS_ENDPOINT_URL") or n == "AWS_PROFILE"]:
        del os.environ[name]


def _state(pid: int) -> str | None:
    """``pid``'s state letter (``Z``: a zombie), or ``None`` once it is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return None


def _one_stop(way: str, settle: float) -> tuple[float, float]:
    """Start a stack, let it settle, stop it ``way``; (start seconds, stop seconds)."""
    from ocr_platform.local import supervisor
    from ocr_platform.local.stack import LocalOptions

    started = time.perf_counter()
    info, started_now = supervisor.up(options=LocalOptions(period_seconds=0.5, visibility_timeout_seconds=2), timeout=300)
    up_seconds = time.perf_counter() - started
    assert started_now, "a stack was already running in this state directory"
    time.sleep(settle)
    stopping = time.perf_counter()
    if way == "in-process":
        assert supervisor.down(timeout=TIMEOUT)
        seconds = time.perf_counter() - stopping
        assert _state(info.pid) is None, f"the supervisor {info.pid} is still there ({_state(info.pid)})"
    else:
        command = subprocess.run([OCR_PLATFORM, "local", "down"], capture_output=True, text=True, timeout=TIMEOUT + 60)
        seconds = time.perf_counter() - stopping
        assert command.returncode == 0 and "local stack stopped" in command.stderr, command.stderr
        assert _state(info.pid) in ("Z", None), f"the supervisor {info.pid} still runs ({_state(info.pid)})"
        try:
            os.waitpid(info.pid, 0)  # this process started it: reap it
        except ChildProcessError:
            pass
    return up_seconds, seconds


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="stops of each kind (default 3)")
    parser.add_argument("--settle", type=float, default=5.0, help="seconds each stack runs before it is stopped (default 5)")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="stack-stop-") as temp:
        results: dict[str, list[float]] = {"in-process": [], "other process": []}
        ups: list[float] = []
        for run in range(args.runs):
            for way in results:
                _isolate(Path(temp) / f"{way.replace(' ', '-')}-{run}")
                up_seconds, seconds = _one_stop(way, args.settle)
                ups.append(up_seconds)
                results[way].append(seconds)
                print(f"run {run + 1} {way:<14} stop {seconds:6.2f} s   (start {up_seconds:.2f} s)", flush=True)

    load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"\nLocal stack stop, {args.runs} runs each, {args.settle:g} s after start; {os.cpu_count()} CPUs, load average {load}")
    print(f"{'stopped by':<40} {'runs (s)':<24} {'median':>7} {'max':>7}")
    for way, label in (("in-process", "down() in the process that started it"), ("other process", "ocr-platform local down (other process)")):
        times = results[way]
        print(f"{label:<40} {' '.join(f'{t:.2f}' for t in times):<24} {statistics.median(times):7.2f} {max(times):7.2f}")
    print(f"{'(start, for scale)':<40} {'':<24} {statistics.median(ups):7.2f} {max(ups):7.2f}")


if __name__ == "__main__":
    main()
