"""Pages that failed: a document with a few bad pages still comes back, with the bad pages named.

One page that cannot be read (it cannot be rendered or decoded, or the engine raised on it) no longer fails
the whole job. The page loop (``ocr_platform.engines.page_loop``) records it as a ``PageFailure`` and reads
the next page; the result then carries ``pages_failed`` and a ``pages_failed`` warning (``build_result``).

Which failures are a page's: ``PAGE_CODES`` (a ``JobError`` with one of them, raised while one page was
rendered or read) and any other exception the engine raised on one page (``engine_failed``). Every other
``JobError`` (a bad option, a model that is unavailable, the input missing) is about the whole job and
still fails it; so does a crash of the process (out of memory, a timeout), which no code sees.

Past a share of the job's selected pages (``PlatformConfig.max_failed_page_percent``,
``defaults.MAX_FAILED_PAGE_PERCENT``) the job fails as before, with the first bad page's code and a message
naming the pages: ``check_failed_share``. A split job's chunks each return what they read; the merge
checks the share over the whole job.

>>> failed = [PageFailure(page=2, code="corrupt_document", message="Failed to load page.")]
>>> check_failed_share(failed, read=3, max_percent=25)
>>> check_failed_share(failed, read=1, max_percent=25)
Traceback (most recent call last):
...
ocr_platform.core.errors.JobError: corrupt_document: 1 of 2 pages could not be read (50%, more than the 25% a job may lose): page 2: Failed to load page.
"""

from __future__ import annotations

from typing import TypedDict

from ocr_platform.core.errors import ErrorCode, JobError

#: The ``JobError`` codes that are about one page: raised while a page was rendered or read, they fail that page.
PAGE_CODES = frozenset({ErrorCode.CORRUPT_DOCUMENT, ErrorCode.PAGE_TOO_LARGE, ErrorCode.ENGINE_FAILED})
#: How many failures a message names one by one before it counts the rest.
_NAMED = 10


class PageFailure(TypedDict):
    """One page the job could not read (``pages_failed`` of result.json and of the job item)."""

    page: int
    code: str
    message: str


def page_failure(page: int, err: BaseException, *, rendering: bool = False) -> PageFailure:
    """The failure of ``page`` for an exception raised while it was rendered (``rendering``) or read.

    >>> page_failure(3, RuntimeError("bad tensor"))
    {'page': 3, 'code': 'engine_failed', 'message': 'OCR failed on page 3: RuntimeError: bad tensor'}
    >>> page_failure(2, ValueError("Failed to load page."), rendering=True)["code"]
    'corrupt_document'
    """
    if isinstance(err, JobError):
        return {"page": page, "code": err.code, "message": err.message}
    if rendering:
        return {"page": page, "code": ErrorCode.CORRUPT_DOCUMENT, "message": f"Page {page} cannot be rendered: {type(err).__name__}: {err}"}
    return {"page": page, "code": ErrorCode.ENGINE_FAILED, "message": f"OCR failed on page {page}: {type(err).__name__}: {err}"}


def is_page_error(err: BaseException) -> bool:
    """Whether ``err``, raised on one page, fails only that page (else it fails the job)."""
    if isinstance(err, JobError):
        return err.code in PAGE_CODES
    return isinstance(err, Exception) and not isinstance(err, MemoryError)


def page_list(failed: list[PageFailure]) -> str:
    """The failed pages as a message names them.

    >>> page_list([{"page": 3, "code": "engine_failed", "message": ""}])
    'page 3'
    """
    numbers = [str(f["page"]) for f in failed]
    named = ", ".join(numbers[:_NAMED]) + (f" and {len(numbers) - _NAMED} more" if len(numbers) > _NAMED else "")
    return ("page " if len(numbers) == 1 else "pages ") + named


def check_failed_share(failed: list[PageFailure], *, read: int, max_percent: int) -> None:
    """Raise the job's ``JobError`` when the ``failed`` pages are more than ``max_percent`` of all its pages
    (``read`` + failed), or when no page was read at all; its code is the first failed page's. A job of one
    page that failed fails with that page's own error, as it always did.

    >>> check_failed_share([PageFailure(page=1, code="page_too_large", message="Page 1 is too large.")], read=0, max_percent=25)
    Traceback (most recent call last):
    ...
    ocr_platform.core.errors.JobError: page_too_large: Page 1 is too large.
    """
    if not failed:
        return
    total = read + len(failed)
    share = 100 * len(failed) / total
    if read and share <= max_percent:
        return
    if total == 1:
        raise JobError(failed[0]["code"], failed[0]["message"])
    details = "; ".join(f"page {f['page']}: {f['message']}" for f in failed[:_NAMED])
    more = f"; and {len(failed) - _NAMED} more" if len(failed) > _NAMED else ""
    raise JobError(failed[0]["code"], f"{len(failed)} of {total} pages could not be read ({share:.0f}%, more than the "
                   f"{max_percent}% a job may lose): {details}{more}")
