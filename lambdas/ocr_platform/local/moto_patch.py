"""One way to change how moto's server (in this process) answers, and to undo it: replace an attribute.

Why a module of its own: several modules make moto behave as AWS does where it does not by itself (the
SageMaker control plane's states and quota, SQS's byte counting, the capacity fault), each by replacing a
method on one of moto's backend or response objects while the local stack runs. They may stack on the same
method, so each undo puts back exactly what it replaced, and undoing in reverse order restores moto.

>>> class Backend:
...     def answer(self) -> str:
...         return "moto"
>>> backend = Backend()
>>> undo = replace_attribute(backend, "answer", lambda: "patched")
>>> backend.answer()
'patched'
>>> undo(); backend.answer()
'moto'
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_MISSING = object()


def replace_attribute(target: Any, name: str, value: Any) -> Callable[[], None]:
    """Set ``target.<name>`` to ``value`` (on that object: an instance or a class); returns the undo, which
    puts back what ``target`` itself held (or removes the attribute where it held none)."""
    previous = vars(target).get(name, _MISSING)
    setattr(target, name, value)

    def undo() -> None:
        if previous is _MISSING:
            if name in vars(target):
                delattr(target, name)
        else:
            setattr(target, name, previous)

    return undo
