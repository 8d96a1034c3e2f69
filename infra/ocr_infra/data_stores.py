"""Storage: the platform bucket (with its access-log bucket) and the DynamoDB jobs table."""

from __future__ import annotations

from dataclasses import dataclass

from aws_cdk import Duration
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3
from constructs import Construct

from ocr_infra.secure_defaults import removal_policy, secure_bucket_props, skip_checkov
from ocr_platform.core import defaults
from ocr_platform.core.s3_layout import ASYNC_PREFIX, CHUNKS_PREFIX
from ocr_platform.jobs.store import (
    NOTIFICATION_INDEX_NAME,
    NOTIFICATION_INDEX_PARTITION_KEY,
    NOTIFICATION_INDEX_SORT_KEY,
    OWNER_INDEX_NAME,
    OWNER_INDEX_PARTITION_KEY,
    OWNER_INDEX_SORT_KEY,
    PARTITION_KEY,
    STATUS_INDEX_NAME,
    STATUS_INDEX_PARTITION_KEY,
    STATUS_INDEX_SORT_KEY,
    TTL_ATTRIBUTE,
)


@dataclass(frozen=True)
class DocumentBucketProps:
    """Props of :class:`DocumentBucket`.

    Attributes:
        async_io_expiry_days: objects under ``async/`` (SageMaker async requests, outputs, failures) and
            ``chunks/`` (the partial results of a split job that did not finish) expire after this many days;
            they are copies or intermediates of what ``results/`` keeps.
        access_log_retention_days: S3 server access logs expire after this many days.
        versioned: versioning of both buckets (on by default): an object overwritten or deleted, by mistake or by
            someone covering their tracks in the access logs, stays recoverable as a noncurrent version for
            ``async_io_expiry_days`` (7), after which a lifecycle rule deletes it, so versioning costs at most a
            week of what is overwritten or deleted. Off: checkov's CKV_AWS_21 is answered with that choice.
        retain: keep both buckets when the stack is deleted (default). With ``False`` they are deleted
            with the stack, which CloudFormation can only do once they are empty (every version included).
        encryption_key: the stage's KMS key (``PlatformConfig.customer_managed_key``) for the data bucket; the
            access-log bucket keeps SSE-S3, the only encryption S3 server access logging delivers to.
    """

    async_io_expiry_days: int = defaults.ASYNC_IO_EXPIRY_DAYS
    access_log_retention_days: int = defaults.ACCESS_LOG_RETENTION_DAYS
    versioned: bool = defaults.VERSIONED_BUCKET
    retain: bool = defaults.RETAIN_DATA
    encryption_key: kms.IKey | None = None


