"""The CLI's one-line promise, command by command, for the mistakes a user makes.

Each case runs the installed console script in its own process, as a user does, and asserts what that user
sees: exactly one ``error: <code>: <message>`` line on stderr, the documented exit status, and no traceback.
The cases: an output folder that does not exist, a path that cannot be written, a model directory that is not
one, a file that is not there, a type no route reads, ``--pdf`` of a file that has no page images, and a run
stopped with Ctrl-C. None of them needs a model or a local stack: each is refused before either starts.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from ocr_platform.core.client_errors import ExitStatus
from tests.documents import PUBLIC

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "samples" / "invoice.pdf"
OFFICE = PUBLIC / "office"
#: A file no route reads (an MP3: an ID3 tag and MPEG audio frames), written into each test's folder.
UNREAD = "sound.mp3"
UNREAD_BYTES = b"ID3\x04\x00\x00\x00\x00\x00\x00" + b"\xff\xfb\x90\x64" + bytes(413)
DOCX = OFFICE / "blk-paras-and-tables.docx"
NO_FOLDER = "no-such-folder/result.json"
UNWRITABLE = "/proc/ocr-platform-cannot-write-here.json"  # refused by the kernel, even to root


@pytest.fixture
def user_env(tmp_path: Path) -> dict[str, str]:
    """A user's shell with this checkout on the path, a home of its own and no platform configured."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(("AWS_", "OCR_"))}
    env.update(
        PYTHONPATH=os.pathsep.join([str(ROOT / "lambdas"), str(ROOT / "infra")]),
        OCR_LOCAL_HOME=str(tmp_path / "local-home"),  # no local stack: none may start for a refused command
        AWS_CONFIG_FILE=str(tmp_path / "no-aws-config"), AWS_SHARED_CREDENTIALS_FILE=str(tmp_path / "no-aws-credentials"),
        AWS_EC2_METADATA_DISABLED="true", HOME=str(tmp_path),
    )
    return env


