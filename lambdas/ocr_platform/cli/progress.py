"""The progress a person sees while a job runs: a bar of pages done with an ETA, from the job item alone.

``ocr-platform run`` and ``submit --wait`` poll the job item; its ``page_count`` and ``pages_done``
(docs/contracts.md, "Progress") are all a frontend has too, so this module uses nothing else. The ETA is
the pages left at the rate seen since the first page was counted, which is the rate of all chunks of a
split job together.

>>> progress = JobProgress()
>>> progress.line({"status": "PROCESSING", "page_count": 60, "pages_done": 0}, now=1.0)
'PROCESSING [                    ]  0/60 pages'
>>> progress.line({"status": "PROCESSING", "page_count": 60, "pages_done": 15}, now=11.0)
'PROCESSING [#####               ] 15/60 pages, 25%, ETA 30 s'
>>> progress.line({"status": "COMPLETED", "page_count": 60, "pages_done": 60}, now=41.0)
'COMPLETED [####################] 60/60 pages'
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

BAR_WIDTH = 20


@dataclass
class JobProgress:
    """Follows one job's ``pages_done`` between polls (``now``: any clock, in seconds)."""

    _opened: float | None = field(default=None, repr=False)

    def pages(self, job: Mapping[str, Any]) -> tuple[int, int] | None:
        """``(pages_done, page_count)`` of a multi-page job whose document was opened, else ``None``."""
        total = int(job.get("page_count") or 0)
        if total <= 1:
            return None
        return min(int(job.get("pages_done") or 0), total), total

    def step(self, job: Mapping[str, Any]) -> int | None:
        """Which of the bar's ``BAR_WIDTH`` steps the job is at: a poller redraws only when it changes."""
        pages = self.pages(job)
        return None if pages is None else BAR_WIDTH * pages[0] // pages[1]

    def eta_seconds(self, done: int, total: int, now: float) -> float | None:
        """Seconds until the last page, at the rate since the document was first seen opened."""
        if self._opened is None:
            self._opened = now
        if done <= 0 or now <= self._opened:
            return None
        return (total - done) * (now - self._opened) / done

    def line(self, job: Mapping[str, Any], *, now: float) -> str:
        """One line: the status, and for a multi-page job the bar, the pages and the ETA while it runs."""
        status = str(job.get("status", "?"))
        pages = self.pages(job)
        if pages is None:
            return status
        done, total = pages
        eta = self.eta_seconds(done, total, now)
        filled = BAR_WIDTH * done // total
        text = f"{status} [{'#' * filled}{' ' * (BAR_WIDTH - filled)}] {done:>{len(str(total))}}/{total} pages"
        if status != "PROCESSING" or done in (0, total):
            return text
        return text + f", {100 * done // total}%" + (f", ETA {eta:.0f} s" if eta is not None else "")
