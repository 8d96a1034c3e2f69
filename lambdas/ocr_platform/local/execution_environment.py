"""One local Lambda function and its execution environments: worker processes, their init phase and their limits.

Each execution environment is one long-lived worker process (``function_worker``) that keeps module state
between invocations and serves one invocation at a time, with a log stream of its own. A function runs up
to ``FunctionSpec.max_concurrency`` invocations at once, as Lambda scales a function out: an invocation
takes an idle environment (a warm one first), or starts a new one (its init phase) while every one is busy
and the function has concurrency left, or waits for one to become idle. A timeout or crash ends that
worker, as Lambda ends an execution environment; the next invocation that takes its place starts a fresh one.

A worker's start is Lambda's init phase (the runtime starts, the handler module is imported, engines
built at import are built), timed apart from the invocations, with Lambda's rules for an on-demand
function: the init phase has its own limit (``INIT_TIMEOUT_SECONDS``, 10 s) and does not count against
the function's timeout. An init that outlives it is ended, and Lambda tries it again as part of the first
invocation: that retried init and the handler together must then fit in the function's timeout (the
"suppressed init" of Lambda's logs). So a slow import costs a cold start, never a job's timeout, unless
it takes longer than 10 s. An execution environment has its vCPUs to itself, this machine's processes
share theirs: the init clock leaves out the time the worker waited for a CPU that other processes held
(the run-queue wait in Linux's ``/proc/<pid>/schedstat``; elsewhere the clock is wall time).

A :class:`~ocr_platform.local.faults.FaultInjector` can crash an execution environment mid-invocation or
start a handler late (past its timeout, too), the way an out-of-memory kill or a slow start fails on AWS.
"""

from __future__ import annotations

import json
import logging
import os
import queue
import signal
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from ocr_platform.local.faults import FaultInjector
from ocr_platform.local.function_specs import FunctionSpec

logger = logging.getLogger(__name__)

#: Lambda's limit on the init phase of an on-demand function (provisioned concurrency and SnapStart differ).
INIT_TIMEOUT_SECONDS = 10.0


