"""DynamoDB's per-item atomicity for moto's server: a conditional write is checked and applied as one step.

Why a module of its own: moto's DynamoDB backend reads an item, evaluates a ``ConditionExpression`` and
writes it with no lock, and its server runs requests in threads, so two conditional writes to one item at
the same time can both succeed. DynamoDB never lets them: the job claims (``JobStore.claim_dispatch``,
``claim_step``) rely on it, and two invoker invocations at once (the ``concurrent-duplicate`` fault) race
exactly there. :func:`serialize_item_operations` runs every item operation of moto's backend under one
lock (DynamoDB serializes per item; one lock for all is coarser and just as correct) until the function
it returns is called; nested uses share one patch.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any

#: moto's ``DynamoDBBackend`` methods that read or write items.
ITEM_OPERATIONS = (
    "put_item", "update_item", "delete_item", "get_item", "batch_write_item", "batch_get_item",
    "transact_write_items", "transact_get_items", "execute_statement", "execute_transaction", "batch_execute_statement",
)

_lock = threading.RLock()
_guard = threading.Lock()
_users = 0
_originals: dict[str, Callable[..., Any]] = {}


def serialize_item_operations() -> Callable[[], None]:
    """Makes moto's DynamoDB item operations atomic; returns the function that undoes it (once the last user calls it)."""
    global _users
    from moto.dynamodb.models import DynamoDBBackend

    with _guard:
        _users += 1
        if _users == 1:
            for name in ITEM_OPERATIONS:
                original = getattr(DynamoDBBackend, name, None)
                if original is None:
                    continue
                _originals[name] = original
                setattr(DynamoDBBackend, name, _atomic(original))
    released = threading.Event()

    def restore() -> None:
        global _users
        with _guard:
            if released.is_set():
                return
            released.set()
            _users -= 1
            if _users == 0:
                for name, original in _originals.items():
                    setattr(DynamoDBBackend, name, original)
                _originals.clear()

    return restore


def _atomic(operation: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(operation)
    def atomic(*args: Any, **kwargs: Any) -> Any:
        with _lock:
            return operation(*args, **kwargs)

    return atomic
