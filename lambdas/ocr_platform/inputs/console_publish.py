"""Publish the web console to a deployed stack: upload ``console/`` and its ``config.json`` to the console
bucket, then invalidate the distribution's cache (``ocr-platform console publish --stack NAME``).

A command rather than CDK's BucketDeployment: that construct's handler needs wildcard S3 actions and a
managed policy, which this stack's roles do without; the console is published by whoever deploys.
"""

from __future__ import annotations

import json
import mimetypes
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ocr_platform.core.client_errors import ExitStatus, PlatformClientError

#: The console's files in a checkout (the CLI and the local stack run from one).
CONSOLE_DIR = Path(__file__).resolve().parents[3] / "console"

#: The stack outputs the console needs.
CONSOLE_OUTPUTS = ("ConsoleBucketName", "ConsoleDistributionId", "ConsoleUrl", "ApiUrl", "UserPoolClientId")


def console_config(outputs: Mapping[str, str], region: str) -> dict[str, str]:
    """What ``config.json`` tells the console: the jobs API, Cognito's endpoint and the app client."""
    return {"apiUrl": outputs["ApiUrl"], "cognitoUrl": f"https://cognito-idp.{region}.amazonaws.com/",
            "userPoolClientId": outputs["UserPoolClientId"]}


def publish_console(
    outputs: Mapping[str, str], region: str, *, s3: Any, cloudfront: Any, directory: Path = CONSOLE_DIR
) -> list[str]:
    """Upload the console's files and config.json; invalidate the distribution; returns the keys written."""
    missing = [name for name in CONSOLE_OUTPUTS if name not in outputs]
    if missing:
        raise PlatformClientError("not_a_platform_stack", f"The stack has no output(s) {', '.join(missing)}; deploy this "
                                  "version of the platform first.", ExitStatus.USAGE)
    bucket = outputs["ConsoleBucketName"]
    keys = []
    for path in sorted(p for p in directory.rglob("*") if p.is_file()):
        key = path.relative_to(directory).as_posix()
        s3.put_object(Bucket=bucket, Key=key, Body=path.read_bytes(),
                      ContentType=mimetypes.guess_type(path.name)[0] or "application/octet-stream")
        keys.append(key)
    s3.put_object(Bucket=bucket, Key="config.json", Body=json.dumps(console_config(outputs, region)).encode(),
                  ContentType="application/json", CacheControl="no-store")
    keys.append("config.json")
    cloudfront.create_invalidation(DistributionId=outputs["ConsoleDistributionId"], InvalidationBatch={
        "Paths": {"Quantity": 1, "Items": ["/*"]}, "CallerReference": uuid.uuid4().hex,
    })
    return keys
