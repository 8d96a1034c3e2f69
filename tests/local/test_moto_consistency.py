"""The local stack's DynamoDB keeps DynamoDB's promise: two conditional writes to one item never both win.

moto's server evaluates a condition and writes the item without a lock, so two invocations that claim one
job at the same instant could both get it (measured: 169 of 300 races against plain moto). The local stack
makes moto's item operations atomic (``ocr_platform.local.moto_consistency``); this races two real
``JobStore.claim_dispatch`` calls through a barrier, many times, against a moto server patched that way.
"""

from __future__ import annotations

import socket
import threading
import uuid
from collections.abc import Iterator

import boto3
import pytest

from ocr_platform.jobs.store import JobStore, NewJob
from ocr_platform.local.moto_consistency import serialize_item_operations

RACES = 100


@pytest.fixture
def stores() -> Iterator[list[JobStore]]:
    from moto.server import ThreadedMotoServer

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    restore = serialize_item_operations()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    try:
        endpoint = {"endpoint_url": f"http://127.0.0.1:{port}", "region_name": "us-east-1",
                    "aws_access_key_id": "local", "aws_secret_access_key": "local"}
        boto3.client("dynamodb", **endpoint).create_table(
            TableName="jobs", KeySchema=[{"AttributeName": "job_id", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "job_id", "AttributeType": "S"}], BillingMode="PAY_PER_REQUEST",
        )
        yield [JobStore("jobs", dynamodb=boto3.resource("dynamodb", **endpoint)) for _ in range(2)]
    finally:
        server.stop()
        restore()


def test_two_claims_of_one_job_at_the_same_instant_never_both_win(stores: list[JobStore]) -> None:
    doubles = 0
    for race in range(RACES):
        job = NewJob(f"job-{race}", "pp-ocrv5", "s3://b/k")
        stores[0].create(job)
        barrier, winners = threading.Barrier(2), []

        def claim(store: JobStore, job: NewJob = job, barrier: threading.Barrier = barrier, winners: list[int] = winners) -> None:
            barrier.wait()
            if store.claim_dispatch(job.job_id, "lambda", attempt_id=uuid.uuid4().hex, lease_seconds=60, job=job).acquired:
                winners.append(1)

        threads = [threading.Thread(target=claim, args=(store,)) for store in stores]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        assert len(winners) >= 1, "neither delivery got the claim"
        doubles += len(winners) > 1
    assert doubles == 0, f"both deliveries won the claim in {doubles} of {RACES} races"
