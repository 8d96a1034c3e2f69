"""The published JSON Schema of result.json (docs/schemas/result.schema.json) names every field the result's typed
shapes have (core.results, core.words), so it stays the contract's; the routes' outputs are checked against it in
tests/ocr/test_output_formats.py and tests/handlers/test_output_formats.py."""

from __future__ import annotations

import json

import pytest

from ocr_platform.core.results import Block, EngineInfo, Line, OcrResult, Page, ResultWarning
from ocr_platform.core.words import Word
from tests.result_schema import SCHEMA, validator


@pytest.mark.parametrize(
    ("shape", "definition"),
    [(OcrResult, None), (EngineInfo, "engine"), (Page, "page"), (Line, "line"), (Word, "word"), (Block, "block"), (ResultWarning, "warning")],
    ids=lambda value: value if isinstance(value, str) else getattr(value, "__name__", "result"),
)
def test_the_schema_names_every_typed_field(shape: type, definition: str | None) -> None:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    node = schema if definition is None else schema["$defs"][definition]
    missing = set(shape.__annotations__) - set(node["properties"])
    assert not missing, f"add {sorted(missing)} to docs/schemas/result.schema.json ({definition or 'the result'})"


def test_the_schema_is_a_valid_draft_2020_12_schema() -> None:
    assert validator().schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