def cpu_wait_seconds(pid: int) -> float:
    """Seconds the process's main thread was ready to run but waited for a CPU (0 where Linux does not say)."""
    try:
        return int(Path(f"/proc/{pid}/schedstat").read_text().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return 0.0


class Execution(NamedTuple):
    """How one invocation ended: the handler's JSON text or Lambda's error object, and the log stream of the
    execution environment that ran it."""

    payload: str | None
    error: dict[str, Any] | None
    log_stream: str


class ExecutionEnvironment:
    """One execution environment: a ``function_worker`` process, its init phase and the lines it answered.

    ``init_limit_seconds`` is the init phase's own limit (a watchdog ends the process when it is reached);
    ``None`` for an init retried inside an invocation, which the invocation's timeout bounds instead.
    ``log_stream`` names the environment, as Lambda gives each one a log stream of its own.
    """

    def __init__(self, spec: FunctionSpec, environment: dict[str, str], *, init_limit_seconds: float | None) -> None:
        self.name = spec.name
        self.spawned = time.monotonic()
        self.init_limit_seconds = init_limit_seconds
        version = environment.get("AWS_LAMBDA_FUNCTION_VERSION", "$LATEST")
        self.log_stream = f"{time.strftime('%Y/%m/%d')}/[{version}]{uuid.uuid4().hex}"
        self.process = subprocess.Popen(
            [sys.executable, "-m", "ocr_platform.local.function_worker"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env={**environment, "AWS_LAMBDA_LOG_STREAM_NAME": self.log_stream},
            text=True, encoding="utf-8",
            start_new_session=True,
        )
        self.answers: queue.Queue[str | None] = queue.Queue()
        self._phase = threading.Condition()
        self.init_seconds: float | None = None
        self.init_timed_out = False
        self.exited = False
        threading.Thread(target=self._read, name=f"lambda-{spec.name}-reader", daemon=True).start()
        if init_limit_seconds is not None:
            threading.Thread(target=self._enforce_init_limit, name=f"lambda-{spec.name}-init", daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            if self.init_seconds is None:  # the runtime's first line: the init phase is over
                self._init_done(json.loads(line))
                continue
            self.answers.put(line)
        self.answers.put(None)
        with self._phase:
            self.exited = True
            self._phase.notify_all()

    def _init_done(self, message: dict[str, Any]) -> None:
        with self._phase:
            self.init_seconds = time.monotonic() - self.spawned
            self._phase.notify_all()
        status = f"error ({message['init_error']})" if message.get("init_error") else "success"
        logger.info("INIT_REPORT %s Init Duration: %.2f ms (%.2f ms more waiting for a CPU) Status: %s", self.name,
                    self.init_clock() * 1000, cpu_wait_seconds(self.process.pid) * 1000, status)

    def wait_init(self, deadline: float | None = None) -> bool:
        """Waits for the init phase to end (until ``deadline``, monotonic); False if the process ended first or time ran out."""
        with self._phase:
            timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
            self._phase.wait_for(lambda: self.init_seconds is not None or self.exited, timeout)
            return self.init_seconds is not None

    def init_clock(self) -> float:
        """Seconds of init so far, less the time the worker waited for a CPU held by other processes."""
        return time.monotonic() - self.spawned - cpu_wait_seconds(self.process.pid)

    def _enforce_init_limit(self) -> None:
        assert self.init_limit_seconds is not None
        while (left := self.init_limit_seconds - self.init_clock()) > 0:
            if self.wait_init(time.monotonic() + min(left, 0.25)) or self.exited:
                return
        with self._phase:
            if self.init_seconds is not None or self.exited:
                return
            self.init_timed_out = True
        logger.warning("INIT_REPORT %s Init Duration: %.2f ms Status: timeout (the init phase's limit is %g s; "
                       "Lambda retries the init as part of the next invocation, within its timeout)",
                       self.name, self.init_clock() * 1000, self.init_limit_seconds)
        self.kill()

    @property
    def ended(self) -> bool:
        """The environment is gone, or going: its process exited or was ended at its init limit."""
        return self.init_timed_out or self.exited or self.process.poll() is not None

    def kill(self) -> None:
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.process.wait()

    def exit_description(self) -> str:
        try:
            code = self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.kill()
            code = self.process.returncode
        return f"signal: {(signal.strsignal(-code) or str(-code)).lower()}" if code < 0 else f"exit status {code}"


@dataclass(eq=False)
class _Slot:
    """A place for one execution environment of a function: the environment (``None`` until started) and
    whether an invocation holds it. An environment that ended is replaced in its slot by the next invocation."""

    environment: ExecutionEnvironment | None = None
    busy: bool = False


class LocalFunction:
    """A function's spec and its execution environments: up to ``spec.max_concurrency`` of them, one invocation each.

    An invocation takes an idle environment (a warm one first); if every one is busy and the function has
    concurrency left, a new environment is started for it (its init phase, under the same rules as the first);
    at the limit it waits for one to become idle (Lambda would throttle a synchronous invoke; the local stack
    queues it, as it did when every function ran one invocation at a time).
    """

    def __init__(self, spec: FunctionSpec, environment: dict[str, str], arn: str, faults: FaultInjector,
                 init_timeout_seconds: float = INIT_TIMEOUT_SECONDS) -> None:
        self.spec, self.environment, self.arn, self.faults = spec, environment, arn, faults
        self.init_timeout_seconds = init_timeout_seconds
        self.max_concurrency = max(1, spec.max_concurrency)
        self._pool = threading.Condition()
        self._slots: list[_Slot] = []
        self._latest: ExecutionEnvironment | None = None
        self.stopped = False

    @property
    def worker(self) -> ExecutionEnvironment | None:
        """The execution environment started last (``None`` before the first)."""
        with self._pool:
            return self._latest

    def environments(self) -> list[ExecutionEnvironment]:
        """The function's current execution environments (each slot's latest; some may have ended)."""
        with self._pool:
            return [slot.environment for slot in self._slots if slot.environment is not None]

    def prewarm(self) -> list[ExecutionEnvironment]:
        """Starts an environment in each of the function's ``max_concurrency`` slots that has none running."""
        slots = [self._acquire() for _ in range(self.max_concurrency)]
        try:
            return [self._ensure(slot) for slot in slots]
        finally:
            for slot in slots:
                self._release(slot)

    def _acquire(self) -> _Slot:
        """An idle slot (one with a live environment first), a new one while concurrency is left, or the first to free up."""
        with self._pool:
            while True:
                if self.stopped:
                    raise RuntimeError("the Lambda runtime is stopped")
                idle = [slot for slot in self._slots if not slot.busy]
                slot = next((s for s in idle if s.environment is not None and not s.environment.ended), idle[0] if idle else None)
                if slot is None and len(self._slots) < self.max_concurrency:
                    slot = _Slot()
                    self._slots.append(slot)
                if slot is not None:
                    slot.busy = True
                    return slot
                self._pool.wait()

    def _release(self, slot: _Slot) -> None:
        with self._pool:
            slot.busy = False
            self._pool.notify_all()

    def _ensure(self, slot: _Slot) -> ExecutionEnvironment:
        """The slot's environment, or a new one if it has none (or it has ended)."""
        with self._pool:
            if self.stopped:
                raise RuntimeError("the Lambda runtime is stopped")
            current = slot.environment
            if current is None or current.ended:
                # After an init timeout, Lambda runs the init again inside the invocation, on its clock.
                retried_init = current is not None and current.init_timed_out
                limit = None if retried_init else self.init_timeout_seconds
                current = slot.environment = self._latest = ExecutionEnvironment(self.spec, self.environment, init_limit_seconds=limit)
            return current

    def close(self) -> None:
        """Starts no new environment and closes each one's input: a worker exits on end of input."""
        with self._pool:
            self.stopped = True
            self._pool.notify_all()
            environments = [slot.environment for slot in self._slots if slot.environment is not None]
        for environment in environments:
            if environment.process.stdin is not None:
                try:
                    environment.process.stdin.close()
                except OSError:  # an invocation was writing to it; the worker exits all the same
                    pass

    def end_environments(self, grace_ends: float) -> None:
        """Lets each worker exit by itself until ``grace_ends`` (monotonic), then ends it."""
        for environment in self.environments():
            try:
                environment.process.wait(timeout=max(0.0, grace_ends - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
            environment.kill()

    def execute(self, event: Any, request_id: str, invoked_arn: str) -> Execution:
        """Runs one invocation in an execution environment of its own; the handler's JSON text or Lambda's error object."""
        slot = self._acquire()
        try:
            return self._run(slot, event, request_id, invoked_arn)
        finally:
            self._release(slot)

    def _run(self, slot: _Slot, event: Any, request_id: str, invoked_arn: str) -> Execution:
        timeout = float(self.spec.timeout_seconds)
        worker = self._ensure(slot)
        # The init phase under its own limit (its watchdog ends it) is not the invocation's time.
        if worker.init_limit_seconds is not None and not worker.wait_init():
            if not worker.init_timed_out:
                return Execution(None, self._exited(worker, request_id), worker.log_stream)
            worker = self._ensure(slot)
        deadline = time.monotonic() + timeout
        wall_deadline = time.time() + timeout
        try:
            if not worker.wait_init(deadline):  # an init retried inside this invocation
                if worker.exited:
                    return Execution(None, self._exited(worker, request_id), worker.log_stream)
                raise queue.Empty
            subject = json.dumps(event)
            if (delay := self.faults.take(self.spec.name, "delay", subject)) is not None:
                remaining = max(0.0, deadline - time.monotonic())
                time.sleep(min(delay.seconds, remaining))
                if delay.seconds >= remaining:  # the handler never started
                    raise queue.Empty
            request = {"request_id": request_id, "event": event, "invoked_function_arn": invoked_arn,
                       "deadline_ms": int(wall_deadline * 1000)}
            try:
                assert worker.process.stdin is not None
                worker.process.stdin.write(json.dumps(request) + "\n")
                worker.process.stdin.flush()
            except (OSError, ValueError):  # the worker is gone, or stop() closed its input
                return Execution(None, self._exited(worker, request_id), worker.log_stream)
            crash = self.faults.take(self.spec.name, "crash", subject)
            killer = threading.Timer(crash.seconds, worker.kill) if crash is not None else None
            if killer is not None:
                killer.start()
            try:
                while True:
                    line = worker.answers.get(timeout=max(0.0, deadline - time.monotonic()))
                    if line is None:
                        return Execution(None, self._exited(worker, request_id), worker.log_stream)
                    answer = json.loads(line)
                    if answer.get("request_id") == request_id:
                        return Execution(answer.get("payload"), answer.get("error"), worker.log_stream)
            finally:
                if killer is not None:
                    killer.cancel()
        except queue.Empty:
            worker.kill()
            return Execution(None, self._timed_out(request_id, timeout), worker.log_stream)

    @staticmethod
    def _timed_out(request_id: str, timeout: float) -> dict[str, Any]:
        message = f"RequestId: {request_id} Error: Task timed out after {timeout:.2f} seconds"
        return {"errorType": "Sandbox.Timedout", "errorMessage": message}

    def _exited(self, worker: ExecutionEnvironment, request_id: str) -> dict[str, Any]:
        description = worker.exit_description()
        message = f"RequestId: {request_id} Error: Runtime exited with error: {description}"
        return {"errorType": "Runtime.ExitError", "errorMessage": message}
