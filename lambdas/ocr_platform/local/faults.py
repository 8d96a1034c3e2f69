"""Faults the local stack injects on purpose, so a campaign can show that every job still ends.

In the spirit of AWS Fault Injection Service (whose Lambda actions add delay to or fail invocations):
a :class:`Fault` names a target of the stack, an action, which events it applies to (``match``: text of
the event such as a job id, or several texts that must all be in it) and how often. The local runtimes ask the :class:`FaultInjector` at the
point where AWS itself can fail in that way; the handlers hold no fault code at all.

| target | action | what happens, as on AWS |
| --- | --- | --- |
| a function (``processor``, ...) | ``crash`` | the environment dies ``seconds`` into the invocation (an OOM kill): ``Runtime.ExitError`` |
| a function | ``delay`` | the handler starts ``seconds`` late, inside the timeout; at or past the timeout: ``Sandbox.Timedout`` |
| a function | ``duplicate`` | Lambda delivers an asynchronous event a second time (its async queue is at-least-once), after the first run ended |
| ``job-queue`` / ``dead-letter-queue`` | ``duplicate`` | SQS delivers the message a second time (at-least-once delivery) |
| ``job-queue`` | ``concurrent-duplicate`` | two invocations get the message at once, each in its own environment (a scaled-out mapping's race) |
| ``success-topic`` / ``error-topic`` / ``scale-in-topic`` | ``duplicate`` | SNS delivers the notification to the function twice |
| a topic (as above) | ``delivery-refused`` | Lambda refuses SNS's delivery: the notification goes to the subscription's DLQ (parked events) |
| ``endpoint`` | ``model-error`` | the model container answers ``/invocations`` with HTTP 500 |
| ``endpoint-capacity`` | ``update-refused`` | ``UpdateEndpointWeightsAndCapacities`` is refused: the endpoint is updating |

>>> injector = FaultInjector([Fault("processor", "crash", match="job-7", seconds=0.2)])
>>> injector.take("processor", "crash", '{"job_id": "job-1"}') is None
True
>>> injector.take("processor", "crash", '{"job_id": "job-7"}').seconds
0.2
>>> injector.take("processor", "crash", '{"job_id": "job-7"}') is None  # count=1: spent
True
>>> injector.counts()
{'processor:crash': 1}
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

FaultAction = Literal["crash", "delay", "duplicate", "concurrent-duplicate", "delivery-refused", "model-error", "update-refused"]
ACTIONS: tuple[str, ...] = ("crash", "delay", "duplicate", "concurrent-duplicate", "delivery-refused", "model-error", "update-refused")


@dataclass(frozen=True)
class Fault:
    """One fault to inject.

    Attributes:
        target: what fails (see the module table); a function by its key in the local stack.
        action: how it fails.
        match: only events whose text contains this (e.g. a job id), or each of these (a job id and a chunk's
            pages); ``None`` matches every event.
        count: how many matching events it hits; 0 = every one.
        seconds: ``crash``: when the environment dies; ``delay``: how late the handler starts.
    """

    target: str
    action: FaultAction
    match: str | tuple[str, ...] | None = None
    count: int = 1
    seconds: float = 0.0

    def __post_init__(self) -> None:
        if self.action not in ACTIONS:
            raise ValueError(f"Unknown fault action {self.action!r}; use one of {', '.join(ACTIONS)}.")
        if self.count < 0 or self.seconds < 0:
            raise ValueError("A fault's count and seconds must not be negative.")

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Fault:
        values = dict(data)
        if isinstance(values.get("match"), list):  # a tuple after a round trip through JSON
            values["match"] = tuple(values["match"])
        return cls(**values)

    def matches(self, subject: str) -> bool:
        """Whether this fault applies to an event whose text is ``subject``."""
        if self.match is None:
            return True
        texts = (self.match,) if isinstance(self.match, str) else self.match
        return all(text in subject for text in texts)


class FaultInjector:
    """The faults of one local stack; thread-safe, shared by its runtimes and event sources.

    ``aliases`` maps the names a runtime knows (``ocr-local-processor``) to fault targets (``processor``).
    """

    def __init__(self, faults: Iterable[Fault] = (), *, aliases: dict[str, str] | None = None) -> None:
        self._aliases = dict(aliases or {})
        self._lock = threading.Lock()
        self._remaining: list[tuple[Fault, int]] = [(fault, fault.count) for fault in faults]
        self._fired: Counter[str] = Counter()

    def add(self, fault: Fault) -> None:
        with self._lock:
            self._remaining.append((fault, fault.count))

    def take(self, target: str, action: str, subject: str = "") -> Fault | None:
        """The fault to inject into this event, if any (and spend one of its count)."""
        target = self._aliases.get(target, target)
        with self._lock:
            for index, (fault, left) in enumerate(self._remaining):
                if fault.target != target or fault.action != action or not fault.matches(subject):
                    continue
                if fault.count and left <= 0:
                    continue
                self._remaining[index] = (fault, left - 1)
                self._fired[f"{target}:{action}"] += 1
                return fault
        return None

    def counts(self) -> dict[str, int]:
        """How many times each ``target:action`` was injected."""
        with self._lock:
            return dict(self._fired)
