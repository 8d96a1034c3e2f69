"""The local stack's background process, and ``up`` / ``down`` / ``running_stack`` to control it.

Why a module of its own: ``ocr-platform local up`` and ``run`` start one process
(``python -m ocr_platform.local.supervisor``) that runs a ``LocalStack`` until ``local down``, and every
later command (``status``, ``submit``, ``local env``) finds it again. Finding, starting and stopping that
process goes through its state file, ``stack.json`` in the state directory: ``$OCR_LOCAL_HOME``, or
``~/.ocr-platform/local``.

>>> info, started_now = up()                                         # doctest: +SKIP
>>> running_stack() == info and down()                              # doctest: +SKIP
True
"""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import time
import urllib.request
from dataclasses import asdict
from pathlib import Path

from ocr_platform.local.stack import LocalOptions, LocalStack, StackInfo

logger = logging.getLogger(__name__)

STATE_DIR_ENV = "OCR_LOCAL_HOME"


def state_dir() -> Path:
    """Where the running stack's ``stack.json`` and ``stack.log`` are: ``$OCR_LOCAL_HOME`` or ``~/.ocr-platform/local``."""
    return Path(os.environ.get(STATE_DIR_ENV, Path.home() / ".ocr-platform" / "local"))


def _state_file() -> Path:
    return state_dir() / "stack.json"


def _alive(pid: int) -> bool:
    """Whether ``pid`` still runs. A supervisor that has exited stays a zombie until its parent reaps it,
    and a zombie still answers ``kill(pid, 0)``. One this process started (``up`` in a test, say) is reaped
    here; one another process started, and has not reaped yet (it still runs), is seen to be a zombie."""
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    try:
        reaped, _ = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:  # not our child: its parent, or init, reaps it
        return not _zombie(pid)
    return reaped == 0


def _zombie(pid: int) -> bool:
    """Whether ``pid`` has exited and waits to be reaped (Linux's ``/proc``; False where that cannot tell)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[:1] == ["Z"]  # the state follows the command name in parentheses


def running_stack() -> StackInfo | None:
    """The running local stack, if its supervisor is alive and moto answers."""
    path = _state_file()
    if not path.is_file():
        return None
    try:
        info = StackInfo(**json.loads(path.read_text()))
    except (ValueError, TypeError):
        return None
    if not _alive(info.pid):
        return None
    try:
        urllib.request.urlopen(f"{info.moto_url}/moto-api/", timeout=2).close()
    except OSError:
        return None
    return info


def up(*, timeout: float = 120.0, options: LocalOptions | None = None) -> tuple[StackInfo, bool]:
    """Start the local stack in a background process unless one runs; returns ``(info, started_now)``."""
    info = running_stack()
    if info is not None:
        return info, False
    directory = state_dir()
    directory.mkdir(parents=True, exist_ok=True)
    _state_file().unlink(missing_ok=True)
    command = [sys.executable, "-m", "ocr_platform.local.supervisor"]
    if options is not None:
        command += ["--options", json.dumps(asdict(options))]
    log = (directory / "stack.log").open("ab")
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"The local stack exited during start-up (code {process.returncode}); see {directory / 'stack.log'}.")
        info = running_stack()
        if info is not None:
            return info, True
        time.sleep(0.1)
    os.killpg(process.pid, signal.SIGTERM)
    raise TimeoutError(f"The local stack did not start within {timeout:.0f} s; see {directory / 'stack.log'}.")


def down(*, timeout: float = 30.0) -> bool:
    """Stop the running local stack and every process it started; False when none was running."""
    path = _state_file()
    if not path.is_file():
        return False
    try:
        pid = json.loads(path.read_text())["pid"]
    except (ValueError, KeyError):
        path.unlink(missing_ok=True)
        return False
    if _alive(pid):
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        if _alive(pid):
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:  # it ended just now
                pass
    path.unlink(missing_ok=True)
    return True


def main(argv: list[str] | None = None) -> None:
    """The supervisor: run the stack until SIGTERM or SIGINT, then stop everything it started."""
    import argparse

    parser = argparse.ArgumentParser(description="Run the OCR platform's local stack in the foreground.")
    parser.add_argument("--options", help="LocalOptions as JSON")
    args = parser.parse_args(argv)
    logging.basicConfig(level=os.environ.get("LOG_LEVEL", "INFO"), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    options = LocalOptions.from_dict(json.loads(args.options)) if args.options else LocalOptions()
    stack = LocalStack(options=options)
    # The handlers only note the signal: a handler runs in the main thread wherever it was interrupted, and one
    # that took a lock (``threading.Event.set``) could find it held by that very thread, inside ``Event.wait``.
    # A SIGTERM sent just as the stack came up hung a supervisor in a CI run until ``down`` killed it (its log
    # had no "Stopping" line).
    received: list[int] = []
    signal.signal(signal.SIGTERM, lambda signum, _: received.append(signum))
    signal.signal(signal.SIGINT, lambda signum, _: received.append(signum))
    info = stack.start()
    path = _state_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(asdict(info), indent=2))
    logger.info("Local stack up in %.2f s: moto %s, lambda %s, sagemaker %s", info.startup_seconds, info.moto_url, info.lambda_url, info.sagemaker_url)
    try:
        while not received:
            time.sleep(0.1)
    finally:
        logger.info("Stopping the local stack")
        stopped = time.perf_counter()
        stack.stop()
        if path.is_file() and json.loads(path.read_text()).get("pid") == os.getpid():
            path.unlink()
        logger.info("Local stack stopped in %.2f s", time.perf_counter() - stopped)


if __name__ == "__main__":
    main()
    # Stopped, with every process it started ended and its state file gone: leave without tearing the
    # interpreter down (moto's state, every module's objects), which took longer than the stop itself.
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
