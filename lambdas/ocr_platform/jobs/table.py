"""The job store's core: the table handle, the consistent read, and the one conditional write every part uses.

Every write of a job item is one ``UpdateItem`` (``JobTable._update``) that carries a condition, so DynamoDB
itself enforces the state machine (docs/contracts.md, "State machine"): a write whose condition fails changes
nothing, returns ``None`` (``False`` from ``_transition``) and is logged as an ignored transition, which is what
a duplicate delivery, a repeated notification or a late retry meets; a terminal status is never overwritten.

The parts of the store (``lifecycle``, ``claims``, ``chunk_state``, ``delivery``, ``listings``) are subclasses of
``JobTable``: they share its table, clock, TTL and ``on_finished`` hook, and each adds the writes of the part of
the item it owns. ``lease_free`` and ``epoch`` are the lease arithmetic of docs/contracts.md, "Claims", here
because both the step claims (``claims``) and the webhook's claim (``delivery``) use them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime
from typing import Any, Literal

import boto3
from boto3.dynamodb.conditions import Attr, ConditionBase
from boto3.dynamodb.types import TypeDeserializer
from botocore.exceptions import ClientError

from ocr_platform.core import defaults
from ocr_platform.jobs.item import PARTITION_KEY, JobItem, plain, utc_now

#: The transitions log under the store's name, as they did before the store was split into parts.
logger = logging.getLogger("ocr_platform.jobs.store")

_DESERIALIZE = TypeDeserializer()


class JobTable:
    """The jobs table and the conditional write every part of the store is built on.

    Args: as ``ocr_platform.jobs.store.JobStore``, which is the class callers construct.
    """

    def __init__(
        self,
        table_name: str,
        *,
        ttl_days: int = defaults.JOB_TTL_DAYS,
        dynamodb: Any = None,
        clock: Callable[[], datetime] = utc_now,
        on_finished: Callable[[JobItem], None] | None = None,
    ) -> None:
        self.table = (dynamodb or boto3.resource("dynamodb")).Table(table_name)
        self.ttl_days = ttl_days
        self.clock = clock
        self.on_finished = on_finished

    def get(self, job_id: str) -> JobItem | None:
        item = self.table.get_item(Key={PARTITION_KEY: job_id}, ConsistentRead=True).get("Item")
        return plain(item) if item else None

    def _transition(self, job_id: str, values: dict[str, Any], condition: Any, **update: Any) -> bool:
        """``_update`` for a caller that needs only whether the condition held."""
        return self._update(job_id, values, condition, **update) is not None

    def _update(
        self,
        job_id: str,
        values: dict[str, Any],
        condition: Any,
        *,
        to: str,
        if_not_exists: dict[str, Any] | None = None,
        add: dict[str, Any] | None = None,
        append: dict[str, list[Any]] | None = None,
        remove: tuple[str, ...] = (),
        returns: Literal["UPDATED_NEW", "ALL_NEW"] = "UPDATED_NEW",
        quiet: bool = False,
    ) -> dict[str, Any] | None:
        """One conditional ``UpdateItem``: the attributes it changed (``returns``: ``UPDATED_NEW``, or the whole
        item with ``ALL_NEW``), or ``None`` when the condition failed. ``values`` are SET, ``if_not_exists`` SET
        only where absent, ``append`` added to the end of a list (created if absent), ``add`` ADDed (a number
        to a counter, a set to a set), ``remove`` REMOVEd."""
        names: dict[str, str] = {}
        vals: dict[str, Any] = {}
        sets: list[str] = []
        for i, (attr, value) in enumerate(values.items()):
            names[f"#set{i}"], vals[f":set{i}"] = attr, value
            sets.append(f"#set{i} = :set{i}")
        for i, (attr, value) in enumerate((if_not_exists or {}).items()):
            names[f"#ine{i}"], vals[f":ine{i}"] = attr, value
            sets.append(f"#ine{i} = if_not_exists(#ine{i}, :ine{i})")
        for i, (attr, value) in enumerate((append or {}).items()):
            names[f"#app{i}"], vals[f":app{i}"] = attr, value
            vals[":empty_list"] = []
            sets.append(f"#app{i} = list_append(if_not_exists(#app{i}, :empty_list), :app{i})")
        adds = []
        for i, (attr, value) in enumerate((add or {}).items()):
            names[f"#add{i}"], vals[f":add{i}"] = attr, value
            adds.append(f"#add{i} :add{i}")
        removes = []
        for i, attr in enumerate(remove):
            names[f"#rem{i}"] = attr
            removes.append(f"#rem{i}")
        expression = " ".join(
            clause
            for clause in (
                "SET " + ", ".join(sets) if sets else "",
                "ADD " + ", ".join(adds) if adds else "",
                "REMOVE " + ", ".join(removes) if removes else "",
            )
            if clause
        )
        request: dict[str, Any] = {"ExpressionAttributeValues": vals} if vals else {}
        try:
            response = self.table.update_item(
                Key={PARTITION_KEY: job_id},
                UpdateExpression=expression,
                ConditionExpression=condition,
                ExpressionAttributeNames=names,
                **request,
                ReturnValues=returns,
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )
        except ClientError as err:
            if not is_condition_failure(err):
                raise
            old: dict[str, Any] = dict(err.response.get("Item") or {})
            current = _DESERIALIZE.deserialize(old["status"]) if "status" in old else "<missing>"
            logger.log(
                logging.DEBUG if quiet else logging.WARNING,
                "Ignored transition of job %s to %s: it is %s", job_id, to, current,
                extra={"job_id": job_id, "target": to, "current_status": current},
            )
            return None
        if not quiet:
            logger.info("Job %s -> %s", job_id, to, extra={"job_id": job_id, "status": to})
        return plain(response.get("Attributes") or {})


def epoch(ts: datetime) -> int:
    """Whole epoch seconds, rounded up: a lease never ends before the time it was given."""
    return int(-(-ts.timestamp() // 1))


def lease_free(attempt: str, lease: str, attempt_id: str, now: datetime) -> ConditionBase:
    """No live lease on the step: none was taken, it ran out, or ``attempt_id`` holds it."""
    return Attr(lease).not_exists() | Attr(lease).lt(int(now.timestamp())) | Attr(attempt).eq(attempt_id)


def is_condition_failure(err: ClientError) -> bool:
    return err.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException"
