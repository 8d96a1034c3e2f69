"""The concurrency bounds the template holds: every SQS-driven function's event source has a maximum concurrency,
and the processor is bounded by the stage's semaphore (``dispatcher``) or by its reserved concurrency (``reserved``).
"""

from __future__ import annotations

from typing import Any

import pytest
from aws_cdk import App
from aws_cdk import aws_lambda as lambda_

from ocr_infra.app_builder import cdk_json_context
from ocr_infra.config import PlatformConfig
from ocr_infra.stack import OcrPlatformStack
from ocr_platform.core.settings import ENV
from tests.infra.conftest import Synthesis


def _mapping_of(synthesis: Synthesis, function: Any) -> dict[str, Any]:
    function_id = synthesis.logical_id(function)
    [mapping] = [
        r["Properties"] for r in synthesis.template_json["Resources"].values()
        if r["Type"] == "AWS::Lambda::EventSourceMapping" and r["Properties"]["FunctionName"] == {"Ref": function_id}
    ]
    return mapping


def test_every_queue_consumer_runs_at_most_its_event_sources_maximum_concurrency(synthesis: Synthesis) -> None:
    stack = synthesis.stack
    assert _mapping_of(synthesis, stack.invoker.function)["ScalingConfig"] == {"MaximumConcurrency": 5}
    assert _mapping_of(synthesis, stack.webhook_deliverer.function)["ScalingConfig"] == {"MaximumConcurrency": 5}
    assert _mapping_of(synthesis, stack.recovery.dlq_consumer_function)["ScalingConfig"] == {"MaximumConcurrency": 2}


def test_by_default_the_processor_reserves_nothing_and_the_dispatcher_bounds_it(synthesis: Synthesis) -> None:
    stack = synthesis.stack
    assert stack.cpu is not None
    functions = [r["Properties"] for r in synthesis.template_json["Resources"].values() if r["Type"] == "AWS::Lambda::Function"]
    # Nothing reserved anywhere: a new account (concurrency quota 10, 100 kept unreserved) can deploy it.
    assert not [f for f in functions if "ReservedConcurrentExecutions" in f]
    assert stack.invoker.environment[ENV.PROCESSOR_SLOTS] == stack.cpu.environment[ENV.PROCESSOR_SLOTS] == "20"


def _app() -> App:
    return App(context=cdk_json_context())


@pytest.mark.parametrize(("mode", "reserved", "slots"), [("reserved", 8, "0"), ("dispatcher", None, "8")])
def test_the_processors_bound_follows_the_configured_mode(mode: str, reserved: int | None, slots: str) -> None:
    config = PlatformConfig(processor_max_concurrency=8, processor_concurrency_mode=mode, invoker_max_concurrency=3)
    stack = OcrPlatformStack(_app(), f"Admission-{mode}", config=config)
    assert stack.cpu is not None
    processor = stack.cpu.function.node.default_child
    assert isinstance(processor, lambda_.CfnFunction)
    assert stack.resolve(processor.reserved_concurrent_executions) == reserved
    assert stack.invoker.environment[ENV.PROCESSOR_SLOTS] == stack.cpu.environment[ENV.PROCESSOR_SLOTS] == slots
    [mapping] = [c for c in stack.invoker.node.find_all() if isinstance(c, lambda_.CfnEventSourceMapping)]
    assert stack.resolve(mapping.scaling_config) == {"maximumConcurrency": 3}


def test_a_bound_outside_what_lambda_and_sqs_accept_is_refused() -> None:
    with pytest.raises(ValueError, match="invoker_max_concurrency=1 must be between 2 and 1000"):
        PlatformConfig(invoker_max_concurrency=1)
    with pytest.raises(ValueError, match="processor_concurrency_mode='unbounded' must be one of dispatcher, reserved"):
        PlatformConfig(processor_concurrency_mode="unbounded")