class DocumentBucket(Construct):
    """One bucket for documents, results, model cache and async I/O, plus its server-access-log bucket.

    Layout (``ocr_platform.core.s3_layout``): ``documents/``, ``results/``, ``models/``, ``async/``, ``chunks/``.
    """

    def __init__(self, scope: Construct, construct_id: str, props: DocumentBucketProps) -> None:
        super().__init__(scope, construct_id)
        # Server access logs are granted by a bucket policy, not the LogDeliveryWrite ACL (ACLs stay
        # disabled: BucketOwnerEnforced). Pinned here so the construct does not depend on cdk.json.
        self.node.set_context("@aws-cdk/aws-s3:serverAccessLogsUseBucketPolicy", True)
        # 1. Access-log bucket: SSE-S3 (required for a log target), TLS only, expiring logs, versioned like the data
        #    bucket. cdk-nag's S1 accepts it unlogged because it is the log target of a bucket in this stack.
        self._access_logs = s3.Bucket(
            self,
            "AccessLogs",
            versioned=props.versioned,
            lifecycle_rules=[
                s3.LifecycleRule(id="expire-access-logs", expiration=Duration.days(props.access_log_retention_days)),
                *([self._version_housekeeping(props, abort_incomplete_uploads=False)] if props.versioned else []),
            ],
            **secure_bucket_props(retain=props.retain),
        )
        skip_checkov(
            self._access_logs,
            "CKV_AWS_18",
            "This is the server-access-log target of the platform's buckets: S3 logging writes into it, so logging it "
            "into itself would log its own deliveries in a loop. Only the S3 logging service may write to it (bucket "
            "policy), and CloudTrail records the API calls made on it.",
        )
        # 2. Data bucket: encrypted, private, TLS only, access-logged, transient async I/O expires.
        async_rule = s3.LifecycleRule(
            id="expire-async-io",
            prefix=ASYNC_PREFIX,
            expiration=Duration.days(props.async_io_expiry_days),
        )
        chunks_rule = s3.LifecycleRule(
            id="expire-chunk-results",
            prefix=CHUNKS_PREFIX,
            expiration=Duration.days(props.async_io_expiry_days),
        )
        self._bucket = s3.Bucket(
            self,
            "Bucket",
            versioned=props.versioned,
            server_access_logs_bucket=self._access_logs,
            server_access_logs_prefix="platform-bucket/",
            lifecycle_rules=[async_rule, chunks_rule, self._version_housekeeping(props, abort_incomplete_uploads=True)],
            **secure_bucket_props(retain=props.retain, encryption_key=props.encryption_key),
        )
        if not props.versioned:
            for bucket in (self._access_logs, self._bucket):
                skip_checkov(
                    bucket,
                    "CKV_AWS_21",
                    "Versioning is turned off for this stage (PlatformConfig.versioned_bucket=false): an overwritten or "
                    "deleted object is gone at once. The default keeps noncurrent versions for async_io_expiry_days.",
                )
        # 3. EventBridge notifications, which the drop folder's rule reads ("Object Created" under inbox/). Set
        #    on the bucket resource itself: CDK's notifications custom resource would add a Lambda function
        #    with a wildcard s3:PutBucketNotification grant.
        cfn_bucket = self._bucket.node.default_child
        assert isinstance(cfn_bucket, s3.CfnBucket)
        cfn_bucket.add_property_override("NotificationConfiguration.EventBridgeConfiguration.EventBridgeEnabled", True)

    @staticmethod
    def _version_housekeeping(props: DocumentBucketProps, *, abort_incomplete_uploads: bool) -> s3.LifecycleRule:
        """Noncurrent versions expire after ``async_io_expiry_days``, and the delete markers they leave go too; the
        data bucket's rule also aborts the multipart uploads left incomplete for a day."""
        return s3.LifecycleRule(
            id="abort-incomplete-uploads" if abort_incomplete_uploads else "expire-noncurrent-versions",
            abort_incomplete_multipart_upload_after=Duration.days(1) if abort_incomplete_uploads else None,
            noncurrent_version_expiration=Duration.days(props.async_io_expiry_days) if props.versioned else None,
            expired_object_delete_marker=True if props.versioned else None,
        )

    @property
    def bucket(self) -> s3.Bucket:
        """The platform bucket."""
        return self._bucket

    @property
    def access_log_bucket(self) -> s3.Bucket:
        """The bucket receiving the platform bucket's server access logs."""
        return self._access_logs


@dataclass(frozen=True)
class JobTableProps:
    """Props of :class:`JobTable`.

    Attributes:
        retain: keep the table when the stack is deleted (default).
        encryption_key: the stage's KMS key (``PlatformConfig.customer_managed_key``); ``None``: the AWS managed key
            ``aws/dynamodb``.
    """

    retain: bool = defaults.RETAIN_DATA
    encryption_key: kms.IKey | None = None


