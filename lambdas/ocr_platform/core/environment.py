"""Environment variables set for a block of code and put back afterwards.

For a process that reads its configuration from ``os.environ`` when something is built in it (an engine of
``ocr-platform ocr``, a local stack started by a test), without leaving that configuration behind.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager


@contextmanager
def patched_environment(values: Mapping[str, str]) -> Iterator[None]:
    """``os.environ`` with ``values`` set while the block runs, as it was afterwards.

    >>> with patched_environment({"OCR_DOCTEST_NAME": "set"}):
    ...     os.environ["OCR_DOCTEST_NAME"]
    'set'
    >>> "OCR_DOCTEST_NAME" in os.environ
    False
    """
    saved = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
