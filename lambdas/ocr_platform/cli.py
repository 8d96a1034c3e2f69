"""The ``ocr-platform`` command line.

    ocr-platform submit FILE --model M [--lang L] [--pages P] [--wait] [--stack NAME]
    ocr-platform status JOB_ID [--stack NAME]
    ocr-platform result JOB_ID [--output F] [--stack NAME]

Resources come from ``--stack`` (a deployed stack's outputs), else ``OCR_BUCKET_NAME`` /
``OCR_QUEUE_URL`` / ``OCR_TABLE_NAME``, else the stack named by ``OCR_STACK_NAME`` (default
``ocr-platform-dev``). Endpoints follow the standard boto3 variables (``AWS_ENDPOINT_URL``, ...).
Exit status: 0 on success, 1 when the job FAILED, 2 on a usage or client error.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Sequence

from ocr_platform.client import ClientError, OcrClient, PlatformResources
from ocr_platform.models import MODEL_TABLE


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ocr-platform", description="Serverless OCR on AWS: submit documents, poll jobs, read results.")
    commands = parser.add_subparsers(dest="command", required=True)

    def with_stack(cmd: argparse.ArgumentParser) -> argparse.ArgumentParser:
        cmd.add_argument("--stack", help="deployed stack to read resource names from (default: $OCR_* variables, then $OCR_STACK_NAME or ocr-platform-dev)")
        return cmd

    submit = with_stack(commands.add_parser("submit", help="upload a file and enqueue an OCR job"))
    submit.add_argument("file", type=Path)
    submit.add_argument("--model", required=True, choices=sorted(MODEL_TABLE))
    submit.add_argument("--lang", default="en", help="PaddleOCR language code (default: en)")
    submit.add_argument("--pages", help='page selection, e.g. "1-3,7"')
    submit.add_argument("--wait", action="store_true", help="poll until the job finishes and print its final state")
    submit.add_argument("--timeout", type=float, default=900.0, help="seconds --wait polls before giving up")

    status = with_stack(commands.add_parser("status", help="print a job's DynamoDB item"))
    status.add_argument("job_id")

    result = with_stack(commands.add_parser("result", help="print or save a completed job's result.json"))
    result.add_argument("job_id")
    result.add_argument("--output", "-o", type=Path, help="write result.json here instead of stdout")
    return parser


def _print(data: Any) -> None:
    print(json.dumps(data, indent=2, ensure_ascii=False, default=str))


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        client = OcrClient(PlatformResources.discover(args.stack))
        if args.command == "submit":
            job = client.submit(args.file, model=args.model, language=args.lang, pages=args.pages)
            print(f"submitted job {job['job_id']} ({job['model']}, {args.file.name})", file=sys.stderr)
            if not args.wait:
                _print(job)
                return 0
            job = client.wait(job["job_id"], timeout=args.timeout, on_change=lambda j: print(f"  {j['status']}", file=sys.stderr))
            _print(job)
            return 0 if job["status"] == "COMPLETED" else 1
        if args.command == "status":
            job = client.status(args.job_id)
            _print(job)
            return 1 if job["status"] == "FAILED" else 0
        if args.command == "result":
            document = client.result(args.job_id)
            if args.output:
                args.output.write_text(json.dumps(document, indent=2, ensure_ascii=False))
                print(f"wrote {args.output} ({document['page_count']} page(s))", file=sys.stderr)
            else:
                _print(document)
            return 0
    except (ClientError, TimeoutError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    return 2


if __name__ == "__main__":
    sys.exit(main())
