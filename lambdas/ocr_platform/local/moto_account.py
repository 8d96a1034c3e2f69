"""The AWS account the local stack lives in: moto's account id, its region, dummy credentials, a client.

Why a module of its own: provisioning, the event sources, the alarm evaluator, the capacity fault and
``StackInfo`` all address the same moto server as the same account, and none of them should depend on
another just for these constants.

>>> moto_client("sqs", "http://127.0.0.1:5000").meta.region_name
'us-east-1'
"""

from __future__ import annotations

from typing import Any

import boto3

REGION = "us-east-1"
#: moto's default account: the one its backends (``sagemaker_backends[ACCOUNT][REGION]``) are keyed by.
ACCOUNT = "123456789012"
#: Any credentials satisfy moto; these are what every process of the local stack and its clients use.
CREDENTIALS = {"AWS_ACCESS_KEY_ID": "local", "AWS_SECRET_ACCESS_KEY": "local", "AWS_DEFAULT_REGION": REGION}


def moto_client(service: str, endpoint_url: str) -> Any:
    """A boto3 client for ``service`` on the moto server at ``endpoint_url``, in the local account."""
    return boto3.client(
        service, endpoint_url=endpoint_url, region_name=REGION,
        aws_access_key_id="local", aws_secret_access_key="local",
    )
