"""What the ``ocr-platform`` commands share: the job options their flags set, and how they print."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from typing import Any


def engine_options(args: argparse.Namespace) -> dict[str, Any]:
    """The job's ``options`` from ``--variant``, ``--backend``, ``--no-orientation``, ``--text-layer`` and ``--pdf`` (only what was set)."""
    options: dict[str, Any] = {}
    if args.variant:
        options["variant"] = args.variant
    if getattr(args, "backend", None):
        options["backend"] = args.backend
    if not args.orientation:
        options["orientation"] = False
    if args.text_layer:
        options["text_layer"] = args.text_layer
    if getattr(args, "pdf", None):
        options["outputs"] = ["pdf"]
    return options


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
