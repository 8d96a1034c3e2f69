"""Admission control: at most ``limit`` CPU processor invocations of a stage run at once.

A burst of 1,000 jobs, or a 2,000-page document cut into 334 chunks, would otherwise start as many processor
invocations as the account lets Lambda run, leaving nothing for the account's other functions (or for the
platform's own invoker and API), and a new account's reduced quota would throttle them. Reserved concurrency
bounds a function where the account can spare it; where it cannot (a new account keeps a minimum unreserved),
the platform bounds itself here, and work beyond the bound waits: a job in the job queue, a chunk in its
job's launch counter (``ocr_platform.cpu.job_runner``).

The semaphore is one item of the jobs table (partition key ``admission#processor``: no job id has a ``#``).
Its ``holders`` map a slot's token to the epoch second its lease ends. A slot is taken with one conditional
write on the item's ``version`` after pruning expired leases, released with one ``REMOVE`` (which bumps the
version, so a concurrent take re-reads), and handed from a finishing chunk to the next one in a single write.
A holder that crashed without releasing its slot loses it when its lease ends (the processor's timeout
plus a margin: ``defaults.processor_admission_lease_seconds``); the completion function releases the slot of
a processor run that crashed, so that normally takes no time at all.

Example, against the local stack's table (or moto)::

    >>> slots = ProcessorSlots(table, limit=1, lease_seconds=1020)  # doctest: +SKIP
    >>> slots.acquire("job-1"), slots.acquire("job-2")               # doctest: +SKIP
    (True, False)
    >>> slots.release("job-1"); slots.acquire("job-2")               # doctest: +SKIP
    True
"""

from __future__ import annotations

import logging
import random
import time
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from botocore.exceptions import ClientError

logger = logging.getLogger(__name__)

#: The semaphore item's partition key in the jobs table.
SLOTS_ITEM_KEY = "admission#processor"
#: Takes that lose a race on the item's version are tried again this many times before giving up for now.
MAX_TAKE_ATTEMPTS = 8


def slot_token(job_id: str, purpose: str = "") -> str:
    """A slot's token: the job id itself for a whole job (so a duplicate delivery of it takes the same slot),
    the job id and a fresh suffix for a chunk launch."""
    return f"{job_id}#{purpose}-{uuid.uuid4().hex[:12]}" if purpose else job_id


class ProcessorSlots:
    """The stage's processor semaphore.

    Args:
        table: the jobs table (a boto3 ``Table``).
        limit: processor invocations that may hold a slot at once (``PlatformConfig.processor_max_concurrency``).
        lease_seconds: how long a slot holds without being released.
        clock: epoch seconds (tests pass their own).
    """

    def __init__(self, table: Any, *, limit: int, lease_seconds: int, clock: Callable[[], float] = time.time) -> None:
        if limit < 1:
            raise ValueError(f"limit must be at least 1, got {limit}")
        self.table = table
        self.limit = limit
        self.lease_seconds = lease_seconds
        self.clock = clock

    def acquire(self, token: str) -> bool:
        """Take a slot for ``token``; ``False`` when all ``limit`` are held (the caller's work waits).

        Taking a slot ``token`` already holds renews its lease and succeeds.
        """
        for _ in range(MAX_TAKE_ATTEMPTS):
            now = int(self.clock())
            version, holders = self._read(now)
            if token not in holders and len(holders) >= self.limit:
                return False
            holders[token] = now + self.lease_seconds
            if self._replace(holders, version):
                return True
            time.sleep(random.uniform(0.01, 0.05))
        logger.warning("Could not take a processor slot for %s: %d writers raced for it; the work waits", token, MAX_TAKE_ATTEMPTS)
        return False

    def release(self, token: str) -> None:
        """Give ``token``'s slot back (nothing happens when it holds none)."""
        try:
            self.table.update_item(
                Key={"job_id": SLOTS_ITEM_KEY},
                UpdateExpression="REMOVE holders.#token ADD version :one",
                ConditionExpression="attribute_exists(holders.#token)",
                ExpressionAttributeNames={"#token": token},
                ExpressionAttributeValues={":one": 1},
            )
        except ClientError as err:
            if err.response["Error"]["Code"] != "ConditionalCheckFailedException":
                raise

    def hand_over(self, token: str, to_token: str) -> bool:
        """Move ``token``'s slot to ``to_token`` in one write (a finishing chunk starting the next one), with
        a fresh lease; ``False`` when ``token`` holds no slot any more (then ``to_token`` must acquire one)."""
        try:
            self.table.update_item(
                Key={"job_id": SLOTS_ITEM_KEY},
                UpdateExpression="REMOVE holders.#old SET holders.#new = :until ADD version :one",
                ConditionExpression="attribute_exists(holders.#old)",
                ExpressionAttributeNames={"#old": token, "#new": to_token},
                ExpressionAttributeValues={":until": int(self.clock()) + self.lease_seconds, ":one": 1},
            )
        except ClientError as err:
            if err.response["Error"]["Code"] == "ConditionalCheckFailedException":
                return False
            raise
        return True

    def holders(self) -> Mapping[str, int]:
        """The tokens holding a slot now and when each lease ends (operators and tests read this)."""
        return self._read(int(self.clock()))[1]

    def _read(self, now: int) -> tuple[int, dict[str, int]]:
        """The item's version (0: no item yet) and the holders whose lease has not ended at ``now``."""
        item = self.table.get_item(Key={"job_id": SLOTS_ITEM_KEY}, ConsistentRead=True).get("Item") or {}
        return int(item.get("version", 0)), {t: int(until) for t, until in item.get("holders", {}).items() if int(until) > now}

    def _replace(self, holders: dict[str, int], version: int) -> bool:
        condition = "attribute_not_exists(job_id)" if version == 0 else "version = :version"
        values: dict[str, Any] = {":version": version} if version else {}
        try:
            self.table.put_item(
                Item={"job_id": SLOTS_ITEM_KEY, "holders": holders, "version": version + 1},
                ConditionExpression=condition,
                **({"ExpressionAttributeValues": values} if values else {}),
            )
        except ClientError as err:
            if err.response["Error"]["Code"] == "ConditionalCheckFailedException":
                return False
            raise
        return True


def wait_in_queue(sqs: Any, queue_url: str, body: str, *, delay_seconds: int) -> int:
    """Put a job's message back on the job queue as a new message, visible after ``delay_seconds`` plus up to
    half as much again (so jobs deferred together do not all come back at once); returns the delay used.

    A new message, not the received one made invisible again: a job may wait for a slot longer than the
    queue's receive count allows (each receive counts towards the DLQ), and waiting is not failing.
    """
    delay = min(900, delay_seconds + random.randint(0, max(0, delay_seconds // 2)))
    sqs.send_message(QueueUrl=queue_url, MessageBody=body, DelaySeconds=delay)
    return delay

