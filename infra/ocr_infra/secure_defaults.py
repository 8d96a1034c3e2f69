"""Secure defaults shared by every construct of the platform, and the cdk-nag acknowledgement helpers.

One place decides how a bucket, a queue and a function role are locked down, so every
construct gets the same baseline (encryption at rest, TLS-only resource policies, no public access,
no AWS-managed IAM policies) and a reviewer reads it once.

IAM statements go through :func:`allow`: a statement whose resource still needs a wildcard (an S3 key
prefix, a log stream, an API without resource-level permissions) must carry the reason, which becomes
the cdk-nag ``AwsSolutions-IAM5`` acknowledgement for exactly that finding.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from aws_cdk import Acknowledgment, RemovalPolicy, Stack, Validations
from aws_cdk import aws_iam as iam
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


def secure_bucket_props(*, retain: bool) -> dict[str, Any]:
    """Keyword arguments every bucket of the platform shares.

    SSE-S3 (not SSE-KMS): the server-access-log target must use SSE-S3, and the data bucket stays usable
    by clients and frontends (uploads, presigned URLs) without extra KMS grants; objects are still
    encrypted at rest with AES-256. Public access is blocked at the bucket, ACLs are disabled, and a
    bucket policy denies every non-TLS request.
    """
    return {
        "encryption": s3.BucketEncryption.S3_MANAGED,
        "block_public_access": s3.BlockPublicAccess.BLOCK_ALL,
        "enforce_ssl": True,
        "minimum_tls_version": 1.2,
        "object_ownership": s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
        "removal_policy": removal_policy(retain),
    }


def secure_queue_props() -> dict[str, Any]:
    """Keyword arguments every queue shares: SQS-managed SSE (senders need no KMS grant) and TLS only."""
    return {
        "encryption": sqs.QueueEncryption.SQS_MANAGED,
        "enforce_ssl": True,
    }
