"""What the ``ocr-platform`` commands share: the job options their flags set, and how they print."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ocr_platform.core.client_errors import ExitStatus, PlatformClientError
from ocr_platform.core.s3_layout import OUTPUT_FILES


def engine_options(args: argparse.Namespace) -> dict[str, Any]:
    """The job's ``options`` from ``--variant``, ``--backend``, ``--no-orientation``, ``--text-layer``, ``--forms``,
    ``--html``, ``--pdf`` and ``--format`` (only what was set: a stored format or ``pdf`` is asked of the job in
    ``outputs``)."""
    options: dict[str, Any] = {}
    if args.variant:
        options["variant"] = args.variant
    if getattr(args, "backend", None):
        options["backend"] = args.backend
    if not args.orientation:
        options["orientation"] = False
    if args.text_layer:
        options["text_layer"] = args.text_layer
    if getattr(args, "forms", False):
        options["features"] = ["forms"]
    if getattr(args, "html", None):
        options["html"] = args.html
    outputs = ["pdf"] if getattr(args, "pdf", None) else []
    chosen = getattr(args, "format", None)
    if chosen in OUTPUT_FILES and chosen not in outputs:  # the job writes the file itself (a run, a submit)
        outputs.append(chosen)
    if outputs:
        options["outputs"] = outputs
    return options


#: What ``--format`` may name: result.json (the default), Markdown, the stored formats and the searchable PDF.
FORMAT_CHOICES = ("json", "md", "hocr", "alto", "textract", "pdf")


def write_formatted(body: bytes, output: Path | None) -> None:
    """A formatted result to ``output``, else to stdout."""
    if output is not None:
        output.write_bytes(body)
    else:
        sys.stdout.write(body.decode("utf-8"))
        sys.stdout.flush()


def pdf_target(args: argparse.Namespace) -> Path | None:
    """Where the searchable PDF goes: ``--pdf FILE``, or ``--output FILE`` with ``--format pdf`` (which needs one)."""
    if getattr(args, "format", None) != "pdf":
        return getattr(args, "pdf", None)
    if args.output is None:
        raise PlatformClientError("output_required", "--format pdf writes a file: name it with --output FILE.", ExitStatus.USAGE)
    return Path(args.output)


def print_json(data: Any) -> None:
    """``data`` as indented JSON on stdout."""
    print(json.dumps(data, indent=2, ensure_ascii=False, default=str))


def print_preview(text: str, max_lines: int = 20) -> None:
    """The first lines of a result's text on stderr, so a person sees what was read."""
    lines = text.replace("\f", "\n").splitlines()
    print("\n".join(f"  | {line}" for line in lines[:max_lines]) + ("\n  | ..." if len(lines) > max_lines else ""), file=sys.stderr)


def print_warnings(warnings: Sequence[Mapping[str, Any]]) -> None:
    """One ``warning: <code>: <message>`` line on stderr per warning of a result or job item."""
    for warning in warnings:
        print(f"warning: {warning.get('code')}: {warning.get('message')}", file=sys.stderr)


def check_writable(*paths: Path | None) -> None:
    """Refuse, before any work is done, an output path that cannot be written: its folder is missing or not
    writable, or the path is a folder (``output_unwritable``, exit 2)."""
    for path in paths:
        if path is None:
            continue
        folder = path.parent
        if path.is_dir():
            problem = f"{path} is a directory; name a file in it"
        elif not folder.is_dir():
            problem = f"the folder {folder} does not exist; create it (mkdir -p {folder}) or name a file in a folder that exists"
        else:
            try:  # asking the file system itself: permissions, a read-only mount, root's exceptions all answer here
                if path.exists():
                    path.open("ab").close()
                else:
                    tempfile.TemporaryFile(dir=folder).close()
            except OSError as err:
                problem = f"{path} cannot be written ({err.strerror or err}); name a file in a folder you can write to"
            else:
                continue
        raise PlatformClientError("output_unwritable", problem + ".", ExitStatus.USAGE)


def read_by(result: Mapping[str, Any]) -> str:
    """What read the result's pages, from each page's ``text_source``: the PDF's text layer, OCR with the
    engine that ran, both, or the file's own content (an Office, HTML, email or other file read from its content).

    >>> read_by({"engine": {"name": "PP-OCRv6"}, "pages": [{"text_source": "text_layer"}]})
    'text layer (1 page, no OCR)'
    >>> read_by({"engine": {"name": "PP-OCRv6"}, "pages": [{"text_source": "ocr"}, {"text_source": "mixed"}, {}]})
    'OCR with PP-OCRv6 (2 pages), text layer + OCR with PP-OCRv6 (1 page)'
    """
    engine = str(result.get("engine", {}).get("name", "?"))
    labels = {
        "text_layer": "text layer",
        "ocr": f"OCR with {engine}",
        "mixed": f"text layer + OCR with {engine}",
        "native": "the file's own content" + (f" + OCR with {engine} for pictures" if result.get("engine", {}).get("models") else ""),
    }
    counts: dict[str, int] = {}
    for page in result.get("pages", []):
        label = labels.get(str(page.get("text_source") or "ocr"), labels["ocr"])
        counts[label] = counts.get(label, 0) + 1
    if list(counts) == [labels["text_layer"]]:
        pages = counts[labels["text_layer"]]
        return f"text layer ({pages} page{'s' * (pages != 1)}, no OCR)"
    return ", ".join(f"{label} ({n} page{'s' * (n != 1)})" for label, n in counts.items()) or engine
