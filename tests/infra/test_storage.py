"""The platform bucket, its access-log bucket and the jobs table."""

from __future__ import annotations

from aws_cdk.assertions import Match, Template

from ocr_platform.core.s3_layout import ASYNC_PREFIX
from ocr_platform.jobs.store import (
    NOTIFICATION_INDEX_PARTITION_KEY,
    NOTIFICATION_INDEX_SORT_KEY,
    PARTITION_KEY,
    STATUS_INDEX_NAME,
    STATUS_INDEX_PARTITION_KEY,
    STATUS_INDEX_SORT_KEY,
    TTL_ATTRIBUTE,
)
from tests.infra.conftest import Synthesis

BLOCK_ALL = {
    "BlockPublicAcls": True,
    "BlockPublicPolicy": True,
    "IgnorePublicAcls": True,
    "RestrictPublicBuckets": True,
}


def test_three_buckets_all_encrypted_private_and_owner_enforced(template: Template) -> None:
    template.resource_count_is("AWS::S3::Bucket", 3)  # data, access logs, console
    buckets = template.find_resources("AWS::S3::Bucket")
    for name, bucket in buckets.items():
        props = bucket["Properties"]
        assert props["PublicAccessBlockConfiguration"] == BLOCK_ALL, name
        rules = props["BucketEncryption"]["ServerSideEncryptionConfiguration"]
        assert rules[0]["ServerSideEncryptionByDefault"]["SSEAlgorithm"] == "AES256", name
        assert props["OwnershipControls"]["Rules"] == [{"ObjectOwnership": "BucketOwnerEnforced"}], name
        assert bucket["DeletionPolicy"] == "Retain", name


def test_every_bucket_policy_denies_requests_without_tls(template: Template, synthesis: Synthesis) -> None:
    for bucket in (synthesis.stack.documents.bucket, synthesis.stack.documents.access_log_bucket):
        template.has_resource_properties(
            "AWS::S3::BucketPolicy",
            {
                "Bucket": {"Ref": synthesis.logical_id(bucket)},
                "PolicyDocument": {
                    "Statement": Match.array_with(
                        [
                            Match.object_like(
                                {
                                    "Effect": "Deny",
                                    "Action": "s3:*",
                                    "Principal": {"AWS": "*"},
                                    "Condition": {"Bool": {"aws:SecureTransport": "false"}},
                                }
                            ),
                            Match.object_like(
                                {
                                    "Effect": "Deny",
                                    "Action": "s3:*",
                                    "Condition": {"NumericLessThan": {"s3:TlsVersion": 1.2}},
                                }
                            ),
                        ]
                    )
                },
            },
        )


def test_platform_bucket_logs_to_the_log_bucket_and_expires_async_io(synthesis: Synthesis) -> None:
    bucket = synthesis.resource(synthesis.stack.documents.bucket)["Properties"]
    log_bucket_id = synthesis.logical_id(synthesis.stack.documents.access_log_bucket)
    assert bucket["LoggingConfiguration"] == {
        "DestinationBucketName": {"Ref": log_bucket_id},
        "LogFilePrefix": "platform-bucket/",
    }
    rules = {rule["Id"]: rule for rule in bucket["LifecycleConfiguration"]["Rules"]}
    assert rules["expire-async-io"] == {
        "Id": "expire-async-io",
        "Prefix": ASYNC_PREFIX,
        "ExpirationInDays": 7,
        "Status": "Enabled",
    }
    assert rules["abort-incomplete-uploads"]["AbortIncompleteMultipartUpload"] == {"DaysAfterInitiation": 1}


def test_both_buckets_are_versioned_and_keep_noncurrent_versions_a_week(synthesis: Synthesis) -> None:
    """An overwritten or deleted document, result or access log stays recoverable for async_io_expiry_days (7), and
    no longer: versioning must not make the transient async/ and chunks/ objects, or the logs, pile up."""
    documents = synthesis.stack.documents
    for bucket, rule_id in ((documents.bucket, "abort-incomplete-uploads"), (documents.access_log_bucket, "expire-noncurrent-versions")):
        props = synthesis.resource(bucket)["Properties"]
        assert props["VersioningConfiguration"] == {"Status": "Enabled"}
        rule = {rule["Id"]: rule for rule in props["LifecycleConfiguration"]["Rules"]}[rule_id]
        assert rule["NoncurrentVersionExpiration"] == {"NoncurrentDays": 7}
        assert rule["ExpiredObjectDeleteMarker"] is True


def test_access_logs_expire(synthesis: Synthesis) -> None:
    log_bucket = synthesis.resource(synthesis.stack.documents.access_log_bucket)["Properties"]
    assert log_bucket["LifecycleConfiguration"]["Rules"][0] == {
        "Id": "expire-access-logs", "ExpirationInDays": 90, "Status": "Enabled"
    }


def test_jobs_table_on_demand_pitr_ttl_and_status_index(template: Template, synthesis: Synthesis) -> None:
    template.resource_count_is("AWS::DynamoDB::Table", 1)
    table = synthesis.resource(synthesis.stack.jobs.table)
    assert table["DeletionPolicy"] == "Retain"
    props = table["Properties"]
    assert props["BillingMode"] == "PAY_PER_REQUEST"
    assert props["KeySchema"] == [{"AttributeName": PARTITION_KEY, "KeyType": "HASH"}]
    assert props["PointInTimeRecoverySpecification"] == {"PointInTimeRecoveryEnabled": True}
    assert props["TimeToLiveSpecification"] == {"AttributeName": TTL_ATTRIBUTE, "Enabled": True}
    assert props["SSESpecification"] == {"SSEEnabled": True}
    assert sorted(props["AttributeDefinitions"], key=lambda a: a["AttributeName"]) == [
        {"AttributeName": STATUS_INDEX_SORT_KEY, "AttributeType": "S"},
        {"AttributeName": NOTIFICATION_INDEX_SORT_KEY, "AttributeType": "S"},
        {"AttributeName": PARTITION_KEY, "AttributeType": "S"},
        {"AttributeName": NOTIFICATION_INDEX_PARTITION_KEY, "AttributeType": "S"},
        {"AttributeName": "owner", "AttributeType": "S"},
        {"AttributeName": STATUS_INDEX_PARTITION_KEY, "AttributeType": "S"},
    ]
    assert props["GlobalSecondaryIndexes"] == [
        {
            "IndexName": index,
            "KeySchema": [
                {"AttributeName": partition, "KeyType": "HASH"},
                {"AttributeName": sort, "KeyType": "RANGE"},
            ],
            "Projection": {"ProjectionType": "ALL"},
        }
        for index, partition, sort in (
            (STATUS_INDEX_NAME, STATUS_INDEX_PARTITION_KEY, STATUS_INDEX_SORT_KEY),
            ("owner-created_at-index", "owner", STATUS_INDEX_SORT_KEY),
            # The notification outbox: sparse, only finished jobs whose completion event is pending carry its key.
            ("notification-pending-index", "notification_pending", "finished_at"),
        )
    ]


def test_the_platform_bucket_sends_its_events_to_eventbridge_without_a_custom_resource(template: Template, synthesis: Synthesis) -> None:
    bucket = synthesis.resource(synthesis.stack.documents.bucket)["Properties"]
    assert bucket["NotificationConfiguration"] == {"EventBridgeConfiguration": {"EventBridgeEnabled": True}}
    assert template.find_resources("Custom::S3BucketNotifications") == {}
