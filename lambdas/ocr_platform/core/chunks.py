"""Page fan-out: a long document's pages split into chunks that run at once, and merged back in page order.

A job whose selected pages number more than ``pages_per_chunk`` is not read by one invocation page after
page: its pages are cut into consecutive chunks of at most ``pages_per_chunk`` pages, each chunk is read by
its own processor invocation, and the invocation that finishes the last chunk merges every chunk's
partial result into the job's one ``result.json`` (the same format as an unsplit job's).

This module is the arithmetic and the merge, with no AWS in it: ``plan_chunks`` cuts a page selection,
``Chunk`` travels in the processor's event (and in the endpoint's chunk requests), ``merge_chunk_results``
joins the partial results. On the GPU route the endpoint, which is what opens documents there, answers a
long job's first request with a split plan (``split_plan`` / ``read_split_plan``) instead of a result.

>>> chunks = plan_chunks([1, 2, 3, 4, 5, 9, 10], pages_per_chunk=3)
>>> [c.page_spec for c in chunks]
['1-3', '4-5,9', '10']
>>> chunks[1].label
'chunk 2 of 3 (pages 4-5,9)'
>>> Chunk.from_payload(chunks[1].to_payload()) == chunks[1]
True
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

from ocr_platform.core import defaults
from ocr_platform.core.results import OcrResult, ResultWarning, build_result
from ocr_platform.core.tables import merge_continued_tables

#: A page selection as a job gives it (``"1-3,7"``): the one pattern the message, the intake and the chunk plan check.
PAGES_PATTERN = re.compile(r"^\s*\d+\s*(-\s*\d+\s*)?(,\s*\d+\s*(-\s*\d+\s*)?)*$")


class ChunkPayload(TypedDict):
    """A chunk as it travels in the processor's event, beside the job message's fields."""

    index: int
    count: int
    pages: str


class SplitPlanBody(TypedDict):
    """How the endpoint split a long document: its selected pages and the chunks to request."""

    page_count: int
    chunks: list[ChunkPayload]


class SplitPlan(TypedDict):
    """The endpoint's answer to the first request of a job it splits, in place of a result.json."""

    job_id: str
    plan: SplitPlanBody


class InvalidChunkError(ValueError):
    """A processor event's ``chunk`` field is not a chunk this module planned."""


@dataclass(frozen=True)
class Chunk:
    """One page range of a split job.

    Attributes:
        index: 0-based position of the chunk in the job; the merge puts chunks in this order.
        count: how many chunks the job was split into.
        pages: the 1-based document pages this chunk reads, ascending.
    """

    index: int
    count: int
    pages: tuple[int, ...]

    @property
    def page_spec(self) -> str:
        """The chunk's pages as a page selection (``"21-28"``), the form engines and messages take."""
        return page_ranges(self.pages)

    @property
    def label(self) -> str:
        """How errors and logs name the chunk: ``chunk 3 of 7 (pages 17-24)``."""
        return f"chunk {self.index + 1} of {self.count} (pages {self.page_spec})"

    def to_payload(self) -> ChunkPayload:
        return {"index": self.index, "count": self.count, "pages": self.page_spec}

    @classmethod
    def from_payload(cls, data: Mapping[str, Any]) -> Chunk:
        """The chunk an event carries; ``InvalidChunkError`` when its fields cannot be one."""
        index, count, spec = data.get("index"), data.get("count"), data.get("pages")
        if not isinstance(index, int) or not isinstance(count, int) or not 0 <= index < count:
            raise InvalidChunkError(f"'chunk' needs 0 <= index < count, got index={index!r} count={count!r}")
        if not isinstance(spec, str) or not PAGES_PATTERN.match(spec):
            raise InvalidChunkError(f"'chunk.pages' must be a page selection such as \"9-16\", got {spec!r}")
        pages: set[int] = set()
        for part in spec.split(","):
            first, _, last = part.partition("-")
            pages.update(range(int(first), int(last or first) + 1))
        if not pages or min(pages) < 1:
            raise InvalidChunkError(f"'chunk.pages' {spec!r} names no 1-based page")
        return cls(index=index, count=count, pages=tuple(sorted(pages)))


def page_ranges(pages: Sequence[int]) -> str:
    """Ascending page numbers written as ranges.

    >>> page_ranges([1, 2, 3, 7, 9, 10])
    '1-3,7,9-10'
    """
    parts: list[str] = []
    start = previous = None
    for page in pages:
        if previous is not None and page == previous + 1:
            previous = page
            continue
        if start is not None:
            parts.append(f"{start}-{previous}" if previous != start else f"{start}")
        start = previous = page
    if start is not None:
        parts.append(f"{start}-{previous}" if previous != start else f"{start}")
    return ",".join(parts)


