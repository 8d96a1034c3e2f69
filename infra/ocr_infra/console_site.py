"""The web console's hosting: a private bucket served over HTTPS by CloudFront through origin access control.

The files (``console/`` and a ``config.json`` naming the jobs API and its user pool) are published after a
deploy by ``ocr-platform console publish`` (``ocr_platform.console``), not by CDK's BucketDeployment, whose
handler needs wildcard S3 actions and a managed policy that this stack's roles do without."""

from __future__ import annotations

from dataclasses import dataclass

from aws_cdk import Duration
from aws_cdk import aws_cloudfront as cloudfront
from aws_cdk import aws_cloudfront_origins as origins
from aws_cdk import aws_s3 as s3
from constructs import Construct

from ocr_infra.secure_defaults import acknowledge, secure_bucket_props, skip_checkov


@dataclass(frozen=True)
class ConsoleSiteProps:
    """Props of :class:`ConsoleSite`.

    Attributes:
        access_log_bucket: where the console bucket's server access logs go (the platform's log bucket).
        retain: keep the console bucket when the stack is deleted (the stage's ``retain_data``).
    """

    access_log_bucket: s3.IBucket
    retain: bool


class ConsoleSite(Construct):
    """A private bucket and a CloudFront distribution for the console.

    The distribution answers HTTPS only (HTTP is redirected), reads the bucket through origin access
    control (the bucket has no public access and no website endpoint), and adds security headers (HSTS, a
    content security policy that allows only the API, Cognito and the platform bucket to be called,
    nosniff, frame denial, a strict referrer policy) to every answer.
    """

    def __init__(self, scope: Construct, construct_id: str, props: ConsoleSiteProps) -> None:
        super().__init__(scope, construct_id)
        # 1. Bucket: private, encrypted, TLS only, access-logged; CloudFront reads it through OAC.
        self._bucket = s3.Bucket(
            self,
            "Files",
            server_access_logs_bucket=props.access_log_bucket,
            server_access_logs_prefix="console-bucket/",
            **secure_bucket_props(retain=props.retain),
        )
        skip_checkov(
            self._bucket,
            "CKV_AWS_21",
            "Not versioned: it holds the console's static files, which `ocr-platform console publish` uploads from the "
            "repository after each deploy (no user data); a bad publish is undone by publishing the previous commit.",
        )
        # 2. Distribution: HTTPS only, index.html at the root, the security headers on every answer.
        headers = cloudfront.ResponseHeadersPolicy(
            self,
            "SecurityHeaders",
            security_headers_behavior=cloudfront.ResponseSecurityHeadersBehavior(
                strict_transport_security=cloudfront.ResponseHeadersStrictTransportSecurity(
                    access_control_max_age=Duration.days(365), include_subdomains=True, override=True
                ),
                content_type_options=cloudfront.ResponseHeadersContentTypeOptions(override=True),
                frame_options=cloudfront.ResponseHeadersFrameOptions(frame_option=cloudfront.HeadersFrameOption.DENY, override=True),
                referrer_policy=cloudfront.ResponseHeadersReferrerPolicy(
                    referrer_policy=cloudfront.HeadersReferrerPolicy.STRICT_ORIGIN_WHEN_CROSS_ORIGIN, override=True
                ),
                content_security_policy=cloudfront.ResponseHeadersContentSecurityPolicy(
                    content_security_policy=(
                        "default-src 'self'; img-src 'self' https://*.amazonaws.com blob:; "
                        "connect-src 'self' https://*.amazonaws.com; frame-ancestors 'none'; base-uri 'self'; form-action 'none'"
                    ),
                    override=True,
                ),
            ),
        )
        self._distribution = cloudfront.Distribution(
            self,
            "Distribution",
            comment="OCR platform console",
            default_root_object="index.html",
            default_behavior=cloudfront.BehaviorOptions(
                origin=origins.S3BucketOrigin.with_origin_access_control(self._bucket),
                viewer_protocol_policy=cloudfront.ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
                response_headers_policy=headers,
                cache_policy=cloudfront.CachePolicy.CACHING_OPTIMIZED,
            ),
        )
        # The same reason answers cdk-nag's rule and checkov's check on the same setting.
        for rule, check, reason in (
            ("AwsSolutions-CFR1", None, "The console is for the stage's invited users wherever they are; sign-in, not "
             "geography, decides who uses it."),
            ("AwsSolutions-CFR2", "CKV_AWS_68", "The distribution serves static files only; every request that does "
             "work goes to the jobs API, behind its JWT authorizer and the stage's throttling."),
            ("AwsSolutions-CFR3", "CKV_AWS_86", "CloudFront's standard logs need a bucket with ACLs, which the "
             "platform's buckets disable; the console is static, and the jobs API logs every request."),
            ("AwsSolutions-CFR4", "CKV_AWS_174", "No custom domain is configured: the default *.cloudfront.net "
             "certificate is used, whose security policy CloudFront fixes at TLSv1; a stage with its own domain and "
             "certificate sets TLS 1.2."),
        ):
            acknowledge(self._distribution, rule, reason)
            if check:
                skip_checkov(self._distribution, check, reason)

    @property
    def origin(self) -> str:
        """The console's origin, which the jobs API and the platform bucket answer cross-origin calls from."""
        return f"https://{self._distribution.distribution_domain_name}"

    @property
    def bucket(self) -> s3.Bucket:
        return self._bucket

    @property
    def distribution(self) -> cloudfront.Distribution:
        return self._distribution
