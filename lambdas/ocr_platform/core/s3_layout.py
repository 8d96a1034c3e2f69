"""The bucket layout: every S3 key the platform reads or writes is built here, from our own ids.

One bucket holds these areas (prefixes), so a lifecycle rule or an IAM statement can name each
(docs/contracts.md, "S3 layout"):

- ``inbox/<model>/[<language>/]<file>``: the drop folder; each object written there becomes a job
  (``ocr_platform.inputs.inbox``), its document copied to ``documents/``.
- ``uploads/{job_id}/{file_name}``: where a jobs API user's presigned POST puts the file; its arrival
  starts the job (copied to ``documents/`` like a dropped file).
- ``documents/{job_id}/{file_name}``: uploaded inputs.
- ``results/{job_id}/result.json`` (+ ``raw.json``, and ``pages/{page}.jpg``, each page's image as the
  engine read it, and ``figures/{page}-{n}.png``, each picture block's crop): finished results, the public output contract.
- ``models/``: the model archive cache used by cold starts.
- ``async/requests/{job_id}.json`` (+ ``{job_id}.c{index}.json``, one per chunk of a split GPU job),
  ``async/outputs/``, ``async/failures/``: SageMaker async I/O, transient and expired by a lifecycle rule.
- ``dead-letters/{message_id}.json``: job messages that reached the DLQ, kept for inspection.
- ``chunks/{job_id}/{index}.json`` (+ ``{index}.raw.json``): the partial result of each chunk of a split
  job, merged into ``results/`` by the last chunk and then deleted; transient, expired like ``async/``.

>>> layout = StorageLayout("my-bucket")
>>> layout.result_uri("job-1")
's3://my-bucket/results/job-1/result.json'
>>> S3Uri.parse("s3://b/documents/j/a.pdf").key
'documents/j/a.pdf'
"""

from __future__ import annotations

import re
from dataclasses import dataclass

DOCUMENTS_PREFIX = "documents/"
INBOX_PREFIX = "inbox/"
UPLOADS_PREFIX = "uploads/"
RESULTS_PREFIX = "results/"
MODELS_PREFIX = "models/"
ASYNC_PREFIX = "async/"
ASYNC_REQUESTS_PREFIX = "async/requests/"
ASYNC_OUTPUTS_PREFIX = "async/outputs/"
ASYNC_FAILURES_PREFIX = "async/failures/"
DEAD_LETTERS_PREFIX = "dead-letters/"
CHUNKS_PREFIX = "chunks/"

#: The files a job may ask for beside result.json (``options.outputs``), by format, as named in its result folder:
#: a searchable PDF, hOCR, ALTO XML and Textract-shaped JSON (``ocr_platform.outputs.formats``).
OUTPUT_FILES = {"pdf": "result.pdf", "hocr": "result.hocr", "alto": "result.alto.xml", "textract": "textract.json"}

#: One limit for every route: the job id is SageMaker's ``InferenceId`` on the GPU route, which allows at
#: most 64 characters (botocore does not check the maximum, the service refuses the request).
JOB_ID_MAX_LENGTH = 64
JOB_ID_PATTERN = re.compile(rf"^[A-Za-z0-9][A-Za-z0-9_-]{{0,{JOB_ID_MAX_LENGTH - 1}}}$")
#: What a job id that is too long must still match for the invoker to fail its job by that id.
_KEY_SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,1023}$")
_UNSAFE_FILE_CHARS = re.compile(r"[^A-Za-z0-9._-]+")
_ASYNC_REQUEST_KEY = re.compile(
    rf"^{ASYNC_REQUESTS_PREFIX}(?P<job_id>[A-Za-z0-9][A-Za-z0-9_-]{{0,{JOB_ID_MAX_LENGTH - 1}}})(?:\.c(?P<chunk>\d{{5}}))?\.json$"
)


