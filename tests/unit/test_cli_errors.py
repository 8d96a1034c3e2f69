"""The CLI's first minutes: where it finds the platform, and one line (never a traceback) for what a user can fix.

Each case is a failure a new user met or can meet: no region, no credentials, nothing deployed and no
local stack, an unreachable endpoint, a denied permission, a missing stack, a job id that does not exist.
"""

from __future__ import annotations

import json
from pathlib import Path

import boto3
import pytest

from ocr_platform.cli import commands as cli
from ocr_platform.cli.client import resolve_target
from ocr_platform.core.client_errors import ExitStatus, PlatformClientError
from ocr_platform.local import stack, supervisor
from tests.conftest import BUCKET, TABLE, Platform

PLATFORM_COMMANDS = [["status", "abc"], ["result", "abc"], ["submit", "README.md", "--model", "pp-ocrv5"]]


@pytest.fixture
def nothing_configured(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A fresh machine: no region, no credentials, no OCR_* variables, no stack name, no local stack."""
    for name in ("AWS_DEFAULT_REGION", "AWS_REGION", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
                 "OCR_STACK_NAME", "OCR_BUCKET_NAME", "OCR_QUEUE_URL", "OCR_TABLE_NAME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv(supervisor.STATE_DIR_ENV, str(tmp_path / "no-local-stack"))
    monkeypatch.setattr(boto3, "DEFAULT_SESSION", None)  # a session of an earlier test holds its credentials


def _one_error_line(capsys: pytest.CaptureFixture[str]) -> tuple[str, str]:
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err + captured.out
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith("error: ")
    code, _, message = lines[0].removeprefix("error: ").partition(": ")
    return code, message


@pytest.mark.parametrize("argv", PLATFORM_COMMANDS)
def test_with_nothing_to_talk_to_every_platform_command_says_what_to_do(
    nothing_configured: None, argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(argv) == ExitStatus.USAGE == 2
    code, message = _one_error_line(capsys)
    assert code == "no_platform"
    assert "ocr-platform local up" in message and "--stack" in message


@pytest.mark.parametrize("region", [None, ""])
def test_a_named_stack_without_a_region_is_one_line_not_a_botocore_traceback(
    nothing_configured: None, region: str | None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    if region is not None:
        monkeypatch.setenv("AWS_DEFAULT_REGION", region)  # the empty value made botocore build "cloudformation..amazonaws.com"
    assert cli.main(["status", "abc", "--stack", "ocr-platform-dev"]) == 2
    code, message = _one_error_line(capsys)
    assert code == "no_region"
    assert "--region" in message


def test_a_named_stack_without_credentials_is_one_line(
    nothing_configured: None, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["status", "abc", "--stack", "ocr-platform-dev", "--region", "eu-west-1"]) == ExitStatus.AWS_ACCESS
    code, message = _one_error_line(capsys)
    assert code == "no_credentials"
    assert "ocr-platform local up" in message


def test_a_stack_that_does_not_exist(platform: Platform, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["status", "abc", "--stack", "ocr-platform-nope", "--region", "us-east-1"]) == 2
    code, message = _one_error_line(capsys)
    assert code == "stack_not_found"
    assert "ocr-platform-nope" in message and "cdk deploy" in message


def test_an_unknown_job_id_is_not_found(platform: Platform, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("OCR_BUCKET_NAME", BUCKET)
    monkeypatch.setenv("OCR_QUEUE_URL", platform.queue_url)
    monkeypatch.setenv("OCR_TABLE_NAME", TABLE)
    for argv in (["status", "no-such-job"], ["result", "no-such-job"]):
        assert cli.main(argv) == ExitStatus.NOT_FOUND == 4
        code, message = _one_error_line(capsys)
        assert code == "job_not_found"
        assert "no-such-job" in message


def test_a_table_that_does_not_exist(platform: Platform, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("OCR_BUCKET_NAME", BUCKET)
    monkeypatch.setenv("OCR_QUEUE_URL", platform.queue_url)
    monkeypatch.setenv("OCR_TABLE_NAME", "not-the-table")
    assert cli.main(["status", "abc"]) == 2
    code, _ = _one_error_line(capsys)
    assert code == "resource_not_found"


def test_access_denied_is_one_line(platform: Platform, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """A caller whose IAM policy does not allow dynamodb:GetItem (moto enforces IAM when asked to)."""
    iam = boto3.client("iam")
    iam.create_user(UserName="frontend")
    policy = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:ListBucket", "Resource": "*"}]}
    iam.put_user_policy(UserName="frontend", PolicyName="too-little", PolicyDocument=json.dumps(policy))
    key = iam.create_access_key(UserName="frontend")["AccessKey"]
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", key["AccessKeyId"])
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", key["SecretAccessKey"])
    monkeypatch.delenv("AWS_SESSION_TOKEN")
    monkeypatch.setattr(boto3, "DEFAULT_SESSION", None)
    monkeypatch.setenv("OCR_BUCKET_NAME", BUCKET)
    monkeypatch.setenv("OCR_QUEUE_URL", platform.queue_url)
    monkeypatch.setenv("OCR_TABLE_NAME", TABLE)
    from moto.core import set_initial_no_auth_action_count

    @set_initial_no_auth_action_count(0)
    def as_the_frontend_user() -> int:
        return cli.main(["status", "abc"])

    assert as_the_frontend_user() == ExitStatus.AWS_ACCESS
    code, message = _one_error_line(capsys)
    assert code == "access_denied"
    assert "GetItem" in message


def test_the_running_local_stack_is_found_without_any_configuration(
    nothing_configured: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """What `status` right after `run` relies on: the stack `run` started is found from its state file."""
    info = stack.StackInfo(
        pid=__import__("os").getpid(), moto_url="http://127.0.0.1:1", lambda_url="http://127.0.0.1:2",
        sagemaker_url="http://127.0.0.1:3", bucket="b", queue_url="http://127.0.0.1:1/q", dlq_url="d", table="t",
        endpoint="e", started_at="2026-11-23T00:00:00.000Z",
    )
    monkeypatch.setattr(supervisor, "running_stack", lambda: info)
    target = resolve_target()
    assert (target.resources.bucket, target.resources.table, target.resources.queue_url) == ("b", "t", "http://127.0.0.1:1/q")
    assert target.environment["AWS_ENDPOINT_URL"] == "http://127.0.0.1:1"
    assert target.environment["AWS_DEFAULT_REGION"]


def test_variables_win_over_the_local_stack_and_a_stack_name_wins_over_both(
    nothing_configured: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(supervisor, "running_stack", lambda: pytest.fail("the local stack must not be consulted"))
    monkeypatch.setenv("OCR_BUCKET_NAME", "vb")
    monkeypatch.setenv("OCR_QUEUE_URL", "vq")
    monkeypatch.setenv("OCR_TABLE_NAME", "vt")
    assert resolve_target().resources.bucket == "vb"
    monkeypatch.setenv("OCR_STACK_NAME", "ocr-platform-prod")
    with pytest.raises(PlatformClientError) as err:
        resolve_target()
    assert err.value.code == "no_region"  # went for the stack, not the variables


def test_an_unreadable_file_is_one_line(nothing_configured: None, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["ocr", "no-such-file.pdf", "--model", "pp-ocrv5"]) == 2
    assert _one_error_line(capsys)[0] == "file_not_found"


def test_the_readme_lists_every_exit_status() -> None:
    """The exit codes the docs list (docs/using-it/cli.md, once in the README) are the ones the CLI uses."""
    from ocr_platform.cli.reference import fill

    readme = fill((Path(__file__).resolve().parents[2] / "docs" / "using-it" / "cli.md").read_text())
    for status in ExitStatus:
        assert f"| {int(status)} |" in readme, f"docs/using-it/cli.md's exit code table lacks {status.name}"
