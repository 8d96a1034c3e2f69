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
