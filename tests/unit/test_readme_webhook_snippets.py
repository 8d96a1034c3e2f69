"""The webhook verification snippets of docs/using-it/events-webhooks-url.md (once the README's), in Python and in
JavaScript, accept what the platform signs and refuse a wrong secret, a changed body and a replayed (old) request."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from ocr_platform.outputs.webhook_signing import sign

PAGE = Path(__file__).resolve().parents[2] / "docs" / "using-it" / "events-webhooks-url.md"
SECRET = b"0123456789abcdef0123456789abcdef"
BODY = json.dumps({"event_id": "e-1", "job_id": "j-1", "status": "COMPLETED", "text": "Grüße"}, ensure_ascii=False).encode()


def _block(after: str, language: str) -> str:
    """The first ``language`` code block of the page after the line that starts with ``after``."""
    text = PAGE.read_text(encoding="utf-8")
    rest = text.split("\n" + after, 1)[1]
    return rest.split(f"```{language}\n", 1)[1].split("\n```", 1)[0]


def _cases() -> list[tuple[str, bytes, bytes, str, bool]]:
    now = int(time.time())
    return [
        ("signed now", SECRET, BODY, sign(SECRET, BODY, timestamp=now), True),
        ("another secret", b"not the secret", BODY, sign(SECRET, BODY, timestamp=now), False),
        ("changed body", SECRET, BODY.replace(b"j-1", b"j-2"), sign(SECRET, BODY, timestamp=now), False),
        ("replayed 10 minutes later", SECRET, BODY, sign(SECRET, BODY, timestamp=now - 600), False),
        ("no signature", SECRET, BODY, "", False),
    ]


def test_the_python_snippet_verifies_what_the_platform_signs() -> None:
    namespace: dict[str, Any] = {}
    exec(compile(_block("Verifying a webhook in Python", "python"), "docs/using-it/events-webhooks-url.md", "exec"), namespace)  # noqa: S102 - the docs' own code
    for name, secret, body, header, valid in _cases():
        assert namespace["verify"](secret, body, header) is valid, name


@pytest.mark.skipif(shutil.which("node") is None, reason="Node.js is not installed (scripts/setup.sh needs it for the CDK CLI)")
def test_the_javascript_snippet_verifies_what_the_platform_signs(tmp_path: Path) -> None:
    cases = [
        {"name": name, "secret": secret.decode(), "body": body.hex(), "header": header, "valid": valid}
        for name, secret, body, header, valid in _cases()
    ]
    script = tmp_path / "verify.js"
    script.write_text(
        _block("And in JavaScript (Node)", "javascript")
        + "\nconst cases = " + json.dumps(cases) + ";\n"
        + "console.log(JSON.stringify(cases.map((c) => [c.name, verify(c.secret, Buffer.from(c.body, 'hex'), c.header) === c.valid])));\n",
        encoding="utf-8",
    )
    run = subprocess.run(["node", str(script)], capture_output=True, text=True, timeout=60, check=True)
    outcomes = json.loads(run.stdout)
    assert [name for name, ok in outcomes if not ok] == []
    assert len(outcomes) == len(cases)
