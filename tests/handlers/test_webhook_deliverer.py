"""Webhook deliverer Lambda against moto and a real HTTP receiver on 127.0.0.1 (``OCR_URL_POLICY=local``).

Each request is the one the platform itself queued when the job finished (``JobStore`` -> notifier -> webhook
queue), received as the SQS event source receives it (``AttributeNames=["All"]``), so the attempt number and
the retry window come from SQS's own ``ApproximateReceiveCount`` and ``SentTimestamp``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any
from unittest import mock

import pytest
from aws_lambda_powertools.utilities import parameters

from ocr_platform.core import defaults, safe_http
from ocr_platform.core.settings import ENV
from ocr_platform.handlers import _services, webhook_deliverer
from ocr_platform.jobs.store import NewJob
from ocr_platform.local.events import sqs_event
from ocr_platform.outputs import webhook_delivery
from ocr_platform.outputs.notifications import event_id
from ocr_platform.outputs.webhook_signing import verify
from tests.aws_events import FakeLambdaContext
from tests.conftest import BUCKET, Platform, _record_calls
from tests.local.webhook_receiver import WebhookReceiver, receiver_that_is_down


def _fresh_deliverer() -> None:
    _services.reset()
    webhook_deliverer.deliverer.cache_clear()
    parameters.clear_caches()


@pytest.fixture
def webhooks(platform: Platform, monkeypatch: pytest.MonkeyPatch) -> Iterator[Platform]:
    """The platform, its deliverer allowed to call http://127.0.0.1 (as on the local stack)."""
    monkeypatch.setenv(ENV.URL_POLICY, "local")
    _fresh_deliverer()
    yield platform
    _fresh_deliverer()


def _finished_job(platform: Platform, job_id: str, callback_url: str) -> None:
    """A job with ``callback_url`` completed through the handlers' job store, which queues its webhook."""
    platform.store.create(NewJob(job_id, "pp-ocrv5", f"s3://{BUCKET}/documents/{job_id}/page.png", callback_url=callback_url))
    platform.store.mark_processing(job_id, "lambda")
    assert _services.services().store.mark_completed(job_id, result_uri=f"s3://{BUCKET}/results/{job_id}/result.json", page_count=1)


def _receive(platform: Platform) -> list[dict[str, Any]]:
    messages = platform.sqs.receive_message(
        QueueUrl=platform.webhook_queue_url, MaxNumberOfMessages=10, AttributeNames=["All"], MessageAttributeNames=["All"]
    ).get("Messages", [])
    assert messages, "no request on the webhook queue"
    return messages


def _deliver(platform: Platform, messages: list[dict[str, Any]]) -> tuple[list[str], list[str]]:
    """Run the deliverer on one batch; return the ids of the records it reported failed (SQS retries them) and
    what each record that did not fail ended as (``delivered``, ``duplicate``, ``dead_lettered``)."""
    outcomes: list[str] = []
    handle_record = webhook_deliverer.handle_record

    def recording(record: Any) -> str:
        outcome = handle_record(record)
        outcomes.append(outcome)
        return outcome

    with mock.patch.object(webhook_deliverer, "handle_record", recording):
        response = webhook_deliverer.handler(
            sqs_event(messages, platform.webhook_queue_arn), FakeLambdaContext(function_name="ocr-webhooks")
        )
    return [failure["itemIdentifier"] for failure in response["batchItemFailures"]], outcomes


def _dead_letters(platform: Platform) -> list[dict[str, Any]]:
    return platform.sqs.receive_message(
        QueueUrl=platform.webhook_dlq_url, MaxNumberOfMessages=10, MessageAttributeNames=["All"]
    ).get("Messages", [])


