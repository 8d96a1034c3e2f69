"""The SageMaker control plane as AWS behaves it: endpoints take time to create and update, and updates need quota.

Why a module of its own: moto is the local stack's SageMaker control plane, and it makes every endpoint
``InService`` the moment it is created, has no ``UpdateEndpoint`` at all, and knows no instance quota. AWS
does otherwise, and the platform must cope with it:

- ``CreateEndpoint`` sets the endpoint ``Creating``, then ``InService`` once its instances are up
  (https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_CreateEndpoint.html); ``UpdateEndpoint`` sets it
  ``Updating``, then ``InService`` (https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_UpdateEndpoint.html).
  Here each transition takes ``transition_seconds`` (minutes on AWS; a short, configurable delay locally).
- ``UpdateEndpoint`` deploys the new endpoint configuration to a new fleet (the green fleet) and only then
  terminates the old one (https://docs.aws.amazon.com/sagemaker/latest/dg/deployment-guardrails-blue-green.html),
  so for a while both fleets count against the account's per-instance-type quota "<type> for endpoint usage"
  (https://docs.aws.amazon.com/general/latest/gr/sagemaker.html); over it, SageMaker answers
  ``ResourceLimitExceeded``, an error each of these APIs lists. ``instance_quota`` is that quota locally: 1 by
  default (a local setting, ``LocalOptions.endpoint_instance_quota``: a new account's GPU quota is small; check
  yours in Service Quotas). So an update while the variant has an instance running fails, and an update at 0
  instances succeeds. ``CreateEndpoint`` and ``UpdateEndpointWeightsAndCapacities`` are held to the same quota.
- While an endpoint is ``Creating`` or ``Updating``, ``UpdateEndpoint`` and ``UpdateEndpointWeightsAndCapacities``
  are refused with SageMaker's ``Cannot update in-progress endpoint`` validation error.

Differences from AWS: the quota is one number for every instance of every endpoint (AWS keeps one per instance
type, e.g. "ml.g5.xlarge for endpoint usage"; the local variant carries ``ml.g4dn.xlarge``, moto's stand-in);
a capacity change (``UpdateEndpointWeightsAndCapacities``) still takes effect at once; ``DeploymentConfig``
(canary, linear, rolling, auto-rollback) is accepted and ignored: every update is all at once.

:func:`install_sagemaker_control` patches moto's backend in this process (the local stack's server process)
and returns the undo.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from ocr_platform.local.moto_account import ACCOUNT, REGION
from ocr_platform.local.moto_patch import replace_attribute

#: How long an endpoint stays ``Creating`` or ``Updating`` locally, by default.
DEFAULT_TRANSITION_SECONDS = 0.5
#: Endpoint instances the local account may run at once, by default (a new account's GPU quota).
DEFAULT_INSTANCE_QUOTA = 1


def _instances(variants: list[dict[str, Any]], key: str) -> int:
    return sum(int(v.get(key) or 0) for v in variants)


class _Control:
    """The patched control plane of one moto SageMaker backend."""

    def __init__(self, backend: Any, transition_seconds: float, instance_quota: int) -> None:
        from moto.sagemaker.exceptions import SagemakerClientError, ValidationError

        class ResourceLimitExceeded(SagemakerClientError):
            code = "ResourceLimitExceeded"

        self.backend, self.transition_seconds, self.instance_quota = backend, transition_seconds, instance_quota
        self.limit_exceeded, self.validation_error = ResourceLimitExceeded, ValidationError
        self.create = backend.create_endpoint
        self.scale = backend.update_endpoint_weights_and_capacities
        self.lock = threading.Lock()
        #: Instances being provisioned for an endpoint that is Creating or Updating (its green fleet).
        self.pending: dict[str, int] = {}
        #: The endpoints created since this control was installed: the account's. (moto's backends outlive a stack
        #: in one process; an earlier stack's endpoints are not this stack's account.)
        self.owned: set[str] = set()
        self.timers: list[threading.Timer] = []

    # -- the quota ---------------------------------------------------------------------------------
    def usage(self) -> int:
        """Instances of the account's endpoints: running, and being provisioned for a create or an update."""
        running = sum(_instances(e.production_variants, "DesiredInstanceCount")
                      for name, e in self.backend.endpoints.items() if name in self.owned)
        return running + sum(self.pending.values())

    def check_quota(self, delta: int, in_use: int, instance_type: str) -> None:
        if in_use + delta > self.instance_quota:
            raise self.limit_exceeded(
                f"The account-level service limit '{instance_type} for endpoint usage' is {self.instance_quota} Instances, "
                f"with current utilization of {in_use} Instances and a request delta of {delta} Instances. "
                "Please use AWS Service Quotas to request an increase for this quota."
            )

    def config(self, name: str) -> dict[str, Any]:
        return dict(self.backend.describe_endpoint_config(name))

    def endpoint(self, name: str) -> Any:
        endpoint = self.backend.endpoints.get(name)
        if endpoint is None:
            arn = f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:endpoint/{name.lower()}"
            raise self.validation_error(f"Could not find endpoint '{arn}'.")
        return endpoint

    def refuse_in_progress(self, endpoint: Any) -> None:
        if endpoint.endpoint_status != "InService":
            raise self.validation_error(f'Cannot update in-progress endpoint "{endpoint.arn}".')

    # -- the operations ----------------------------------------------------------------------------
    def create_endpoint(self, endpoint_name: str, endpoint_config_name: str, tags: list[dict[str, str]]) -> Any:
        variants = self.config(endpoint_config_name)["ProductionVariants"]
        with self.lock:
            self.check_quota(_instances(variants, "InitialInstanceCount"), self.usage(), _instance_type(variants))
            endpoint = self.create(endpoint_name=endpoint_name, endpoint_config_name=endpoint_config_name, tags=tags)
            endpoint.endpoint_status = "Creating"
            self.owned.add(endpoint_name)
        self.later(endpoint_name, endpoint, None)
        return endpoint

    def update_endpoint(self, endpoint_name: str, endpoint_config_name: str) -> str:
        endpoint = self.endpoint(endpoint_name)
        variants = self.config(endpoint_config_name)["ProductionVariants"]
        with self.lock:
            self.refuse_in_progress(endpoint)
            green = _instances(variants, "InitialInstanceCount")
            self.check_quota(green, self.usage(), _instance_type(variants))
            endpoint.endpoint_status = "Updating"
            self.pending[endpoint_name] = green
        self.later(endpoint_name, endpoint, (endpoint_config_name, variants))
        return str(endpoint.arn)

    def update_endpoint_weights_and_capacities(self, endpoint_name: str, desired_weights_and_capacities: list[dict[str, Any]]) -> str:
        endpoint = self.endpoint(endpoint_name)
        with self.lock:
            self.refuse_in_progress(endpoint)
            desired = {d.get("VariantName"): d.get("DesiredInstanceCount") for d in desired_weights_and_capacities}
            wanted = 0
            for variant in endpoint.production_variants:
                count = desired.get(variant["VariantName"])
                wanted += int(count if count is not None else variant.get("DesiredInstanceCount") or 0)
            current = _instances(endpoint.production_variants, "DesiredInstanceCount")
            if wanted > current:
                variants = self.config(endpoint.endpoint_config_name)["ProductionVariants"]
                self.check_quota(wanted - current, self.usage(), _instance_type(variants))
            return str(self.scale(endpoint_name=endpoint_name, desired_weights_and_capacities=desired_weights_and_capacities))

    def later(self, endpoint_name: str, endpoint: Any, update: tuple[str, list[dict[str, Any]]] | None) -> None:
        """After ``transition_seconds``: the endpoint is InService (with the new fleet in place of the old one)."""
        def finish() -> None:
            with self.lock:
                if update is not None:
                    endpoint.endpoint_config_name = update[0]
                    endpoint.production_variants = endpoint._process_production_variants(update[1])
                self.pending.pop(endpoint_name, None)
                endpoint.endpoint_status = "InService"

        timer = threading.Timer(self.transition_seconds, finish)
        timer.daemon = True
        self.timers.append(timer)
        timer.start()


