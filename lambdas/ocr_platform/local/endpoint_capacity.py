"""The endpoint variant's desired instance count on moto, and the way SageMaker refuses to change it.

Why a module of its own: provisioning starts the variant at 0 instances, the alarm evaluator reads the
count and scales out to 1, and the ``endpoint-capacity`` / ``update-refused`` fault makes moto refuse a
change as SageMaker does while an endpoint is updating. All three go through the one control-plane call,
``UpdateEndpointWeightsAndCapacities``, so they live together.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from ocr_platform.local.faults import FaultInjector
from ocr_platform.local.moto_account import ACCOUNT, REGION
from ocr_platform.local.moto_patch import replace_attribute


def desired_instances(sagemaker: Any, endpoint_name: str, variant_name: str) -> int:
    """The variant's ``DesiredInstanceCount`` (its ``CurrentInstanceCount`` where moto reports no desired one)."""
    description = sagemaker.describe_endpoint(EndpointName=endpoint_name)
    variant = next(v for v in description["ProductionVariants"] if v["VariantName"] == variant_name)
    return int(variant.get("DesiredInstanceCount", variant.get("CurrentInstanceCount", 0)))


def wait_in_service(sagemaker: Any, endpoint_name: str, *, timeout_seconds: float = 120.0, poll_seconds: float = 0.05) -> None:
    """Wait until the endpoint is ``InService`` (SageMaker refuses a capacity change while it is ``Creating`` or
    ``Updating``), as CloudFormation waits for a created endpoint; ``TimeoutError`` after ``timeout_seconds``."""
    deadline = time.monotonic() + timeout_seconds
    while (status := sagemaker.describe_endpoint(EndpointName=endpoint_name)["EndpointStatus"]) != "InService":
        if status == "Failed" or time.monotonic() > deadline:
            raise TimeoutError(f"endpoint {endpoint_name} is {status}, not InService")
        time.sleep(poll_seconds)


def set_desired_instances(sagemaker: Any, endpoint_name: str, variant_name: str, count: int) -> None:
    """Ask for ``count`` instances of the variant; raises ``ClientError`` where SageMaker refuses."""
    sagemaker.update_endpoint_weights_and_capacities(
        EndpointName=endpoint_name,
        DesiredWeightsAndCapacities=[{"VariantName": variant_name, "DesiredInstanceCount": count}],
    )


def refuse_capacity_updates_on_fault(faults: FaultInjector) -> Callable[[], None]:
    """Make moto's SageMaker backend (in this process) refuse a capacity update whenever ``faults`` has an
    ``endpoint-capacity`` / ``update-refused`` fault for the endpoint, which moto (applying every update at
    once) never does by itself. Returns the undo, to call when the stack stops."""
    from moto.sagemaker.exceptions import ValidationError
    from moto.sagemaker.models import sagemaker_backends

    backend = sagemaker_backends[ACCOUNT][REGION]
    apply = backend.update_endpoint_weights_and_capacities

    def update_endpoint_weights_and_capacities(endpoint_name: str, desired_weights_and_capacities: list[dict[str, Any]]) -> str:
        if faults.take("endpoint-capacity", "update-refused", endpoint_name) is not None:
            arn = f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:endpoint/{endpoint_name.lower()}"
            raise ValidationError(f'Cannot update in-progress endpoint "{arn}".')
        return apply(endpoint_name=endpoint_name, desired_weights_and_capacities=desired_weights_and_capacities)

    return replace_attribute(backend, "update_endpoint_weights_and_capacities", update_endpoint_weights_and_capacities)
