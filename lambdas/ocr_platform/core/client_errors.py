"""Errors a client meets before or around a job, each with a machine code and a documented exit status.

A person running the CLI must never see a Python traceback for something they can fix: no platform to
talk to, no region, missing or wrong credentials, a denied permission, an unreachable endpoint, a stack or
job that does not exist. Each of those becomes one ``PlatformClientError``, which the CLI prints as the
single line ``error: <code>: <message>`` and turns into its exit status.

>>> err = describe_aws_error(__import__("botocore.exceptions").exceptions.NoRegionError())
>>> (err.code, int(err.exit_status))
('no_region', 2)
"""

from __future__ import annotations

from enum import IntEnum

from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    ConnectTimeoutError,
    EndpointConnectionError,
    NoCredentialsError,
    NoRegionError,
    PartialCredentialsError,
    ReadTimeoutError,
)


class ExitStatus(IntEnum):
    """The CLI's exit statuses (the README's "Errors and exit codes" table and docs/contracts.md list the same)."""

    OK = 0
    #: the job (or the in-process OCR run) ended FAILED.
    JOB_FAILED = 1
    #: bad arguments or configuration: nothing to talk to, no region, a stack that does not exist, an unreadable file.
    USAGE = 2
    #: AWS refused or could not be reached: credentials, permissions, network, throttling.
    AWS_ACCESS = 3
    #: no such job, or no result for it yet.
    NOT_FOUND = 4
    #: ``--wait`` / ``run`` gave up while the job was still running.
    TIMED_OUT = 5
    #: stopped with Ctrl-C (128 + SIGINT, as shells report it).
    INTERRUPTED = 130


class PlatformClientError(Exception):
    """A problem the client's user can fix, with a machine ``code`` and a message that says how.

    Attributes:
        code: stable machine code (``no_platform``, ``no_region``, ``access_denied``, ``job_not_found``, ...).
        message: one sentence for a person, ending with what to do.
        exit_status: what the CLI exits with.
    """

    def __init__(self, code: str, message: str, exit_status: ExitStatus = ExitStatus.USAGE) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.exit_status = exit_status


_ACCESS_CODES = {
    "AccessDenied": "access_denied",
    "AccessDeniedException": "access_denied",
    "UnauthorizedOperation": "access_denied",
    "AuthorizationError": "access_denied",
    "UnrecognizedClientException": "invalid_credentials",
    "InvalidClientTokenId": "invalid_credentials",
    "InvalidAccessKeyId": "invalid_credentials",
    "SignatureDoesNotMatch": "invalid_credentials",
    "ExpiredToken": "expired_credentials",
    "ExpiredTokenException": "expired_credentials",
    "RequestExpired": "expired_credentials",
    "ThrottlingException": "throttled",
    "Throttling": "throttled",
    "ProvisionedThroughputExceededException": "throttled",
}
_MISSING_CODES = {"ResourceNotFoundException", "NoSuchBucket", "AWS.SimpleQueueService.NonExistentQueue", "QueueDoesNotExist"}


def describe_aws_error(err: Exception) -> PlatformClientError:
    """The user-facing form of a boto3/botocore exception (any other exception: ``aws_error``)."""
    if isinstance(err, PlatformClientError):
        return err
    if isinstance(err, NoRegionError):
        return PlatformClientError(
            "no_region", "No AWS region is configured; pass --region, or set AWS_DEFAULT_REGION (or AWS_REGION)."
        )
    if isinstance(err, (NoCredentialsError, PartialCredentialsError)):
        return PlatformClientError(
            "no_credentials",
            "No AWS credentials were found; configure them (aws configure, AWS_PROFILE or AWS_ACCESS_KEY_ID/"
            "AWS_SECRET_ACCESS_KEY), or use the local stack: ocr-platform local up.",
            ExitStatus.AWS_ACCESS,
        )
    if isinstance(err, (EndpointConnectionError, ConnectTimeoutError, ReadTimeoutError)):
        return PlatformClientError(
            "endpoint_unreachable",
            f"{err}. Check the network, the region and any AWS_ENDPOINT_URL* variable "
            "(a local stack that was stopped: ocr-platform local up).",
            ExitStatus.AWS_ACCESS,
        )
    if isinstance(err, ClientError):
        error = err.response.get("Error", {})
        aws_code, message = str(error.get("Code", "")), " ".join((str(error.get("Message", "")) or str(err)).split())
        operation = getattr(err, "operation_name", "the call")
        if aws_code in {"401", "403"}:  # an error body botocore could not parse: the HTTP status still says it
            aws_code, message = "AccessDenied", f"HTTP {aws_code}"
        if aws_code in _ACCESS_CODES:
            code = _ACCESS_CODES[aws_code]
            hint = (
                "grant the caller this permission on the platform's resources"
                if code == "access_denied"
                else "retry in a moment" if code == "throttled" else "refresh or fix the AWS credentials"
            )
            return PlatformClientError(code, f"{operation} was refused ({aws_code}: {message}); {hint}.", ExitStatus.AWS_ACCESS)
        if aws_code in _MISSING_CODES:
            return PlatformClientError(
                "resource_not_found",
                f"{operation}: {message}. The platform's bucket, queue or table is missing: check --stack/--region "
                "or the OCR_* variables.",
            )
        return PlatformClientError("aws_error", f"{operation} failed ({aws_code}: {message}).", ExitStatus.AWS_ACCESS)
    if isinstance(err, BotoCoreError):
        return PlatformClientError("aws_error", str(err), ExitStatus.AWS_ACCESS)
    return PlatformClientError("aws_error", f"{type(err).__name__}: {err}", ExitStatus.AWS_ACCESS)


