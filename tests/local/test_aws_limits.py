"""The local stack's moto holds SQS's message size and SageMaker's endpoint life cycle and quota as AWS does.

Each test talks to a moto server of its own (in this process, on a free port, as the local stack runs it) with
the local stack's patches installed: ``sqs_limits`` and ``sagemaker_control``. Plain moto accepts every
oversized message below and makes an endpoint ``InService`` at once, with no ``UpdateEndpoint`` and no quota.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from botocore.exceptions import ClientError

from ocr_platform.local.moto_account import moto_client
from ocr_platform.local.sagemaker_control import install_sagemaker_control
from ocr_platform.local.sqs_limits import MAX_MESSAGE_BYTES, enforce_sqs_message_size
from tests.local.moto_server import moto_server

#: Long enough that the read right after CreateEndpoint/UpdateEndpoint still sees ``Creating``/``Updating`` on a loaded
#: machine (a moto call there can take most of a second), short enough that waiting it out costs little.
TRANSITION_SECONDS = 2.0
#: Deadlines of waits that end as soon as their condition holds.
WAIT_SECONDS = 30


@pytest.fixture(scope="module")
def moto_url() -> Iterator[str]:
    with moto_server() as url:
        undo = [enforce_sqs_message_size(), install_sagemaker_control(transition_seconds=TRANSITION_SECONDS, instance_quota=1)]
        try:
            yield url
        finally:
            for step in reversed(undo):
                step()


# -- SQS: 1 MiB, counted in bytes, attributes included -------------------------------------------------
@pytest.fixture(scope="module")
def queue(moto_url: str) -> tuple[Any, str]:
    sqs = moto_client("sqs", moto_url)
    return sqs, sqs.create_queue(QueueName="limits")["QueueUrl"]


def _error(raised: pytest.ExceptionInfo[ClientError]) -> str:
    return str(raised.value.response["Error"]["Code"])


def test_a_message_of_1_mib_is_accepted_one_byte_more_is_refused(queue: tuple[Any, str]) -> None:
    sqs, url = queue
    sqs.send_message(QueueUrl=url, MessageBody="x" * MAX_MESSAGE_BYTES)

    with pytest.raises(ClientError) as raised:
        sqs.send_message(QueueUrl=url, MessageBody="x" * (MAX_MESSAGE_BYTES + 1))
    assert "InvalidParameterValue" in _error(raised)


def test_the_size_is_counted_in_utf8_bytes_not_characters(queue: tuple[Any, str]) -> None:
    sqs, url = queue
    body = "é" * (MAX_MESSAGE_BYTES // 2 + 1)  # 524,289 characters, 1,048,578 bytes

    with pytest.raises(ClientError) as raised:
        sqs.send_message(QueueUrl=url, MessageBody=body)
    assert "InvalidParameterValue" in _error(raised)
    assert "1048576 bytes" in raised.value.response["Error"]["Message"]


def test_message_attributes_count_toward_the_size(queue: tuple[Any, str]) -> None:
    sqs, url = queue
    attributes = {"job_id": {"DataType": "String", "StringValue": "job-123"}}  # 6 + 6 + 7 bytes

    sqs.send_message(QueueUrl=url, MessageBody="x" * (MAX_MESSAGE_BYTES - 19), MessageAttributes=attributes)
    with pytest.raises(ClientError) as raised:
        sqs.send_message(QueueUrl=url, MessageBody="x" * (MAX_MESSAGE_BYTES - 18), MessageAttributes=attributes)
    assert "InvalidParameterValue" in _error(raised)


def test_a_batch_over_1_mib_in_bytes_is_refused_whole(queue: tuple[Any, str]) -> None:
    sqs, url = queue
    before = int(sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"])["Attributes"]["ApproximateNumberOfMessages"])
    entries = [{"Id": str(i), "MessageBody": "é" * (MAX_MESSAGE_BYTES // 4 + 1)} for i in range(2)]  # 1,048,580 bytes

    with pytest.raises(ClientError) as raised:
        sqs.send_message_batch(QueueUrl=url, Entries=entries)
    assert "BatchRequestTooLong" in _error(raised)
    after = int(sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"])["Attributes"]["ApproximateNumberOfMessages"])
    assert after == before


# -- SageMaker: Creating, Updating, and a second fleet's quota ---------------------------------------------
@pytest.fixture(scope="module")
def sagemaker(moto_url: str) -> Any:
    client = moto_client("sagemaker", moto_url)
    role = moto_client("iam", moto_url).create_role(RoleName="endpoint", AssumeRolePolicyDocument="{}")["Role"]["Arn"]
    client.create_model(ModelName="model", ExecutionRoleArn=role, PrimaryContainer={"Image": "123456789012.dkr.ecr.us-east-1.amazonaws.com/m:1"})
    for name in ("blue", "green"):
        client.create_endpoint_config(EndpointConfigName=name, ProductionVariants=[
            {"VariantName": "AllTraffic", "ModelName": "model", "InitialInstanceCount": 1, "InstanceType": "ml.g4dn.xlarge"}])
    return client


def _status(sagemaker: Any, name: str) -> str:
    return str(sagemaker.describe_endpoint(EndpointName=name)["EndpointStatus"])


def _wait_in_service(sagemaker: Any, name: str) -> float:
    started = time.monotonic()
    while _status(sagemaker, name) != "InService":
        assert time.monotonic() - started < WAIT_SECONDS
        time.sleep(0.02)
    return time.monotonic() - started


def _scale(sagemaker: Any, name: str, count: int) -> None:
    sagemaker.update_endpoint_weights_and_capacities(
        EndpointName=name, DesiredWeightsAndCapacities=[{"VariantName": "AllTraffic", "DesiredInstanceCount": count}])


def test_an_endpoint_is_creating_before_it_is_in_service_and_refuses_updates_meanwhile(sagemaker: Any) -> None:
    sagemaker.create_endpoint(EndpointName="ep-create", EndpointConfigName="blue")
    try:
        assert _status(sagemaker, "ep-create") == "Creating"
        with pytest.raises(ClientError) as raised:
            _scale(sagemaker, "ep-create", 0)
        assert "Cannot update in-progress endpoint" in raised.value.response["Error"]["Message"]

        assert _wait_in_service(sagemaker, "ep-create") > 0
        _scale(sagemaker, "ep-create", 0)
        assert sagemaker.describe_endpoint(EndpointName="ep-create")["ProductionVariants"][0]["DesiredInstanceCount"] == 0
    finally:
        sagemaker.delete_endpoint(EndpointName="ep-create")


def test_a_blue_green_update_needs_quota_for_a_second_fleet(sagemaker: Any) -> None:
    sagemaker.create_endpoint(EndpointName="ep-update", EndpointConfigName="blue")
    try:
        _wait_in_service(sagemaker, "ep-update")

        # One instance running, quota 1: no room for the green fleet.
        with pytest.raises(sagemaker.exceptions.ResourceLimitExceeded) as raised:
            sagemaker.update_endpoint(EndpointName="ep-update", EndpointConfigName="green")
        assert "current utilization of 1 Instances and a request delta of 1 Instances" in raised.value.response["Error"]["Message"]
        assert _status(sagemaker, "ep-update") == "InService"
        # Nor room for a second instance of the same fleet.
        with pytest.raises(sagemaker.exceptions.ResourceLimitExceeded):
            _scale(sagemaker, "ep-update", 2)

        # At 0 instances the green fleet fits: Updating, then InService on the new configuration.
        _scale(sagemaker, "ep-update", 0)
        sagemaker.update_endpoint(EndpointName="ep-update", EndpointConfigName="green")
        assert _status(sagemaker, "ep-update") == "Updating"
        _wait_in_service(sagemaker, "ep-update")
        described = sagemaker.describe_endpoint(EndpointName="ep-update")
        assert described["EndpointConfigName"] == "green"
        assert described["ProductionVariants"][0]["DesiredInstanceCount"] == 1
    finally:
        sagemaker.delete_endpoint(EndpointName="ep-update")


def test_a_second_endpoint_beyond_the_quota_is_refused(sagemaker: Any) -> None:
    sagemaker.create_endpoint(EndpointName="ep-first", EndpointConfigName="blue")
    try:
        with pytest.raises(sagemaker.exceptions.ResourceLimitExceeded):
            sagemaker.create_endpoint(EndpointName="ep-second", EndpointConfigName="blue")
    finally:
        _wait_in_service(sagemaker, "ep-first")
        sagemaker.delete_endpoint(EndpointName="ep-first")