@dataclass(frozen=True)
class S3Uri:
    """An ``s3://bucket/key`` location."""

    bucket: str
    key: str

    @classmethod
    def parse(cls, uri: str) -> S3Uri:
        if not isinstance(uri, str) or not uri.startswith("s3://"):
            raise ValueError(f"{uri!r} is not an s3://bucket/key URI")
        bucket, _, key = uri[len("s3://"):].partition("/")
        if not bucket or not key:
            raise ValueError(f"{uri!r} needs both a bucket and a key (s3://bucket/key)")
        return cls(bucket, key)

    def __str__(self) -> str:
        return f"s3://{self.bucket}/{self.key}"


def is_valid_job_id(job_id: object) -> bool:
    """Job ids become key segments, so only letters, digits, ``-`` and ``_`` are allowed, at most
    ``JOB_ID_MAX_LENGTH`` of them.

    >>> is_valid_job_id("a" * 64), is_valid_job_id("a" * 65), is_valid_job_id("a/b")
    (True, False, False)
    """
    return isinstance(job_id, str) and bool(JOB_ID_PATTERN.match(job_id))


def is_key_safe_id(job_id: object) -> bool:
    """A job id that is safe as a table key though perhaps too long: its job can still be failed by it."""
    return isinstance(job_id, str) and bool(_KEY_SAFE_ID.match(job_id))


def safe_file_name(file_name: str) -> str:
    """The last path segment of ``file_name`` with anything but ``[A-Za-z0-9._-]`` replaced by ``_``.

    >>> safe_file_name("../../etc/my scan (1).PDF")
    'my_scan_1_.PDF'
    """
    base = file_name.replace("\\", "/").rsplit("/", 1)[-1]
    cleaned = _UNSAFE_FILE_CHARS.sub("_", base).strip("._") or "document"
    return cleaned[:200]


@dataclass(frozen=True)
class AsyncRequestRef:
    """What a request object's key says: the job, and the chunk for a chunk request of a split job."""

    job_id: str
    chunk_index: int | None = None


#: A figure crop's path relative to its job's result folder: a block's ``image``, and its member in the GPU endpoint's
#: answer (``ocr_platform.outputs.figures`` makes them).
FIGURE_NAME = re.compile(r"^figures/(?P<page>\d{5})-(?P<number>\d{2,4})\.png$")


def figure_name(page: int, number: int) -> str:
    """The crop of picture ``number`` (from 1) of 1-based ``page``, relative to the job's result folder.

    >>> figure_name(1, 2)
    'figures/00001-02.png'
    """
    return f"figures/{page:05d}-{number:02d}.png"


def page_image_name(page: int) -> str:
    """A page image's name in the job's result folder (what hOCR's ``image`` and ALTO's ``fileName`` say).

    >>> page_image_name(3)
    'pages/00003.jpg'
    """
    return f"pages/{page:05d}.jpg"


def parse_figure_name(name: object) -> tuple[int, int] | None:
    """The page and number a figure's name says; ``None`` for any other name (or a non-string).

    >>> parse_figure_name("figures/00003-01.png"), parse_figure_name("figures/../x.png"), parse_figure_name(3)
    ((3, 1), None, None)
    """
    match = FIGURE_NAME.match(name) if isinstance(name, str) else None
    return None if match is None else (int(match.group("page")), int(match.group("number")))


