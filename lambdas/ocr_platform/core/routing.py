"""The model routing table: which backend runs each model a job may ask for.

Routing keys are part of the public contract (docs/contracts.md, "Model routing"). An unknown model is an
error, never a silent fallback to another backend.

>>> route("pp-ocrv5").backend
'lambda'
>>> route("paddleocr-vl").backend
'sagemaker'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ocr_platform.core.errors import ErrorCode, JobError

Backend = Literal["lambda", "sagemaker"]
BACKENDS: tuple[Backend, ...] = ("lambda", "sagemaker")


@dataclass(frozen=True)
class ModelSpec:
    """One routable model.

    Attributes:
        name: the routing key clients send in the job message.
        backend: ``lambda`` (CPU processor container Lambda) or ``sagemaker`` (GPU async endpoint).
        description: what the model is for, shown by the CLI and the README.
    """

    name: str
    backend: Backend
    description: str


MODEL_TABLE: dict[str, ModelSpec] = {
    spec.name: spec
    for spec in (
        ModelSpec("pp-ocrv5", "lambda", "PP-OCRv5 text detection + recognition (lines, polygons, scores)"),
        ModelSpec("pp-ocrv6", "lambda", "PP-OCRv6 text detection + recognition, sizes tiny/small/medium (options.variant)"),
        ModelSpec("pp-structurev3", "lambda", "PP-StructureV3 layout, tables and Markdown"),
        ModelSpec("paddleocr-vl", "sagemaker", "PaddleOCR-VL vision-language document parsing on a GPU"),
    )
}


def route(model: str) -> ModelSpec:
    """Return the spec for ``model`` or raise ``JobError(unknown_model)`` naming the models that exist."""
    try:
        return MODEL_TABLE[model]
    except KeyError:
        known = ", ".join(sorted(MODEL_TABLE))
        raise JobError(ErrorCode.UNKNOWN_MODEL, f"Unknown model {model!r}; use one of: {known}.") from None
