"""The published JSON Schema of result.json (docs/schemas/result.schema.json), for tests that check a route's output."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

SCHEMA = Path(__file__).resolve().parents[1] / "docs" / "schemas" / "result.schema.json"


@cache
def validator() -> Draft202012Validator:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def assert_valid_result(document: Any) -> None:
    """``document`` (as stored: plain JSON) is a result.json the schema allows; the errors, with their paths, if not."""
    document = json.loads(json.dumps(document))
    errors = sorted(validator().iter_errors(document), key=lambda e: list(e.path))
    assert not errors, [f"{'/'.join(map(str, e.path))}: {e.message}" for e in errors[:10]]