class JobTable(Construct):
    """The jobs table: on-demand, point-in-time recovery, TTL, and three GSIs: jobs by status and time, a
    user's jobs by time, and the notification outbox (finished jobs whose completion event is still pending).

    Keys and index names come from ``ocr_platform.jobs.store`` so the code and the table cannot drift apart.
    """

    def __init__(self, scope: Construct, construct_id: str, props: JobTableProps) -> None:
        super().__init__(scope, construct_id)
        # 1. Table: partition key job_id, pay per request, PITR, TTL on expires_at, the AWS managed KMS key or the
        #    stage's own.
        self._table = dynamodb.Table(
            self,
            "Table",
            partition_key=dynamodb.Attribute(name=PARTITION_KEY, type=dynamodb.AttributeType.STRING),
            billing_mode=dynamodb.BillingMode.PAY_PER_REQUEST,
            point_in_time_recovery_specification=dynamodb.PointInTimeRecoverySpecification(
                point_in_time_recovery_enabled=True
            ),
            time_to_live_attribute=TTL_ATTRIBUTE,
            encryption=(
                dynamodb.TableEncryption.AWS_MANAGED
                if props.encryption_key is None
                else dynamodb.TableEncryption.CUSTOMER_MANAGED
            ),
            encryption_key=props.encryption_key,
            removal_policy=removal_policy(props.retain),
        )
        if props.encryption_key is None:
            skip_checkov(
                self._table,
                "CKV_AWS_119",
                "Encrypted at rest with SSE-KMS under the AWS managed key aws/dynamodb, whose every use KMS records in "
                "CloudTrail; this check wants a customer managed key. customer_managed_key=true uses the stage's own "
                "KMS key ($1 a month plus requests), which its owner can disable to cut off all access to the jobs.",
            )
        # 2. Status index: frontends list jobs by status and creation time; scale-in finds jobs in flight.
        self._table.add_global_secondary_index(
            index_name=STATUS_INDEX_NAME,
            partition_key=dynamodb.Attribute(name=STATUS_INDEX_PARTITION_KEY, type=dynamodb.AttributeType.STRING),
            sort_key=dynamodb.Attribute(name=STATUS_INDEX_SORT_KEY, type=dynamodb.AttributeType.STRING),
            projection_type=dynamodb.ProjectionType.ALL,
        )
        # 3. Owner index: the jobs API lists a user's own jobs, newest first (items without an owner stay out).
        self._table.add_global_secondary_index(
            index_name=OWNER_INDEX_NAME,
            partition_key=dynamodb.Attribute(name=OWNER_INDEX_PARTITION_KEY, type=dynamodb.AttributeType.STRING),
            sort_key=dynamodb.Attribute(name=OWNER_INDEX_SORT_KEY, type=dynamodb.AttributeType.STRING),
            projection_type=dynamodb.ProjectionType.ALL,
        )
        # 4. Notification outbox: sparse, only finished jobs whose completion event is still pending carry its
        #    partition key; the sweeper republishes those events, oldest first. ALL: it publishes the whole job.
        self._table.add_global_secondary_index(
            index_name=NOTIFICATION_INDEX_NAME,
            partition_key=dynamodb.Attribute(name=NOTIFICATION_INDEX_PARTITION_KEY, type=dynamodb.AttributeType.STRING),
            sort_key=dynamodb.Attribute(name=NOTIFICATION_INDEX_SORT_KEY, type=dynamodb.AttributeType.STRING),
            projection_type=dynamodb.ProjectionType.ALL,
        )

    @property
    def table(self) -> dynamodb.Table:
        return self._table

    @property
    def owner_index_arn(self) -> str:
        """ARN of the owner/time GSI (the jobs API's Query grant names it)."""
        return f"{self._table.table_arn}/index/{OWNER_INDEX_NAME}"

    @property
    def status_index_arn(self) -> str:
        """ARN of the status/time GSI (for a Query grant that names the index, not ``index/*``)."""
        return f"{self._table.table_arn}/index/{STATUS_INDEX_NAME}"

    @property
    def notification_index_arn(self) -> str:
        """ARN of the notification outbox GSI (the sweeper's Query grant names it)."""
        return f"{self._table.table_arn}/index/{NOTIFICATION_INDEX_NAME}"
