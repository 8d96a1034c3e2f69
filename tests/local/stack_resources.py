"""Memory and open files of a running local stack, sampled over time, to show a soak does not leak.

The local stack is this process (the supervisor: moto, the runtimes, the event sources) and every process
it started: one worker per Lambda function and the vl-endpoint server. :class:`ResourceSampler` samples
the resident memory (RSS) and the open file descriptors of each of them every few seconds; a worker that
is replaced (after a crash or a timeout) is counted under its function's name.

>>> sampler = ResourceSampler(interval_seconds=0.05)
>>> with sampler:
...     time.sleep(0.2)
>>> usage = sampler.usage(window_seconds=0.1)
>>> usage.peak_rss_mb > 0 and "supervisor" in usage.first
True
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field

import psutil

SUPERVISOR = "supervisor"
ENDPOINT_SERVER = "endpoint server"
MIB = 1024 * 1024


@dataclass(frozen=True)
class RoleUsage:
    """Peak RSS (MiB) and peak open file descriptors of one role's processes within a window."""

    rss_mb: float
    open_files: int


@dataclass
class StackUsage:
    """What the samples show: the peak total RSS, and each role's peaks early and late in the run."""

    samples: int = 0
    window_seconds: float = 0.0
    peak_rss_mb: float = 0.0
    first: dict[str, RoleUsage] = field(default_factory=dict)
    last: dict[str, RoleUsage] = field(default_factory=dict)

    def lines(self) -> list[str]:
        minutes = self.window_seconds / 60
        heading = (
            f"stack processes, {self.samples} samples: peak RSS of all together {self.peak_rss_mb:.0f} MiB; "
            f"peak in the first {minutes:.1f} min -> in the last {minutes:.1f} min:"
        )
        rows = [heading]
        for role in sorted(set(self.first) | set(self.last)):
            early, late = self.first.get(role), self.last.get(role)
            rss = f"{early.rss_mb if early else 0:.0f} -> {late.rss_mb if late else 0:.0f} MiB"
            files = f"{early.open_files if early else 0} -> {late.open_files if late else 0} open files"
            rows.append(f"  {role}: {rss}, {files}")
        return rows


class ResourceSampler:
    """Samples RSS and open file descriptors of this process and all its descendants, by role."""

    def __init__(self, interval_seconds: float = 10.0) -> None:
        self.interval_seconds = interval_seconds
        self.samples: list[tuple[float, dict[str, tuple[float, int]]]] = []
        self._roles: dict[tuple[int, float], str] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="stack-resource-sampler", daemon=True)
        self._started = 0.0

    def __enter__(self) -> ResourceSampler:
        self._started = time.monotonic()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)
        self.sample()

    def _run(self) -> None:
        while True:
            self.sample()
            if self._stop.wait(self.interval_seconds):
                return

    def sample(self) -> None:
        supervisor = psutil.Process()
        by_role: dict[str, tuple[float, int]] = {}
        for process in [supervisor, *supervisor.children(recursive=True)]:
            try:
                with process.oneshot():
                    role = self._role(process)
                    rss, files = process.memory_info().rss / MIB, process.num_fds()
            except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
                continue
            total_rss, total_files = by_role.get(role, (0.0, 0))
            by_role[role] = (total_rss + rss, total_files + files)
        self.samples.append((time.monotonic() - self._started, by_role))

    def _role(self, process: psutil.Process) -> str:
        key = (process.pid, process.create_time())
        if key not in self._roles:
            if process.pid == os.getpid():
                role = SUPERVISOR
            elif "ocr_platform.gpu.model_server" in " ".join(process.cmdline()):
                role = ENDPOINT_SERVER
            else:
                role = process.environ().get("AWS_LAMBDA_FUNCTION_NAME") or process.name()
            self._roles[key] = role
        return self._roles[key]

    def usage(self, window_seconds: float = 300.0) -> StackUsage:
        """Peaks over all samples, and per role in the first and the last ``window_seconds`` of the run."""
        if not self.samples:
            return StackUsage()
        end = self.samples[-1][0]
        window = min(window_seconds, end / 2) if end > 0 else window_seconds

        def peaks(selected: list[dict[str, tuple[float, int]]]) -> dict[str, RoleUsage]:
            roles = {role for sample in selected for role in sample}
            return {
                role: RoleUsage(max(s.get(role, (0.0, 0))[0] for s in selected), max(s.get(role, (0.0, 0))[1] for s in selected))
                for role in roles
            }

        return StackUsage(
            samples=len(self.samples),
            window_seconds=window,
            peak_rss_mb=max(sum(rss for rss, _ in sample.values()) for _, sample in self.samples),
            first=peaks([sample for at, sample in self.samples if at <= window]),
            last=peaks([sample for at, sample in self.samples if at >= end - window]),
        )