def plan_chunks(selected_pages: Sequence[int], *, pages_per_chunk: int, page_costs: Mapping[int, float] | None = None) -> list[Chunk]:
    """Cut the selected pages, in order, into chunks of at most ``pages_per_chunk`` pages' worth of work.

    ``page_costs`` prices pages in OCR pages (1.0, the default for a page it does not name): a PDF page with a
    text layer costs ``defaults.TEXT_LAYER_PAGE_COST`` with ``text_layer: auto``. A chunk then closes when
    its cost would pass ``pages_per_chunk``, and never holds more than ``pages_per_chunk`` x
    ``defaults.WORST_PAGE_FACTOR`` pages: should every page of such a chunk need OCR after all, at a dense
    page's cost, it still costs what the processor's timeout check budgets for a chunk (``pages_per_chunk``
    worst pages). One chunk when the selection fits in one: such a job is not split.

    >>> [c.page_spec for c in plan_chunks(range(1, 31), pages_per_chunk=6, page_costs={n: 0.1 for n in range(1, 31)})]
    ['1-18', '19-30']
    >>> [c.page_spec for c in plan_chunks([1, 2, 3, 4, 5], pages_per_chunk=2, page_costs={2: 0.1, 3: 0.1})]
    ['1-3', '4-5']
    """
    if pages_per_chunk < 1:
        raise ValueError(f"pages_per_chunk must be at least 1, got {pages_per_chunk}")
    costs = page_costs or {}
    most_pages = pages_per_chunk * defaults.WORST_PAGE_FACTOR if costs else pages_per_chunk
    groups: list[tuple[int, ...]] = []
    group: list[int] = []
    cost = 0.0
    for page in selected_pages:
        page_cost = costs.get(page, 1.0)
        if group and (cost + page_cost > pages_per_chunk + 1e-9 or len(group) >= most_pages):
            groups.append(tuple(group))
            group, cost = [], 0.0
        group.append(page)
        cost += page_cost
    if group:
        groups.append(tuple(group))
    return [Chunk(index=i, count=len(groups), pages=group) for i, group in enumerate(groups)]


def split_plan(job_id: str, chunks: Sequence[Chunk]) -> SplitPlan:
    """The endpoint's answer for a job it splits into ``chunks``.

    >>> split_plan("j1", plan_chunks([1, 2, 3], pages_per_chunk=2))["plan"]
    {'page_count': 3, 'chunks': [{'index': 0, 'count': 2, 'pages': '1-2'}, {'index': 1, 'count': 2, 'pages': '3'}]}
    """
    return {"job_id": job_id, "plan": {"page_count": sum(len(c.pages) for c in chunks), "chunks": [c.to_payload() for c in chunks]}}


def read_split_plan(document: Any) -> list[Chunk] | None:
    """The chunks of an endpoint output that is a split plan; ``None`` when it is not one (a result).

    >>> [c.label for c in read_split_plan(split_plan("j1", plan_chunks([1, 2, 3], pages_per_chunk=2)))]
    ['chunk 1 of 2 (pages 1-2)', 'chunk 2 of 2 (pages 3)']
    """
    if not isinstance(document, dict) or "plan" not in document:
        return None
    body = document["plan"]
    payloads = body.get("chunks") if isinstance(body, dict) else None
    if not isinstance(payloads, list) or not payloads:
        raise InvalidChunkError("the split plan names no chunks")
    chunks = [Chunk.from_payload(p) if isinstance(p, dict) else None for p in payloads]
    if any(c is None or c.index != i or c.count != len(payloads) for i, c in enumerate(chunks)):
        raise InvalidChunkError("the split plan's chunks are not numbered 0..count-1 in order")
    return [c for c in chunks if c is not None]


def merge_chunk_results(job_id: str, chunk_results: Sequence[OcrResult]) -> OcrResult:
    """The job's result.json from its chunks' partial results, given in chunk order.

    Pages keep their order; each warning appears once; timings add up (``ocr`` is then the sum of the
    chunks' reading time, not the wall time), and the engine is the first chunk's (every chunk ran the same
    model). The chunks' ``pages_failed`` join into the job's, with one ``pages_failed`` warning for all of them.
    A table that one chunk's last page ends and the next chunk's first page goes on with becomes one table
    (``core.tables.merge_continued_tables``, on the whole document).
    """
    if not chunk_results:
        raise ValueError("a merge needs at least one chunk result")
    first = chunk_results[0]
    pages = [page for result in chunk_results for page in result["pages"]]
    merge_continued_tables(pages)
    warnings: list[ResultWarning] = []
    for result in chunk_results:
        warnings.extend(w for w in result["warnings"] if w not in warnings)
    timings: dict[str, float] = {}
    for result in chunk_results:
        for name, seconds in result["timings"].items():
            timings[name] = timings.get(name, 0.0) + seconds
    failed = [failure for result in chunk_results for failure in result.get("pages_failed", [])]
    return build_result(job_id, first["model"], first["engine"], pages, timings, warnings, failed)


def merge_raw_outputs(raw_outputs: Sequence[Any]) -> Any:
    """raw.json of a split job: the first chunk's raw output with every chunk's ``pages`` in order.

    ``None`` when no chunk produced raw output.
    """
    present = [raw for raw in raw_outputs if isinstance(raw, dict)]
    if not present:
        return None
    return {**present[0], "pages": [page for raw in present for page in raw.get("pages", [])]}
