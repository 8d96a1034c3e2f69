"""awslabs' Serverless Rules on the synthesized template: nothing unacknowledged, no stale acknowledgement.

The rules run with the cfn-lint they need in ``.venv-lint`` (``scripts/setup.sh``; see
``requirements/serverless-rules.txt`` for why it is a venv of its own).
"""

from __future__ import annotations

import json
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from ocr_infra.serverless_rules import ACKNOWLEDGED_RULES
from tests.infra.conftest import Synthesis

LINT = Path(__file__).resolve().parents[2] / ".venv-lint" / "bin" / "cfn-lint"


def _serverless_findings(template: Path) -> list[dict]:
    if not LINT.exists():
        pytest.fail(f"{LINT} is missing: run `bash scripts/setup.sh`, which installs Serverless Rules there")
    run = subprocess.run([str(LINT), "-a", "cfn_lint_serverless.rules", "--format", "json", str(template)],
                         capture_output=True, text=True, timeout=300, check=False)
    assert run.stdout.strip(), run.stderr
    # cfn-lint's own rules run in test_outputs_and_checks; these are the Serverless Rules (ES*, WS*).
    return [m for m in json.loads(run.stdout) if m["Rule"]["Id"].startswith(("ES", "WS"))]


@pytest.fixture(scope="module")
def findings(synthesis: Synthesis) -> list[dict]:
    return [m for stack in synthesis.platform.stacks for m in _serverless_findings(synthesis.outdir / stack.template_file)]


def test_every_serverless_rules_finding_is_acknowledged_with_its_reason(findings: list[dict]) -> None:
    unacknowledged = [f"{m['Rule']['Id']} {'/'.join(map(str, m['Location']['Path'][:2]))}: {m['Message']}"
                      for m in findings if m["Rule"]["Id"] not in ACKNOWLEDGED_RULES]
    assert unacknowledged == []


def test_no_acknowledgement_is_stale(findings: list[dict]) -> None:
    assert set(ACKNOWLEDGED_RULES) <= {m["Rule"]["Id"] for m in findings}, "drop the acknowledgements nothing matches"


def test_no_finding_about_a_hand_over_that_has_no_destination_or_dlq(findings: list[dict]) -> None:
    """The reliability findings that were real are gone: ES7000 (SNS subscription without a redrive policy) and
    ES4000 (EventBridge target without a DLQ); ES1007 remains only as the Ref/GetAtt false positive, once per
    asynchronous invoker (two topics -> completion, topic + schedule -> scale-in, schedule -> sweeper)."""
    counts = Counter(m["Rule"]["Id"] for m in findings)
    assert counts["ES7000"] == counts["ES4000"] == 0
    assert counts["ES1007"] == 6  # and the S3 events rule -> ingest
