"""The suite never depends on, touches or stops a local stack that the user runs.

The README's quick start leaves a local stack running (command 1) and then runs the test suite (command
2). Here a "user" starts a stack the way they would, ``ocr-platform local up`` with their own HOME and
no ``OCR_LOCAL_HOME``, and puts a file of their own in it. Then the end-to-end tests run their stack's
whole life cycle in a pytest of their own, in that same user's shell. Afterwards the user's stack must
still be up with the same process, ports and data.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import boto3
import botocore.session
import pytest

from ocr_platform.local.moto_account import REGION
from ocr_platform.local.supervisor import STATE_DIR_ENV, state_dir

REPO = Path(__file__).resolve().parents[2]
OCR_PLATFORM = str(Path(sys.executable).parent / "ocr-platform")
#: A quick end-to-end test: its module's stack starts, runs one job and stops.
E2E_TEST = "tests/local/test_e2e.py::test_cpu_route_failure_ends_failed_with_its_reason"
USER_OBJECT = ("notes/mine.txt", b"the user's own object")


def _user_shell(home: Path) -> dict[str, str]:
    """A user's environment: their own HOME, none of this session's isolation or AWS variables."""
    shell = {
        name: value for name, value in os.environ.items()
        if name not in (STATE_DIR_ENV, "PYTEST_CURRENT_TEST") and not name.startswith("AWS_")
    }
    shell["HOME"] = str(home)
    return shell


def test_every_test_runs_away_from_the_users_stack_and_aws_files(tmp_path_factory: pytest.TempPathFactory) -> None:
    session_temp = tmp_path_factory.getbasetemp()
    assert state_dir().is_relative_to(session_temp)
    files = botocore.session.get_session().get_config_variable
    for path in (files("config_file"), files("credentials_file")):
        assert Path(path).is_relative_to(session_temp) and not Path(path).exists()


def test_the_suite_leaves_a_users_running_stack_alone(tmp_path: Path) -> None:
    home = tmp_path / "user-home"
    home.mkdir()
    user = _user_shell(home)
    started = subprocess.run([OCR_PLATFORM, "local", "up"], env=user, capture_output=True, text=True, timeout=180)
    assert started.returncode == 0, started.stderr
    state_file = home / ".ocr-platform" / "local" / "stack.json"
    try:
        before = json.loads(state_file.read_text())
        s3 = boto3.client(
            "s3", endpoint_url=before["moto_url"], region_name=REGION,
            aws_access_key_id="local", aws_secret_access_key="local",
        )
        s3.put_object(Bucket=before["bucket"], Key=USER_OBJECT[0], Body=USER_OBJECT[1])

        suite = subprocess.run(
            [sys.executable, "-m", "pytest", E2E_TEST, "-q", "-p", "no:cacheprovider", "--basetemp", str(tmp_path / "suite")],
            cwd=REPO, env=user, capture_output=True, text=True, timeout=600,
        )

        assert suite.returncode == 0, suite.stdout[-4000:]
        assert json.loads(state_file.read_text()) == before  # same supervisor, ports and start time
        status = subprocess.run([OCR_PLATFORM, "local", "status"], env=user, capture_output=True, text=True, timeout=60)
        assert status.returncode == 0, status.stderr  # its supervisor runs and its moto answers
        assert json.loads(status.stdout)["pid"] == before["pid"]
        objects = s3.list_objects_v2(Bucket=before["bucket"]).get("Contents", [])
        assert [o["Key"] for o in objects] == [USER_OBJECT[0]]  # none of the suite's jobs landed here
        assert s3.get_object(Bucket=before["bucket"], Key=USER_OBJECT[0])["Body"].read() == USER_OBJECT[1]
    finally:
        subprocess.run([OCR_PLATFORM, "local", "down"], env=user, capture_output=True, timeout=120)
    assert not state_file.exists()