def test_a_webhook_is_posted_once_signed_with_the_event_and_recorded(webhooks: Platform) -> None:
    with WebhookReceiver() as receiver:
        _finished_job(webhooks, "job-wh1", receiver.url)
        [message] = _receive(webhooks)
        request = json.loads(message["Body"])

        assert _deliver(webhooks, [message]) == ([], ["delivered"])

        [post] = receiver.posts
    assert post.path == "/hook"
    assert json.loads(post.body) == request["detail"]
    assert request["detail"]["job_id"] == "job-wh1" and request["detail"]["status"] == "COMPLETED"
    assert post.headers["Content-Type"] == "application/json"
    assert post.headers["X-OCR-Event-Id"] == event_id("job-wh1", "COMPLETED") == request["event_id"]
    assert post.headers["X-OCR-Delivery-Attempt"] == "1"
    assert verify(webhooks.webhook_secret.encode(), post.body, post.headers["X-OCR-Signature"])
    assert not verify(b"another secret", post.body, post.headers["X-OCR-Signature"])
    assert not verify(webhooks.webhook_secret.encode(), post.body + b" ", post.headers["X-OCR-Signature"])

    job = webhooks.job("job-wh1")
    assert job["callback_status"] == "delivered"
    [attempt] = job["callback_attempts"]
    assert (attempt["attempt"], attempt["status_code"]) == (1, 200) and "error" not in attempt
    assert _dead_letters(webhooks) == []


def test_the_same_request_delivered_again_posts_nothing_more(webhooks: Platform) -> None:
    with WebhookReceiver() as receiver:
        _finished_job(webhooks, "job-wh2", receiver.url)
        messages = _receive(webhooks)
        assert _deliver(webhooks, messages) == ([], ["delivered"])

        # SQS delivered the message twice: dropped, neither failed nor retried
        assert _deliver(webhooks, messages) == ([], ["duplicate"])

        assert len(receiver.posts) == 1
    job = webhooks.job("job-wh2")
    assert job["callback_status"] == "delivered" and len(job["callback_attempts"]) == 1


def test_a_receiver_error_is_recorded_and_the_request_comes_back_later(webhooks: Platform) -> None:
    calls: dict[str, list[dict[str, Any]]] = {}
    _record_calls(_services._client("sqs"), "ChangeMessageVisibility", calls)  # the client the handler uses
    visibility_changes = calls.setdefault("ChangeMessageVisibility", [])
    with WebhookReceiver(fail_first=1) as receiver:
        _finished_job(webhooks, "job-wh3", receiver.url)
        [message] = _receive(webhooks)

        assert _deliver(webhooks, [message]) == ([message["MessageId"]], [])

        job = webhooks.job("job-wh3")
        assert job["callback_status"] == "pending"
        [attempt] = job["callback_attempts"]
        assert (attempt["attempt"], attempt["status_code"]) == (1, 500)
        assert "500" in attempt["error"]
        # The message waits out the schedule's first delay (30 s) before SQS hands it back.
        assert visibility_changes == [{
            "QueueUrl": webhooks.webhook_queue_url, "ReceiptHandle": message["ReceiptHandle"],
            "VisibilityTimeout": defaults.WEBHOOK_FIRST_RETRY_SECONDS,
        }]
        assert _dead_letters(webhooks) == []

        webhooks.sqs.change_message_visibility(  # ... the delay is over
            QueueUrl=webhooks.webhook_queue_url, ReceiptHandle=message["ReceiptHandle"], VisibilityTimeout=0
        )
        [again] = _receive(webhooks)
        assert _deliver(webhooks, [again]) == ([], ["delivered"])

        assert [post.headers["X-OCR-Delivery-Attempt"] for post in receiver.posts] == ["1", "2"]
    job = webhooks.job("job-wh3")
    assert job["callback_status"] == "delivered"
    assert [(a["attempt"], a["status_code"]) for a in job["callback_attempts"]] == [(1, 500), (2, 200)]


@pytest.mark.parametrize("queued_seconds_ago", [0, defaults.WEBHOOK_RETRY_WINDOW_SECONDS + 60])
def test_a_receiver_that_is_down_is_retried_until_the_window_is_over_then_dead_lettered(
    webhooks: Platform, queued_seconds_ago: int
) -> None:
    with receiver_that_is_down() as url:
        _finished_job(webhooks, "job-wh4", url)
        [message] = _receive(webhooks)
        sent = int(message["Attributes"]["SentTimestamp"]) - queued_seconds_ago * 1000
        message["Attributes"]["SentTimestamp"] = str(sent)

        failed, outcomes = _deliver(webhooks, [message])

    job = webhooks.job("job-wh4")
    [attempt] = job["callback_attempts"]
    assert "could not connect" in attempt["error"] and "status_code" not in attempt
    if queued_seconds_ago == 0:
        assert (failed, outcomes) == ([message["MessageId"]], []) and job["callback_status"] == "pending"
        assert _dead_letters(webhooks) == []
        return
    assert (failed, outcomes) == ([], ["dead_lettered"]) and job["callback_status"] == "dead_lettered"
    [parked] = _dead_letters(webhooks)
    assert json.loads(parked["Body"]) == json.loads(message["Body"])
    assert parked["MessageAttributes"]["LastError"]["StringValue"] == attempt["error"]


