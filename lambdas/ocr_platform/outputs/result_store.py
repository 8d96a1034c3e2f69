"""Results in S3: a job's ``result.json`` (+ ``raw.json``), the partial result of each chunk of a split job,
and the merge of the second into the first.

Both routes write through here: the CPU processor publishes what it read itself, the completion function
what the endpoint returned; each chunk's part waits under ``chunks/`` until the merge.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from botocore.exceptions import ClientError

from ocr_platform.core.chunks import merge_chunk_results, merge_raw_outputs
from ocr_platform.core.results import OcrResult
from ocr_platform.core.s3_layout import StorageLayout

#: DeleteObjects takes up to 1,000 keys a call (it needs s3:DeleteObject on each).
_DELETE_BATCH = 1000
#: The merge reads the chunks' objects this many at a time (boto3 clients are thread-safe): one after another,
#: the 668 GETs of a 2,000-page job would be most of its merge.
_MERGE_READERS = 16


def publish_result(s3: Any, layout: StorageLayout, result: OcrResult, raw: Any = None, *, formats: Sequence[str] = ()) -> str:
    """Write result.json (and raw.json when the engine gave raw output) and, first, the ``formats`` the job asked
    for (``ocr_platform.outputs.formats``: hOCR, ALTO, Textract JSON); return the result URI."""
    job_id = result["job_id"]
    if formats:
        from ocr_platform.outputs.formats import write_formats

        write_formats(s3, layout, result, list(formats))
    if raw is not None:
        _put_json(s3, layout.bucket, layout.raw_result_key(job_id), raw, default=str)
    _put_json(s3, layout.bucket, layout.result_key(job_id), result)
    return layout.result_uri(job_id)


def publish_searchable_pdf(s3: Any, layout: StorageLayout, job_id: str, path: Path) -> str:
    """Upload the job's searchable PDF (``ocr_platform.outputs.searchable_pdf``) beside its result.json; return its URI."""
    key = layout.result_pdf_key(job_id)
    s3.upload_file(str(path), layout.bucket, key, ExtraArgs={"ContentType": "application/pdf"})
    return f"s3://{layout.bucket}/{key}"


def put_chunk_result(s3: Any, layout: StorageLayout, job_id: str, index: int, result: OcrResult, raw: Any = None) -> None:
    """Leave chunk ``index``'s partial result (and raw output) for the merge."""
    _put_json(s3, layout.bucket, layout.chunk_result_key(job_id, index), result)
    if raw is not None:
        _put_json(s3, layout.bucket, layout.chunk_raw_key(job_id, index), raw, default=str)


def read_merged_result(s3: Any, layout: StorageLayout, job_id: str, chunk_count: int) -> tuple[OcrResult, Any]:
    """Merge the ``chunk_count`` partial results (and raw outputs) in chunk order; nothing is written.

    Returns the merged result and raw output, for :func:`publish_result` (what is written beside result.json,
    such as result.pdf, goes first, so result.json has its timing). The chunk objects stay until
    :func:`delete_chunk_results`.
    """
    with ThreadPoolExecutor(max_workers=min(_MERGE_READERS, chunk_count)) as pool:
        parts = pool.map(lambda i: _get_json(s3, layout.bucket, layout.chunk_result_key(job_id, i)), range(chunk_count))
        raws = pool.map(lambda i: _get_json(s3, layout.bucket, layout.chunk_raw_key(job_id, i), missing_ok=True), range(chunk_count))
        result = merge_chunk_results(job_id, list(parts))
        raw = merge_raw_outputs(list(raws))
    return result, raw


def delete_chunk_results(s3: Any, layout: StorageLayout, job_id: str, chunk_count: int) -> None:
    """Delete every chunk object of a merged job (a missing raw object is no error for DeleteObjects)."""
    keys = [key for i in range(chunk_count) for key in (layout.chunk_result_key(job_id, i), layout.chunk_raw_key(job_id, i))]
    for start in range(0, len(keys), _DELETE_BATCH):
        batch = keys[start : start + _DELETE_BATCH]
        s3.delete_objects(Bucket=layout.bucket, Delete={"Objects": [{"Key": key} for key in batch], "Quiet": True})


def _put_json(s3: Any, bucket: str, key: str, document: Any, *, default: Callable[[Any], Any] | None = None) -> None:
    """One JSON object in S3; ``default=str`` for an engine's raw output, whose values may not be JSON types."""
    body = json.dumps(document, ensure_ascii=False, default=default).encode()
    s3.put_object(Bucket=bucket, Key=key, Body=body, ContentType="application/json")


def _get_json(s3: Any, bucket: str, key: str, *, missing_ok: bool = False) -> Any:
    try:
        return json.loads(s3.get_object(Bucket=bucket, Key=key)["Body"].read())
    except ClientError as err:
        if missing_ok and err.response.get("Error", {}).get("Code") in {"NoSuchKey", "404"}:
            return None
        raise
