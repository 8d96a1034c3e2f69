"""One home for each default: the deployment config, the handlers' fallbacks and the stack agree.

``ocr_platform.core.defaults`` holds every default; ``PlatformConfig`` and ``RuntimeSettings`` read it. These
tests fail when a handler started without the stack's environment would behave differently from the
deployed one, or when a function is deployed with a value its config does not say.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

import pytest

from ocr_infra.config import PlatformConfig
from ocr_platform.core import defaults
from ocr_platform.core.settings import ENV, RuntimeSettings
from tests.infra.conftest import Synthesis, stage_resources

REQUIRED_ONLY = {ENV.TABLE_NAME: "jobs", ENV.BUCKET_NAME: "documents"}


@pytest.mark.parametrize("name", [f.name for f in fields(PlatformConfig)])
def test_each_config_default_is_the_defaults_modules_constant(name: str) -> None:
    constant = name.upper()
    assert hasattr(defaults, constant), f"PlatformConfig.{name}'s default belongs in ocr_platform.core.defaults.{constant}"
    assert getattr(PlatformConfig(), name) == getattr(defaults, constant)


def test_derived_defaults_are_the_configs_derived_values() -> None:
    config = PlatformConfig()
    assert config.queue_visibility_timeout_seconds == defaults.queue_visibility_timeout_seconds() == 360
    assert config.inflight_window_seconds == defaults.inflight_window_seconds() == 3900
    assert config.queued_deadline_seconds == defaults.queued_deadline_seconds() == 346_200
    assert config.lambda_deadline_seconds == defaults.lambda_deadline_seconds() == 45_300
    assert config.sagemaker_deadline_seconds == defaults.sagemaker_deadline_seconds() == 51_600


def test_runtime_settings_have_settings_to_compare() -> None:
    names = RuntimeSettings.setting_names()
    assert {"job_ttl_days", "queued_deadline_seconds", "lambda_deadline_seconds", "inflight_window_seconds"} <= set(
        names
    )
    # Resource names are the stack's to set; they have no deployed default to agree with.
    assert not {"table_name", "bucket_name", "endpoint_name"} & set(names)


@pytest.mark.parametrize("name", RuntimeSettings.setting_names())
def test_a_runtime_fallback_is_what_platform_config_deploys(name: str) -> None:
    deployed = getattr(PlatformConfig(), name)
    assert getattr(RuntimeSettings(table_name="jobs", bucket_name="documents"), name) == deployed
    assert getattr(RuntimeSettings.from_env(REQUIRED_ONLY), name) == deployed


def test_from_env_reads_every_variable_to_env_writes() -> None:
    tuned = RuntimeSettings(
        table_name="jobs",
        bucket_name="documents",
        processor_function="processor",
        queue_url="https://sqs.us-east-1.amazonaws.com/123456789012/jobs",
        endpoint_name="endpoint",
        variant_name="Blue",
        max_receive_count=5,
        inflight_window_seconds=100,
        job_ttl_days=0,
        invocation_timeout_seconds=200,
        idle_alarm_name="idle",
        queued_deadline_seconds=300,
        lambda_deadline_seconds=400,
        sagemaker_deadline_seconds=500,
        settle_grace_seconds=30,
        webhook_queue_url="https://sqs.us-east-1.amazonaws.com/123456789012/webhooks",
        webhook_dlq_url="https://sqs.us-east-1.amazonaws.com/123456789012/webhooks-dlq",
        webhook_secret_arn="arn:aws:secretsmanager:us-east-1:123456789012:secret:webhooks-AbCdEf",
        event_bus_name="ocr-events",
        webhook_retry_window_seconds=2 * 86_400,
    )
    assert set(tuned.to_env()) == set(RuntimeSettings.env_variables().values())
    assert RuntimeSettings.from_env(tuned.to_env()) == tuned


@pytest.mark.parametrize(
    ("environ", "message"),
    [
        ({ENV.BUCKET_NAME: "documents"}, "'OCR_TABLE_NAME' is not set"),
        ({**REQUIRED_ONLY, ENV.JOB_TTL_DAYS: "thirty"}, "OCR_JOB_TTL_DAYS='thirty' must be a whole number"),
    ],
)
def test_from_env_names_the_variable_to_fix(environ: dict[str, str], message: str) -> None:
    with pytest.raises(RuntimeError, match=message):
        RuntimeSettings.from_env(environ)


def _function_environments(synthesis: Synthesis) -> dict[str, dict[str, Any]]:
    return {
        logical_id: resource["Properties"]["Environment"]["Variables"]
        for logical_id, resource in stage_resources(synthesis).items()
        if resource["Type"] == "AWS::Lambda::Function"
    }


def test_deployed_function_environments_carry_the_config_and_the_runtime_fallbacks(synthesis: Synthesis) -> None:
    config = synthesis.stack.config
    assert config == PlatformConfig(), "the session synthesis deploys the defaults"
    fallbacks = RuntimeSettings(table_name="jobs", bucket_name="documents")
    setting_by_variable = {
        variable: name for name, variable in RuntimeSettings.env_variables().items()
        if name in RuntimeSettings.setting_names()
    }
    deployed: set[str] = set()
    environments = _function_environments(synthesis)
    assert len(environments) == 9
    for logical_id, environment in environments.items():
        assert environment[ENV.JOB_TTL_DAYS] == str(config.job_ttl_days), logical_id
        for variable, value in environment.items():
            name = setting_by_variable.get(variable)
            if name is None:
                continue
            deployed.add(name)
            assert value == str(getattr(config, name)) == str(getattr(fallbacks, name)), (logical_id, variable)
    # Every setting a handler can fall back on is deployed by some function, so all of them were compared.
    assert deployed == set(RuntimeSettings.setting_names())


def test_the_local_stack_sizes_and_configures_each_function_as_the_deployed_stack(synthesis: Synthesis) -> None:
    """The local stack's functions (``ocr_platform.local.function_specs``) against the synthesized ones."""
    from ocr_platform.local.function_specs import function_specs
    from ocr_platform.local.provisioning import resource_names

    config = synthesis.stack.config
    specs = function_specs(config, resource_names(config))
    local = {spec.environment["POWERTOOLS_SERVICE_NAME"]: spec for spec in specs}
    compared = {*RuntimeSettings.env_variables().values(), ENV.ENGINE_FALLBACK, ENV.METRICS_NAMESPACE}
    deployed_services = set()
    for resource in stage_resources(synthesis).values():
        if resource["Type"] != "AWS::Lambda::Function":
            continue
        props = resource["Properties"]
        environment = props["Environment"]["Variables"]
        service = environment["POWERTOOLS_SERVICE_NAME"]
        deployed_services.add(service)
        spec = local[service]
        assert (spec.timeout_seconds, spec.memory_mb) == (props["Timeout"], props["MemorySize"]), service
        for variable, value in environment.items():
            if variable in compared and isinstance(value, str):
                assert spec.environment.get(variable) == value, (service, variable)
    assert deployed_services == set(local)


def test_every_retention_period_the_config_accepts_maps_to_a_cdk_retention() -> None:
    from ocr_infra.config import LOG_RETENTION_PERIODS_DAYS
    from ocr_infra.platform_function import RETENTION_BY_DAYS

    assert set(RETENTION_BY_DAYS) == LOG_RETENTION_PERIODS_DAYS