def _cli(argv: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ocr_platform.cli.commands", *argv], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=120, check=False)


def _one_error_line(done: subprocess.CompletedProcess[str]) -> str:
    """The code of the one ``error:`` line, after checking that nothing else went to stderr."""
    assert "Traceback" not in done.stderr + done.stdout, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    code, _, message = lines[0].removeprefix("error: ").partition(": ")
    assert message.strip(), lines[0]
    return code


CASES = [
    # (argv, code, exit status)
    (["ocr", str(SAMPLE), "--model", "pp-ocrv5", "--output", NO_FOLDER], "output_unwritable", ExitStatus.USAGE),
    (["ocr", str(SAMPLE), "--model", "pp-ocrv5", "--pdf", NO_FOLDER], "output_unwritable", ExitStatus.USAGE),
    (["ocr", str(SAMPLE), "--model", "pp-ocrv5", "--raw-output", NO_FOLDER], "output_unwritable", ExitStatus.USAGE),
    (["ocr", str(SAMPLE), "--model", "pp-ocrv5", "--output", UNWRITABLE], "output_unwritable", ExitStatus.USAGE),
    (["ocr", str(SAMPLE), "--model", "pp-ocrv5", "--format", "pdf", "--output", str(ROOT / "README.md" / "x.pdf")],
     "output_unwritable", ExitStatus.USAGE),
    (["ocr", "no-such-file.pdf", "--model", "pp-ocrv5"], "file_not_found", ExitStatus.USAGE),
    (["ocr", UNREAD, "--model", "pp-ocrv5"], "unsupported_type", ExitStatus.JOB_FAILED),
    (["ocr", str(DOCX), "--model", "pp-ocrv5", "--pdf", "out.pdf"], "unsupported_type", ExitStatus.JOB_FAILED),
    (["run", str(SAMPLE), "--model", "pp-ocrv5", "--output", NO_FOLDER], "output_unwritable", ExitStatus.USAGE),
    (["run", str(SAMPLE), "--model", "pp-ocrv5", "--pdf", NO_FOLDER], "output_unwritable", ExitStatus.USAGE),
    (["run", str(SAMPLE), "--model", "pp-ocrv5", "--output", UNWRITABLE], "output_unwritable", ExitStatus.USAGE),
    (["run", "no-such-file.pdf", "--model", "pp-ocrv5"], "file_not_found", ExitStatus.USAGE),
    (["run", str(DOCX), "--model", "pp-ocrv5", "--pdf", "out.pdf"], "unsupported_type", ExitStatus.USAGE),
    (["run", str(SAMPLE), "--model", "pp-ocrv5", "--format", "pdf"], "output_required", ExitStatus.USAGE),
    (["result", "some-job", "--output", NO_FOLDER], "output_unwritable", ExitStatus.USAGE),
    (["result", "some-job", "--pdf", UNWRITABLE], "output_unwritable", ExitStatus.USAGE),
    (["submit", "no-such-file.pdf", "--model", "pp-ocrv5"], "file_not_found", ExitStatus.USAGE),
    (["status", "some-job"], "no_platform", ExitStatus.USAGE),
    (["models", "seed", "no-such-model-dir"], "not_a_model_dir", ExitStatus.USAGE),
    (["models", "seed", str(ROOT / "samples")], "not_a_model_dir", ExitStatus.USAGE),
    (["local", "env"], "no_local_stack", ExitStatus.USAGE),
]


@pytest.mark.parametrize(("argv", "code", "status"), CASES, ids=[" ".join(Path(a).name for a in c[0][:1] + c[0][2:]) for c in CASES])
def test_a_bad_input_is_one_error_line_with_its_documented_exit_status(
    argv: list[str], code: str, status: ExitStatus, user_env: dict[str, str], tmp_path: Path
) -> None:
    (tmp_path / UNREAD).write_bytes(UNREAD_BYTES)
    done = _cli(argv, user_env, tmp_path)
    assert (_one_error_line(done), done.returncode) == (code, int(status))
    assert not (tmp_path / "local-home").exists() or not any((tmp_path / "local-home").iterdir()), "a refused command started a local stack"


def test_a_type_no_route_reads_is_refused_before_any_model_library_loads(user_env: dict[str, str], tmp_path: Path) -> None:
    """``ocr`` decides the type from the file's bytes first: no Paddle module is imported for a refusal."""
    probe = (
        "import sys; from ocr_platform.cli.commands import main; rc = main(['ocr', sys.argv[1], '--model', 'pp-ocrv5']); "
        "print(rc, sorted({m.split('.')[0] for m in sys.modules if m.startswith(('paddle', 'faster_paddle', 'onnxruntime'))}))"
    )
    (tmp_path / UNREAD).write_bytes(UNREAD_BYTES)
    done = subprocess.run([sys.executable, "-c", probe, UNREAD], env=user_env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=120, check=False)
    assert _one_error_line(done) == "unsupported_type"
    assert done.stdout.strip() == "1 []"


def test_a_run_stopped_with_ctrl_c_says_so_in_one_line(user_env: dict[str, str], tmp_path: Path) -> None:
    """Ctrl-C while ``ocr`` reads a four-page scan: one ``error: interrupted`` line and the shell's 130, no traceback."""
    process = subprocess.Popen(
        [sys.executable, "-m", "ocr_platform.cli.commands", "ocr", str(PUBLIC / "pikepdf-fourpages.pdf"), "--model", "pp-ocrv5",
         "--text-layer", "ignore", "--output", str(tmp_path / "r.json")],
        env=user_env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        # A shell starts background jobs with SIGINT ignored, and the child would inherit that: a user's Ctrl-C
        # reaches a foreground command, so the child gets the default disposition back.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert process.stderr is not None
    first = process.stderr.readline()  # the first page's progress line: the command is at work, reading pages
    assert first.strip() == "page 1/4", first
    process.send_signal(signal.SIGINT)
    out, rest = process.communicate(timeout=120)
    done = subprocess.CompletedProcess(process.args, process.returncode, out, rest)
    assert (_one_error_line(done), done.returncode) == ("interrupted", 130)
