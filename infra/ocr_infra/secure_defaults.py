"""Secure defaults shared by every construct of the platform, and the cdk-nag acknowledgement helpers.

One place decides how a bucket, a queue and a function role are locked down, so every
construct gets the same baseline (encryption at rest, TLS-only resource policies, no public access,
no AWS-managed IAM policies) and a reviewer reads it once.

IAM statements go through :func:`allow`: a statement whose resource still needs a wildcard (an S3 key
prefix, a log stream, an API without resource-level permissions) must carry the reason, which becomes
the cdk-nag ``AwsSolutions-IAM5`` acknowledgement for exactly that finding.

checkov, the scanner security reviewers run on the synthesized template, gets the same treatment: a
finding that is not fixed is answered by :func:`skip_checkov` on the resource that owns it, with a reason
that lands in the template (``Metadata.checkov.skip``), where checkov reports the check as skipped with it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from aws_cdk import Acknowledgment, CfnResource, RemovalPolicy, Stack, Validations
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_logs as logs
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_sqs as sqs
from constructs import Construct, IConstruct

NAG_PACK = "AwsSolutions"


def acknowledge(scope: IConstruct, rule_id: str, reason: str) -> None:
    """Acknowledge one cdk-nag finding (``AwsSolutions-S1``, ``AwsSolutions-IAM5[Resource::...]``) on ``scope``.

    The acknowledgement covers ``scope`` and every construct below it, so put it on the narrowest
    construct that owns the finding.
    """
    if not reason or len(reason) < 20:
        raise ValueError(f"acknowledging {rule_id} needs a specific reason, got {reason!r}")
    Validations.of(scope).acknowledge(Acknowledgment(id=rule_id, reason=reason))


#: The key of a resource's CloudFormation ``Metadata`` that checkov reads its skips from.
CHECKOV_METADATA_KEY = "checkov"
#: A checkov skip's comment shorter than this is a label, not a reason (tests/infra/test_checkov.py holds the
#: synthesized template to the same bar).
MIN_CHECKOV_REASON_LENGTH = 60
_CHECKOV_ID = re.compile(r"^CKV2?_AWS_\d+$")


def skip_checkov(scope: IConstruct, check_id: str, reason: str) -> None:
    """Answer checkov's ``check_id`` (``CKV_AWS_117``) on ``scope``'s CloudFormation resource with ``reason``.

    The skip is written to the resource's ``Metadata`` as ``{"checkov": {"skip": [{"id": ..., "comment": ...}]}}``,
    the form checkov's CloudFormation runner reads; it then reports the check as skipped with the comment. Unlike a
    cdk-nag acknowledgement it covers one resource only: ``scope`` is that resource (a ``CfnResource``) or an L2
    construct whose default child it is. A check may be answered once per resource.
    """
    if not _CHECKOV_ID.match(check_id):
        raise ValueError(f"{check_id!r} is not a checkov AWS check id (CKV_AWS_<n> or CKV2_AWS_<n>)")
    if not reason or len(reason) < MIN_CHECKOV_REASON_LENGTH:
        raise ValueError(f"skipping checkov's {check_id} needs a specific reason, got {reason!r}")
    resource = scope if isinstance(scope, CfnResource) else scope.node.default_child
    if not isinstance(resource, CfnResource):
        raise TypeError(f"{scope.node.path} has no CloudFormation resource to record checkov's {check_id} skip on")
    metadata = resource.get_metadata(CHECKOV_METADATA_KEY) or {}
    skips = list(metadata.get("skip", []))
    if any(skip["id"] == check_id for skip in skips):
        raise ValueError(f"{resource.node.path} already answers checkov's {check_id}")
    resource.add_metadata(CHECKOV_METADATA_KEY, {**metadata, "skip": [*skips, {"id": check_id, "comment": reason}]})


def flatten_reference(scope: IConstruct, value: Any) -> str:
    """The string cdk-nag shows for a (possibly tokenized) policy resource, e.g. ``<Bucket.Arn>/documents/*``.

    Mirrors cdk-nag's ``flattenCfnReference``: ``Ref`` -> ``<Id>``, ``Fn::GetAtt`` -> ``<Id.Attr>``,
    ``Fn::Join`` joined, ``Fn::Sub`` placeholders ``${X}`` -> ``<X>``.
    """
    resolved = Stack.of(scope).resolve(value)

    def visit(node: Any) -> str:
        if node is None:
            return ""
        if isinstance(node, str):
            return node.replace("${", "<").replace("}", ">")
        if isinstance(node, Mapping):
            if "Fn::Join" in node:
                delimiter, items = node["Fn::Join"]
                return delimiter.join(visit(item) for item in items)
            if "Fn::Sub" in node:
                return visit(node["Fn::Sub"])
            if "Fn::GetAtt" in node:
                resource, attribute = node["Fn::GetAtt"]
                return f"<{visit(resource)}.{visit(attribute)}>"
            if "Fn::ImportValue" in node:
                return visit(node["Fn::ImportValue"])
            if "Ref" in node:
                return f"<{visit(node['Ref'])}>"
        return json.dumps(node, separators=(",", ":"))

    return visit(resolved)


def wildcard_findings(scope: IConstruct, actions: Iterable[str], resources: Iterable[str]) -> list[str]:
    """The ``AwsSolutions-IAM5[...]`` finding ids a statement with these actions and resources raises."""
    findings = [f"{NAG_PACK}-IAM5[Action::{action}]" for action in actions if "*" in action]
    for resource in resources:
        flat = flatten_reference(scope, resource)
        if "*" in flat:
            findings.append(f"{NAG_PACK}-IAM5[Resource::{flat}]")
    return findings


def acknowledge_wildcards(
    scope: IConstruct, actions: Iterable[str], resources: Iterable[str], reason: str
) -> list[str]:
    """Acknowledge the IAM5 findings of one statement (granted by CDK or by :func:`allow`) on ``scope``."""
    findings = wildcard_findings(scope, actions, resources)
    for finding in findings:
        acknowledge(scope, finding, reason)
    return findings


def allow(
    role: iam.IRole,
    actions: Sequence[str],
    resources: Sequence[str],
    *,
    reason: str | None = None,
    conditions: Mapping[str, Any] | None = None,
) -> iam.PolicyStatement:
    """Add one Allow statement to ``role``'s policy; a wildcard in an action or resource needs ``reason``."""
    statement = iam.PolicyStatement(
        effect=iam.Effect.ALLOW,
        actions=list(actions),
        resources=list(resources),
        conditions=dict(conditions) if conditions else None,
    )
    role.add_to_principal_policy(statement)
    findings = wildcard_findings(role, actions, resources)
    if findings and not reason:
        raise ValueError(f"{findings} grant wildcards: pass the reason that justifies them")
    for finding in findings:
        acknowledge(role, finding, reason or "")
    return statement


def lambda_role(scope: Construct, construct_id: str, *, description: str) -> iam.Role:
    """An execution role with no managed policy: every permission is granted explicitly by its owner."""
    return iam.Role(
        scope,
        construct_id,
        assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
        description=description,
    )


def removal_policy(retain: bool) -> RemovalPolicy:
    return RemovalPolicy.RETAIN if retain else RemovalPolicy.DESTROY


def secure_bucket_props(*, retain: bool, encryption_key: kms.IKey | None = None) -> dict[str, Any]:
    """Keyword arguments every bucket of the platform shares.

    SSE-S3 (not SSE-KMS) by default: the server-access-log target must use SSE-S3, and the data bucket stays usable
    by clients and frontends (uploads, presigned URLs) without extra KMS grants; objects are still
    encrypted at rest with AES-256. With ``encryption_key`` (``PlatformConfig.customer_managed_key``, never for the
    access-log target) the bucket encrypts with that key instead, with an S3 Bucket Key, so S3 asks KMS for a data
    key per bucket and period rather than per object (fewer KMS requests to pay for). Public access is blocked at the
    bucket, ACLs are disabled, and a bucket policy denies every non-TLS request.
    """
    encryption: dict[str, Any] = (
        {"encryption": s3.BucketEncryption.S3_MANAGED}
        if encryption_key is None
        else {"encryption": s3.BucketEncryption.KMS, "encryption_key": encryption_key, "bucket_key_enabled": True}
    )
    return {
        **encryption,
        "block_public_access": s3.BlockPublicAccess.BLOCK_ALL,
        "enforce_ssl": True,
        "minimum_tls_version": 1.2,
        "object_ownership": s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
        "removal_policy": removal_policy(retain),
    }


#: Why a queue without a KMS key passes as encrypted, for checkov's CKV_AWS_27 (which only looks for ``KmsMasterKeyId``).
SQS_MANAGED_SSE_REASON = (
    "Encrypted at rest: SqsManagedSseEnabled (SSE-SQS, AES-256 with keys SQS manages); this check only recognizes a KMS "
    "key. SSE-SQS needs no key policy, so SNS and EventBridge can dead-letter into the platform's queues; the AWS "
    "managed key alias/aws/sqs cannot admit them (its key policy is fixed to the account's principals). A stage that "
    "needs its own key sets customer_managed_key=true: every queue then uses the stage's KMS key."
)


def secure_queue_props(encryption_key: kms.IKey | None = None) -> dict[str, Any]:
    """Keyword arguments every queue shares: TLS only, and SQS-managed SSE (senders need no KMS grant) or, with
    ``encryption_key`` (``PlatformConfig.customer_managed_key``), that KMS key."""
    if encryption_key is None:
        return {"encryption": sqs.QueueEncryption.SQS_MANAGED, "enforce_ssl": True}
    return {"encryption": sqs.QueueEncryption.KMS, "encryption_master_key": encryption_key, "enforce_ssl": True}


def skip_sqs_managed_sse(queue: sqs.Queue) -> None:
    """Answer checkov's CKV_AWS_27 on a queue that is encrypted with SSE-SQS (no KMS key); nothing on one with a key."""
    if queue.encryption_master_key is None:
        skip_checkov(queue, "CKV_AWS_27", SQS_MANAGED_SSE_REASON)


#: Why a log group without the stage's key passes, for checkov's CKV_AWS_158 (which only looks for ``KmsKeyId``).
AWS_MANAGED_LOG_KEY_REASON = (
    "CloudWatch Logs encrypts every log group at rest with keys it manages (AES-256-GCM). These logs are the "
    "platform's structured JSON lines (job ids, states, error codes) and access logs. customer_managed_key=true "
    "encrypts this log group with the stage's own KMS key ($1 a month plus requests) for a stage that must control "
    "and audit every use of the key."
)


def secure_log_group(
    scope: Construct, construct_id: str, *, retention: logs.RetentionDays, encryption_key: kms.IKey | None = None,
    log_group_name: str | None = None,
) -> logs.LogGroup:
    """A log group of the stack: its retention, deleted with the stack (its records are operational, not data the
    stage keeps), and encrypted with ``encryption_key`` when the stage has one (the key's policy admits CloudWatch
    Logs for the stack's log groups: :class:`ocr_infra.encryption.PlatformKey`); without, checkov's CKV_AWS_158 is
    answered with :data:`AWS_MANAGED_LOG_KEY_REASON`."""
    log_group = logs.LogGroup(
        scope, construct_id, retention=retention, encryption_key=encryption_key, removal_policy=RemovalPolicy.DESTROY,
        log_group_name=log_group_name,
    )
    if encryption_key is None:
        skip_checkov(log_group, "CKV_AWS_158", AWS_MANAGED_LOG_KEY_REASON)
    return log_group
