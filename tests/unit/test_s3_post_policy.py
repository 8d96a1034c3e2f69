"""The local stack's check of S3 browser uploads against forms botocore really signs (no network)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import boto3
import pytest
from botocore.config import Config

from ocr_platform.local.s3_post_policy import PostPolicyError, check_post_policy

SECRETS = {"local": "local"}


def _form(signature_version: str = "s3v4") -> dict[str, str]:
    s3 = boto3.client("s3", region_name="us-east-1", endpoint_url="http://127.0.0.1:9", aws_access_key_id="local",
                      aws_secret_access_key="local", config=Config(signature_version=signature_version))
    form = s3.generate_presigned_post(
        Bucket="bkt", Key="uploads/j1/scan.png", Fields={"Content-Type": "image/png"},
        Conditions=[{"Content-Type": "image/png"}, ["content-length-range", 1, 100]], ExpiresIn=900,
    )
    return {name.lower(): value for name, value in form["fields"].items()}


def test_the_form_as_signed_passes() -> None:
    check_post_policy("bkt", _form(), 50, secrets=SECRETS)


@pytest.mark.parametrize(
    ("change", "size", "code"),
    [
        ({"key": "documents/elsewhere.png"}, 50, "AccessDenied"),
        ({"content-type": "text/html"}, 50, "AccessDenied"),
        ({"x-amz-meta-owner": "mallory"}, 50, "AccessDenied"),
        ({}, 101, "EntityTooLarge"),
        ({}, 0, "EntityTooSmall"),
        ({"x-amz-signature": "0" * 64}, 50, "SignatureDoesNotMatch"),
    ],
)
def test_a_form_used_for_anything_else_is_refused_as_s3_refuses_it(change: dict[str, str], size: int, code: str) -> None:
    with pytest.raises(PostPolicyError) as refused:
        check_post_policy("bkt", {**_form(), **change}, size, secrets=SECRETS)
    assert refused.value.code == code


def test_another_bucket_an_expired_form_and_a_sigv2_form_are_refused() -> None:
    with pytest.raises(PostPolicyError, match="Policy Condition failed"):
        check_post_policy("other-bucket", _form(), 50, secrets=SECRETS)
    with pytest.raises(PostPolicyError, match="Policy expired"):
        check_post_policy("bkt", _form(), 50, secrets=SECRETS, now=datetime.now(UTC) + timedelta(hours=1))
    with pytest.raises(PostPolicyError) as sigv2:
        check_post_policy("bkt", _form("s3"), 50, secrets=SECRETS)
    assert sigv2.value.code == "InvalidRequest"