@pytest.mark.parametrize("url", ["http://10.0.0.1/hook", "http://169.254.169.254/latest/meta-data/"])
def test_a_refused_url_is_dead_lettered_at_once_without_connecting(
    webhooks: Platform, monkeypatch: pytest.MonkeyPatch, url: str
) -> None:
    connections: list[Any] = []
    real_send = safe_http._send
    monkeypatch.setattr(safe_http, "_send", lambda *args: connections.append(args) or real_send(*args))
    _finished_job(webhooks, "job-wh5", url)  # the API refuses such a URL; a job item may still carry one
    [message] = _receive(webhooks)

    assert _deliver(webhooks, [message]) == ([], ["dead_lettered"])

    assert connections == []
    job = webhooks.job("job-wh5")
    assert job["callback_status"] == "dead_lettered"
    [attempt] = job["callback_attempts"]
    assert attempt["error"].startswith("refused:") and attempt["attempt"] == 1
    [parked] = _dead_letters(webhooks)
    assert parked["MessageAttributes"]["LastError"]["StringValue"].startswith("refused:")
    assert json.loads(parked["Body"])["callback_url"] == url


def test_a_window_set_by_the_environment_applies(webhooks: Platform, monkeypatch: pytest.MonkeyPatch) -> None:
    """``OCR_WEBHOOK_RETRY_WINDOW_SECONDS`` shortens the window: a request queued longer ago is dead-lettered."""
    monkeypatch.setenv(ENV.WEBHOOK_RETRY_WINDOW_SECONDS, "1")
    _fresh_deliverer()
    with receiver_that_is_down() as url:
        _finished_job(webhooks, "job-wh6", url)
        [message] = _receive(webhooks)
        time.sleep(1.1)

        assert _deliver(webhooks, [message]) == ([], ["dead_lettered"])

    assert webhooks.job("job-wh6")["callback_status"] == "dead_lettered"
    assert len(_dead_letters(webhooks)) == 1


def test_a_dead_lettered_request_redriven_once_the_receiver_is_back_is_delivered(webhooks: Platform) -> None:
    with WebhookReceiver() as receiver:
        _finished_job(webhooks, "job-wh7", receiver.url)
        [message] = _receive(webhooks)
        sent = int(message["Attributes"]["SentTimestamp"]) - 2 * defaults.WEBHOOK_RETRY_WINDOW_SECONDS * 1000
        message["Attributes"]["SentTimestamp"] = str(sent)
        # The receiver was down for the whole window: dead-lettered.
        with mock.patch.object(webhook_delivery, "request", side_effect=safe_http.HttpFailure("could not connect", "unreachable")):
            assert _deliver(webhooks, [message]) == ([], ["dead_lettered"])
        [parked] = _dead_letters(webhooks)

        # An operator moves it back to the webhook queue: tried again, delivered, recorded after the failure.
        webhooks.sqs.send_message(QueueUrl=webhooks.webhook_queue_url, MessageBody=parked["Body"])
        assert _deliver(webhooks, _receive(webhooks)) == ([], ["delivered"])

        assert len(receiver.posts) == 1
    job = webhooks.job("job-wh7")
    assert job["callback_status"] == "delivered"
    assert [a.get("status_code") for a in job["callback_attempts"]] == [None, 200]


def test_a_receiver_that_answers_with_a_page_of_its_own_counts_as_delivered(webhooks: Platform) -> None:
    """Only the status counts: a 2xx with a 300 KB body (a framework's HTML page, say) is a delivery."""
    with WebhookReceiver(answer=b"<html>" + b"x" * 300_000 + b"</html>") as receiver:
        _finished_job(webhooks, "job-wh8", receiver.url)
        assert _deliver(webhooks, _receive(webhooks)) == ([], ["delivered"])
        assert len(receiver.posts) == 1
    assert webhooks.job("job-wh8")["callback_status"] == "delivered"