def _instance_type(variants: list[dict[str, Any]]) -> str:
    return str(next((v.get("InstanceType") for v in variants if v.get("InstanceType")), "ml.g5.xlarge"))


def install_sagemaker_control(
    *, transition_seconds: float = DEFAULT_TRANSITION_SECONDS, instance_quota: int = DEFAULT_INSTANCE_QUOTA,
) -> Callable[[], None]:
    """Make moto's SageMaker control plane (this process's backend for the local account) behave as described
    above; returns the undo, to call when the stack stops."""
    from moto.core.responses import ActionResult
    from moto.sagemaker.models import sagemaker_backends
    from moto.sagemaker.responses import SageMakerResponse

    control = _Control(sagemaker_backends[ACCOUNT][REGION], transition_seconds, instance_quota)

    def update_endpoint(self: Any) -> ActionResult:  # moto has no UpdateEndpoint: the action of its response class
        return ActionResult({"EndpointArn": control.update_endpoint(self._get_param("EndpointName"), self._get_param("EndpointConfigName"))})

    undos = [
        replace_attribute(control.backend, "create_endpoint", control.create_endpoint),
        replace_attribute(control.backend, "update_endpoint_weights_and_capacities", control.update_endpoint_weights_and_capacities),
        replace_attribute(SageMakerResponse, "update_endpoint", update_endpoint),
    ]

    def undo() -> None:
        for timer in control.timers:
            timer.cancel()
        for step in reversed(undos):
            step()

    return undo
