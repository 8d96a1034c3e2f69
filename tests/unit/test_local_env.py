"""``ocr-platform local env``: the environment of the local stack as shell ``export`` lines.

The README's AWS CLI flow (``tests/local/test_e2e.py``) evals it against a running stack; these cases
need none.
"""

from __future__ import annotations

import subprocess

import pytest

from ocr_platform.cli import commands as cli
from ocr_platform.local.stack import StackInfo


def _info(**changes: str) -> StackInfo:
    values = {
        "pid": 1, "moto_url": "http://127.0.0.1:4566", "lambda_url": "http://127.0.0.1:4567",
        "sagemaker_url": "http://127.0.0.1:4568", "bucket": "ocr-local-data",
        "queue_url": "http://127.0.0.1:4566/123456789012/ocr-local-jobs-queue", "dlq_url": "http://127.0.0.1:4566/123456789012/dlq",
        "table": "ocr-local-jobs", "endpoint": "ocr-local-paddleocr-vl", "started_at": "2026-11-23T08:00:00.000Z",
    }
    return StackInfo(**{**values, **changes})


def test_a_shell_that_evals_the_lines_has_every_variable_any_aws_client_reads() -> None:
    info = _info(table="odd name's table")
    script = "\n".join(info.export_lines()) + '\nprintf "%s|%s|%s|%s\\n" "$AWS_ENDPOINT_URL" "$AWS_REGION" "$AWS_DEFAULT_REGION" "$OCR_TABLE_NAME"'

    shell = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env={}, check=True)

    assert shell.stdout.strip() == "http://127.0.0.1:4566|us-east-1|us-east-1|odd name's table"
    names = {line.split("=", 1)[0].removeprefix("export ") for line in info.export_lines()}
    assert {
        "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_LAMBDA", "AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME", "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY", "OCR_BUCKET_NAME", "OCR_QUEUE_URL",
    } <= names


def test_without_a_running_stack_it_says_how_to_start_one(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["local", "env"]) == 2

    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.strip().splitlines() == ["error: no_local_stack: no local stack is running; run `ocr-platform local up`"]