#: Every code the command line prints in its ``error: <code>: <message>`` line besides a FAILED job's own code, with
#: the exit status it goes with and what it means: the registry the command-line page's table is generated from
#: when the site is built (docs/using-it/cli.md); a test checks it against every ``PlatformClientError`` raised.
CLIENT_CODES: dict[str, tuple[ExitStatus, str]] = {
    "no_platform": (ExitStatus.USAGE, "no stack, no `OCR_*` variables and no local stack; the message says how to get one"),
    "no_region": (ExitStatus.USAGE, "a stack was named but no region is configured"),
    "stack_not_found": (ExitStatus.USAGE, "no stack of that name in the region"),
    "not_a_platform_stack": (ExitStatus.USAGE, "the stack lacks the `BucketName`, `QueueUrl` or `TableName` output"),
    "incomplete_configuration": (ExitStatus.USAGE, "only some of `OCR_BUCKET_NAME`, `OCR_QUEUE_URL`, `OCR_TABLE_NAME` are set"),
    "resource_not_found": (ExitStatus.USAGE, "the bucket, queue or table does not exist"),
    "file_not_found": (ExitStatus.USAGE, "the `FILE` of `ocr`, `run` or `submit` is not a readable file"),
    "output_unwritable": (ExitStatus.USAGE, "`--output`, `--pdf` or `--raw-output` names a folder that does not exist, a folder "
                          "itself, or a file that cannot be written; refused before any work is done"),
    "file_error": (ExitStatus.USAGE, "a file the command had to read or write could not be (the system's reason and the path follow)"),
    "not_a_model_dir": (ExitStatus.USAGE, "`models seed` was given a path that is not a model directory (`inference.yml` and "
                        "`inference.pdiparams` or `model.safetensors`); refused before the platform is looked for"),
    "unsupported_type": (ExitStatus.USAGE, "`run --pdf` (or `--format pdf`) of an Office or HTML file, which has no page images to lay "
                         "text over; refused before the job is submitted"),
    "unknown_model": (ExitStatus.USAGE, "the model is not in the routing table (`OcrClient.submit`; the CLI's `--model` choices refuse it first)"),
    "invalid_uri": (ExitStatus.USAGE, "`status` or `result` was given an `s3://` argument that is not an `s3://bucket/key` URI"),
    "invalid_message": (ExitStatus.USAGE, "the job message `submit` would send fails the schema (for example `--lang` or `--pages`)"),
    "local_stack_failed": (ExitStatus.USAGE, "`run` could not start the local stack"),
    "no_local_stack": (ExitStatus.USAGE, "`local env` with no local stack running"),
    "output_required": (ExitStatus.USAGE, "`--format pdf` without `--output FILE` (a PDF is not printed)"),
    "no_credentials": (ExitStatus.AWS_ACCESS, "no AWS credentials were found"),
    "invalid_credentials": (ExitStatus.AWS_ACCESS, "AWS does not recognise the credentials"),
    "expired_credentials": (ExitStatus.AWS_ACCESS, "the credentials have expired"),
    "access_denied": (ExitStatus.AWS_ACCESS, "the caller lacks a permission"),
    "throttled": (ExitStatus.AWS_ACCESS, "AWS throttled the call"),
    "endpoint_unreachable": (ExitStatus.AWS_ACCESS, "the endpoint could not be reached or timed out"),
    "aws_error": (ExitStatus.AWS_ACCESS, "any other AWS error"),
    "job_failed": (ExitStatus.JOB_FAILED, "`result` of a `FAILED` job (the message carries the job's code)"),
    "output_unavailable": (ExitStatus.JOB_FAILED, "`ocr --format FMT` could not make that format from the result"),
    "job_not_found": (ExitStatus.NOT_FOUND, "no item for that job id in the table"),
    "result_not_ready": (ExitStatus.NOT_FOUND, "`result` of a job that is not `COMPLETED` yet"),
    "no_searchable_pdf": (ExitStatus.NOT_FOUND, "`result --pdf` or `run --pdf` of a job that has no `result.pdf` (it was not asked for, "
                          "or its route does not write one)"),
    "wait_timed_out": (ExitStatus.TIMED_OUT, "`submit --wait`, `status --wait` or `run` gave up while the job still runs"),
    "interrupted": (ExitStatus.INTERRUPTED, "stopped with Ctrl-C; a job already submitted goes on (`ocr-platform status JOB_ID`)"),
}
