"""MkDocs hook (mkdocs.yml, ``hooks``): the reference pages written from the code as the site is built.

A page holds a marker such as ``<!-- generated: cli-reference -->`` where ``ocr_platform.cli.reference`` puts
the command line's reference (from the argument parser), the CLI's codes and exit statuses, or a job's error
codes (from the error registries), so that no option or code can be left out of the site.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lambdas"))  # this checkout's code, not an installed copy

from ocr_platform.cli.reference import fill  # noqa: E402


def on_page_markdown(markdown: str, **_: Any) -> str:
    return fill(markdown)
