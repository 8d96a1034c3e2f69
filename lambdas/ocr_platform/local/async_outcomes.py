"""Where the local SageMaker runtime writes an async request's outcome: named as SageMaker names it.

The ``InvokeEndpointAsync`` reference says of ``Filename``: "If not specified, Amazon SageMaker AI generates a filename
based on the inference ID", and ``S3OutputPathExtension`` is "appended to the Amazon S3 output path"
(https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_runtime_InvokeEndpointAsync.html). So the output is
``{S3OutputPath}[/{S3OutputPathExtension}]/{Filename}``, or ``.../{InferenceId}.out`` without a ``Filename``: two
requests with one InferenceId and no ``Filename`` get the same OutputLocation, and the second overwrites the
first's output, as on AWS. A caller that gives several requests one InferenceId must name them apart itself.

The failure object lies beside it under the failure path: ``{stem}-error.out``, the stem being the ``Filename`` up to
its extension or the InferenceId. AWS documents no failure name; this one is the local stack's, and the platform
reads the name SageMaker returns (``FailureLocation``) rather than building it.

Both parameters are checked against the constraints of botocore's service model (``Filename``: 1-32 characters,
at most one dot; ``S3OutputPathExtension``: 1-512 characters of ``[a-zA-Z0-9!_.*'()/-]``, not a URI), which botocore
itself does not check: a bad one is a ``ValidationError`` here, as the service answers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_FILENAME = re.compile(r"^(?!.*\..*\.)[a-zA-Z0-9][a-zA-Z0-9\-_.]{0,31}$")
_EXTENSION = re.compile(r"^(?!s3:|https:)[a-zA-Z0-9!_.*'()/-]{1,512}$")


class InvalidOutputNameError(ValueError):
    """A ``Filename`` or ``S3OutputPathExtension`` outside the service's constraints."""


@dataclass(frozen=True)
class OutcomeLocations:
    output: str
    failure: str


def outcome_locations(
    output_path: str, failure_path: str, inference_id: str, *, filename: str | None = None, extension: str | None = None
) -> OutcomeLocations:
    """The S3 URIs of one request's output and failure objects (paths without a trailing slash).

    >>> outcome_locations("s3://b/out", "s3://b/fail", "job-1").output
    's3://b/out/job-1.out'
    >>> outcome_locations("s3://b/out", "s3://b/fail", "job-1", filename="c00002.out", extension="job-1").failure
    's3://b/fail/job-1/c00002-error.out'
    """
    if filename is not None and not _FILENAME.match(filename):
        raise InvalidOutputNameError(f"Value '{filename}' at 'filename' failed to satisfy constraint: 1-32 characters "
                                     "[a-zA-Z0-9-_.], starting with a letter or digit, at most one '.'.")
    if extension is not None and not _EXTENSION.match(extension):
        raise InvalidOutputNameError(f"Value '{extension}' at 's3OutputPathExtension' failed to satisfy constraint: "
                                     "1-512 characters [a-zA-Z0-9!_.*'()/-], not an s3: or https: URI.")
    folder = "" if not extension or not extension.strip("/") else "/" + extension.strip("/")
    name = filename or f"{inference_id}.out"
    stem = filename.rsplit(".", 1)[0] if filename else inference_id
    return OutcomeLocations(f"{output_path}{folder}/{name}", f"{failure_path}{folder}/{stem}-error.out")