@dataclass(frozen=True)
class StorageLayout:
    """Builds the keys of one platform bucket."""

    bucket: str

    def _checked(self, job_id: str) -> str:
        if not is_valid_job_id(job_id):
            raise ValueError(f"job id {job_id!r} may only contain letters, digits, '-' and '_' (at most {JOB_ID_MAX_LENGTH})")
        return job_id

    def document_uri(self, job_id: str, file_name: str) -> S3Uri:
        return S3Uri(self.bucket, f"{DOCUMENTS_PREFIX}{self._checked(job_id)}/{safe_file_name(file_name)}")

    def upload_uri(self, job_id: str, file_name: str) -> S3Uri:
        """Where the jobs API's presigned POST uploads a job's file."""
        return S3Uri(self.bucket, f"{UPLOADS_PREFIX}{self._checked(job_id)}/{safe_file_name(file_name)}")

    def result_key(self, job_id: str) -> str:
        return f"{RESULTS_PREFIX}{self._checked(job_id)}/result.json"

    def result_uri(self, job_id: str) -> str:
        return str(S3Uri(self.bucket, self.result_key(job_id)))

    def result_pdf_key(self, job_id: str) -> str:
        """The searchable PDF a job asked for with ``outputs: ["pdf"]``, beside its result.json."""
        return self.output_key(job_id, "pdf")

    def output_key(self, job_id: str, output: str) -> str:
        """The file of format ``output`` (``OUTPUT_FILES``) beside the job's result.json.

        >>> StorageLayout("b").output_key("j1", "hocr")
        'results/j1/result.hocr'
        """
        return f"{RESULTS_PREFIX}{self._checked(job_id)}/{OUTPUT_FILES[output]}"

    def page_images_prefix(self, job_id: str) -> str:
        """Where a job's page images are (``ocr_platform.outputs.page_images``)."""
        return f"{RESULTS_PREFIX}{self._checked(job_id)}/pages/"

    def page_image_key(self, job_id: str, page: int) -> str:
        """The image of 1-based ``page`` as the engine read it, beside the result."""
        return f"{RESULTS_PREFIX}{self._checked(job_id)}/{page_image_name(page)}"

    def figures_prefix(self, job_id: str) -> str:
        """Where a job's figure crops are (``ocr_platform.outputs.figures``)."""
        return f"{RESULTS_PREFIX}{self._checked(job_id)}/figures/"

    def figure_key(self, job_id: str, page: int, number: int) -> str:
        """The crop of picture ``number`` (from 1) of 1-based ``page``, beside the result.

        >>> StorageLayout("b").figure_key("j1", 3, 1)
        'results/j1/figures/00003-01.png'
        """
        return f"{RESULTS_PREFIX}{self._checked(job_id)}/{figure_name(page, number)}"

    def raw_result_key(self, job_id: str) -> str:
        return f"{RESULTS_PREFIX}{self._checked(job_id)}/raw.json"

    def chunk_result_key(self, job_id: str, index: int) -> str:
        """Where chunk ``index`` (0-based) of a split job leaves its partial result for the merge."""
        return f"{CHUNKS_PREFIX}{self._checked(job_id)}/{index:05d}.json"

    def chunk_raw_key(self, job_id: str, index: int) -> str:
        return f"{CHUNKS_PREFIX}{self._checked(job_id)}/{index:05d}.raw.json"

    def async_request_uri(self, job_id: str, chunk_index: int | None = None) -> S3Uri:
        """The request object of a job's async inference, or of chunk ``chunk_index`` of a split job.

        >>> StorageLayout("b").async_request_uri("j1", 3).key
        'async/requests/j1.c00003.json'
        """
        suffix = "" if chunk_index is None else f".c{chunk_index:05d}"
        return S3Uri(self.bucket, f"{ASYNC_REQUESTS_PREFIX}{self._checked(job_id)}{suffix}.json")

    def parse_async_request(self, uri: str) -> AsyncRequestRef | None:
        """Which job (and chunk) a request object in this bucket is for; ``None`` for any other location.

        A notification's ``inputLocation`` names the request, and so the chunk, since every request of a
        job has the job id as its InferenceId.

        >>> StorageLayout("b").parse_async_request("s3://b/async/requests/j1.c00003.json")
        AsyncRequestRef(job_id='j1', chunk_index=3)
        >>> StorageLayout("b").parse_async_request("s3://b/async/requests/j1.json")
        AsyncRequestRef(job_id='j1', chunk_index=None)
        """
        try:
            location = S3Uri.parse(uri)
        except ValueError:
            return None
        match = _ASYNC_REQUEST_KEY.match(location.key) if location.bucket == self.bucket else None
        if match is None:
            return None
        chunk = match.group("chunk")
        return AsyncRequestRef(match.group("job_id"), None if chunk is None else int(chunk))

    def dead_letter_key(self, message_id: str) -> str:
        safe = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in message_id)[:128]
        return f"{DEAD_LETTERS_PREFIX}{safe}.json"

    def async_output_uri(self) -> str:
        return f"s3://{self.bucket}/{ASYNC_OUTPUTS_PREFIX}"

    def async_failure_uri(self) -> str:
        return f"s3://{self.bucket}/{ASYNC_FAILURES_PREFIX}"
