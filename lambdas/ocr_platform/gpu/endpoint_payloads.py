"""What travels to and from the PaddleOCR-VL endpoint container: the request's parameters and the answer's envelope.

The container runs network-isolated: it makes no AWS call of its own, so everything it needs arrives with the
request and everything it makes leaves with the answer (docs/contracts.md, "SageMaker endpoint").

**Request.** ``InvokeEndpointAsync``'s ``InputLocation`` is the job's document object itself
(``documents/{job_id}/{file}``): SageMaker reads it and posts its bytes to ``/invocations``
(https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_runtime_InvokeEndpointAsync.html). No copy is
made, and every chunk request of a split job names the same object. The job's parameters travel in
``CustomAttributes``, which SageMaker forwards verbatim to the container as the
``X-Amzn-SageMaker-Custom-Attributes`` header, at most 1,024 visible US-ASCII characters (same page):
:class:`EndpointParameters`, compact JSON with every non-ASCII character and space escaped (``\\u0020``), so the
header holds only visible characters. A job whose parameters do not fit, with room kept for a chunk
(:data:`CHUNK_RESERVE`), fails at the invoker ``invalid_message`` (:class:`ParametersTooLargeError`).

**Answer.** A result is a ZIP (``application/zip``, :func:`build_answer`): ``answer.json`` (the job id, the chunk
it read, the pages whose images it holds, the figure crops it holds, whether it holds result.pdf), ``result.json``,
``pages/{page:05d}.jpg``, ``figures/{page:05d}-{n:02d}.png`` (each picture block's crop, named as its ``image``)
and, when the job asked for one, ``result.pdf``. SageMaker writes it to the endpoint's ``S3OutputPath``
(``async/outputs/``) and the completion function stores its members where the container used to put them. A
split plan and an error stay JSON (``{"job_id", "plan"}``; ``{"error": {code, message}, "chunk"}``).
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import IO, Any, NotRequired, TypedDict

from ocr_platform.core.chunks import Chunk, ChunkPayload, InvalidChunkError
from ocr_platform.core.errors import ErrorCode, JobError
from ocr_platform.core.s3_layout import parse_figure_name
from ocr_platform.jobs.messages import JobMessage, parse_job_message

#: SageMaker's limit on ``CustomAttributes`` (characters).
MAX_CUSTOM_ATTRIBUTES = 1024
#: Room the job's own request keeps for the ``chunk`` field its chunk requests add: index and count of up to 5
#: digits and a page selection of up to 100 characters (10 scattered pages of 4 digits take 49).
CHUNK_RESERVE = len(',"chunk":{"index":99999,"count":99999,"pages":""}') + 100
ANSWER_CONTENT_TYPE = "application/zip"
ANSWER_MANIFEST, ANSWER_RESULT, ANSWER_PDF, ANSWER_PAGES = "answer.json", "result.json", "result.pdf", "pages/"
#: The ``input`` of the message the container rebuilds from its parameters: the document is the request's body.
REQUEST_BODY_INPUT = "s3://sagemaker-request/body"


class ParametersTooLargeError(JobError):
    """A job whose parameters exceed what ``CustomAttributes`` can carry."""

    def __init__(self, job_id: str, size: int) -> None:
        super().__init__(ErrorCode.INVALID_MESSAGE, (
            f"The parameters of job {job_id} take {size} characters as the GPU endpoint's CustomAttributes, of "
            f"{MAX_CUSTOM_ATTRIBUTES - CHUNK_RESERVE} allowed (SageMaker's limit of {MAX_CUSTOM_ATTRIBUTES}, less "
            f"{CHUNK_RESERVE} kept for a chunk); shorten its options or page selection."))


@dataclass(frozen=True)
class EndpointParameters:
    """What the container needs of a job besides its document: the job message without ``input`` (the body) and
    ``callback_url`` (not the container's business), plus the chunk of a chunk request."""

    job_id: str
    model: str
    language: str
    pages: str | None = None
    options: Mapping[str, Any] | None = None
    chunk: Chunk | None = None

    @classmethod
    def of(cls, message: JobMessage, chunk: Chunk | None = None) -> EndpointParameters:
        return cls(message.job_id, message.model, message.language, message.pages, dict(message.options), chunk)

    def as_dict(self) -> dict[str, Any]:
        """The parameters as JSON fields (the chunk's as ``chunk``); unset ones left out."""
        body: dict[str, Any] = {"job_id": self.job_id, "model": self.model, "language": self.language}
        if self.pages:
            body["pages"] = self.pages
        if self.options:
            body["options"] = dict(self.options)
        if self.chunk is not None:
            body["chunk"] = self.chunk.to_payload()
        return body

    def to_attributes(self) -> str:
        """The ``CustomAttributes`` value; :class:`ParametersTooLargeError` when it (with room for a chunk) is too long.

        >>> EndpointParameters("j1", "paddleocr-vl", "en", "1-3, 7").to_attributes()
        '{"job_id":"j1","model":"paddleocr-vl","language":"en","pages":"1-3,\\\\u00207"}'
        """
        body = self.as_dict()
        # ensure_ascii escapes all but printable ASCII; a space only occurs inside strings with these separators.
        text = json.dumps(body, ensure_ascii=True, separators=(",", ":")).replace(" ", "\\u0020")
        limit = MAX_CUSTOM_ATTRIBUTES - (0 if self.chunk is not None else CHUNK_RESERVE)
        if len(text) > limit:
            raise ParametersTooLargeError(self.job_id, len(text))
        return text

    @classmethod
    def from_attributes(cls, text: str | None) -> tuple[JobMessage, Chunk | None]:
        """The job message (its ``input`` :data:`REQUEST_BODY_INPUT`) and chunk the header carries, validated as the
        queue's messages are; ``JobError(invalid_message)`` naming the problem."""
        if not text:
            raise JobError(ErrorCode.INVALID_MESSAGE, "The request has no X-Amzn-SageMaker-Custom-Attributes header "
                           "with the job's parameters.")
        try:
            data = json.loads(text)
            if not isinstance(data, dict):
                raise ValueError("not a JSON object")
            chunk = Chunk.from_payload(data["chunk"]) if isinstance(data.get("chunk"), dict) else None
            message = parse_job_message({**{k: v for k, v in data.items() if k != "chunk"}, "input": REQUEST_BODY_INPUT})
        except (ValueError, InvalidChunkError) as err:
            raise JobError(ErrorCode.INVALID_MESSAGE, f"The request's parameters are invalid: {err}") from None
        return message, chunk


class AnswerManifest(TypedDict):
    """``answer.json``: what a result answer holds."""

    job_id: str
    chunk: ChunkPayload | None
    pages: list[int]
    result_pdf: bool
    #: The figure crops' members (``figures/00001-01.png``); absent in an older container's answer.
    figures: NotRequired[list[str]]
    #: The formats the job asked for beside result.json (``outputs.formats``), which the completion function writes
    #: from result.json; absent in an older container's answer.
    outputs: NotRequired[list[str]]


def build_answer(result: Mapping[str, Any], *, chunk: Chunk | None, page_images: Mapping[int, bytes],
                 pdf: bytes | None, figures: Mapping[str, bytes] | None = None, outputs: Sequence[str] = ()) -> bytes:
    """The ZIP a result is answered with (members stored, not deflated: JPEG, PNG and PDF do not shrink);
    ``figures`` by their names (``figures/00001-01.png``)."""
    figures = figures or {}
    manifest: AnswerManifest = {"job_id": str(result["job_id"]), "chunk": chunk.to_payload() if chunk else None,
                                "pages": sorted(page_images), "result_pdf": pdf is not None, "figures": sorted(figures),
                                "outputs": list(outputs)}
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr(ANSWER_MANIFEST, json.dumps(manifest))
        archive.writestr(ANSWER_RESULT, json.dumps(result, ensure_ascii=False))
        for page, image in sorted(page_images.items()):
            archive.writestr(page_member(page), image)
        for name, png in sorted(figures.items()):
            archive.writestr(name, png)
        if pdf is not None:
            archive.writestr(ANSWER_PDF, pdf)
    return buffer.getvalue()


def page_member(page: int) -> str:
    """The member of page ``page``'s image.

    >>> page_member(7)
    'pages/00007.jpg'
    """
    return f"{ANSWER_PAGES}{page:05d}.jpg"


def is_answer_archive(head: bytes) -> bool:
    """Whether an output starts as a ZIP does (a result answer), not as JSON (a plan, or an older container's result)."""
    return head.startswith(b"PK\x03\x04")


class EndpointAnswer:
    """A result answer opened from ``fileobj``; ``JobError(invalid_result)`` when it is not one."""

    def __init__(self, fileobj: IO[bytes], *, max_result_bytes: int) -> None:
        try:
            self._zip = zipfile.ZipFile(fileobj)
            self.manifest: AnswerManifest = json.loads(self._zip.read(ANSWER_MANIFEST))
            info = self._zip.getinfo(ANSWER_RESULT)
            if info.file_size > max_result_bytes:
                raise JobError(ErrorCode.INVALID_RESULT, f"The endpoint's result.json is larger than {max_result_bytes} bytes.")
            self.result: Any = json.loads(self._zip.read(info))
            self.chunk_index: int | None = None
            if self.manifest.get("chunk") is not None:
                self.chunk_index = Chunk.from_payload(self.manifest["chunk"] or {}).index
            for page in self.manifest["pages"]:
                self._zip.getinfo(page_member(int(page)))
            if self.manifest["result_pdf"]:
                self._zip.getinfo(ANSWER_PDF)
            for name in self.manifest.get("figures", []):
                if parse_figure_name(name) is None:
                    raise ValueError(f"figure member {name!r} is not named figures/<page:05d>-<n:02d>.png")
                self._zip.getinfo(name)
        except JobError:
            raise
        except (zipfile.BadZipFile, KeyError, ValueError, TypeError, InvalidChunkError) as err:
            raise JobError(ErrorCode.INVALID_RESULT, f"The endpoint's answer is not a valid result archive: "
                           f"{type(err).__name__}: {err}") from None

    def page_images(self) -> Iterator[tuple[int, IO[bytes]]]:
        """Each page image, as a stream read from the archive."""
        for page in self.manifest["pages"]:
            with self._zip.open(page_member(int(page))) as stream:
                yield int(page), stream

    def figures(self) -> Iterator[tuple[int, int, IO[bytes]]]:
        """Each figure crop: its page, its number on the page and a stream read from the archive."""
        for name in self.manifest.get("figures", []):
            page, number = parse_figure_name(name) or (0, 0)
            with self._zip.open(name) as stream:
                yield page, number, stream

    def pdf(self) -> IO[bytes] | None:
        return self._zip.open(ANSWER_PDF) if self.manifest["result_pdf"] else None

    def close(self) -> None:
        self._zip.close()

