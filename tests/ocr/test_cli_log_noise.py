"""``ocr`` keeps the OCR libraries' own log lines (PaddleX's colour-coded ``Creating model`` lines) off the terminal,
and shows them with ``-v``: what a user sees on stderr is the command's own summary."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _ocr(flags: list[str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "lambdas"), str(ROOT / "infra")])}
    argv = [sys.executable, "-m", "ocr_platform.cli.commands", *flags, "ocr", str(ROOT / "samples" / "scan.png"),
            "--model", "pp-ocrv5", "--output", str(tmp_path / "result.json")]
    return subprocess.run(argv, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False)


@pytest.mark.parametrize(("flags", "shown"), [([], False), (["-v"], True)])
def test_the_libraries_model_loading_lines_reach_the_terminal_only_when_asked(flags: list[str], shown: bool, tmp_path: Path) -> None:
    done = _ocr(flags, tmp_path)

    assert done.returncode == 0, done.stderr
    assert ("Creating model" in done.stderr) is shown, done.stderr
    ours = [line for line in done.stderr.splitlines() if "Creating model" not in line]
    assert ours[0].startswith("OCR with PP-OCRv5 (1 page): 1 page(s)"), done.stderr  # the summary comes first
    assert all(line.startswith(("OCR with", "  |")) for line in ours), done.stderr  # then the text preview, nothing else
