"""The account limits ``ocr-platform doctor`` checks against the config, and the result every check returns.

A stage asks the account for a SageMaker GPU instance (when a deployed model routes to SageMaker) and for
Lambda concurrency and memory. A new account has less of each than the defaults ask for: no
``ml.g5.xlarge`` for endpoint usage at all, 10 concurrent executions instead of 1,000, and 3,008 MB per
function instead of 10,240. Each check names the quota to request (code and value) or the config field to
change. ``ocr_platform.cli.doctor`` runs these with the machine and bootstrap checks and prints them.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from botocore.exceptions import BotoCoreError, ClientError

from ocr_infra.config import CORE_STACK_ID, GPU_STACK_ID
from ocr_platform.core import defaults
from ocr_platform.core.client_errors import describe_aws_error
from ocr_platform.core.routing import MODEL_TABLE

if TYPE_CHECKING:
    from ocr_infra.config import PlatformConfig

#: Lambda's "Concurrent executions" quota in Service Quotas (service code ``lambda``).
LAMBDA_CONCURRENCY_QUOTA = "L-B99A9384"
#: That quota's default; AWS gives new accounts less and raises it with their usage.
DEFAULT_ACCOUNT_CONCURRENCY = 1000
#: The most memory a function of a new account may have (Lambda answers a larger ``MemorySize`` with "Member
#: must have value less than or equal to 3008").
NEW_ACCOUNT_MEMORY_MB = 3008


class Status(StrEnum):
    OK = "ok"
    #: Worth knowing, but the deploy can go ahead.
    WARN = "WARN"
    #: Blocks the deploy (or the stage as configured); ``doctor`` exits 1.
    FAIL = "FAIL"
    SKIP = "skip"


@dataclass(frozen=True)
class CheckResult:
    """One line of the doctor's report: what was checked, what was found and, unless ok, what to do."""

    name: str
    status: Status
    detail: str
    fix: str = ""


def skipped(name: str, reason: str) -> CheckResult:
    return CheckResult(name, Status.SKIP, reason)


def unreadable(name: str, err: Exception, permissions: str) -> CheckResult:
    """A check whose facts could not be read: a warning, since the deploy runs with its own roles."""
    return CheckResult(name, Status.WARN, f"could not check: {describe_aws_error(err).message}",
                       f"allow {permissions} to this caller, or check by hand")


def find_quota(service_quotas: Any, service_code: str, quota_name: str) -> dict[str, Any] | None:
    """The quota of that name: its value applied to the account, else AWS's default (Service Quotas lists
    only the quotas it has an applied value for in the first list). Quota codes are looked up, never assumed."""
    for operation in ("list_service_quotas", "list_aws_default_service_quotas"):
        for page in service_quotas.get_paginator(operation).paginate(ServiceCode=service_code):
            for quota in page["Quotas"]:
                if quota["QuotaName"].casefold() == quota_name.casefold():
                    return dict(quota)
    return None


def check_sagemaker_quota(service_quotas: Any, config: PlatformConfig, region: str) -> CheckResult:
    """The GPU stack's need: the endpoint scales to ``max_instance_count`` instances of ``instance_type``, SageMaker
    refuses the endpoint itself (it starts with one instance) when the quota is 0, and a redeploy that changes the
    endpoint while it runs is blue/green: SageMaker starts the new fleet beside the old one, twice the instances
    (https://docs.aws.amazon.com/sagemaker/latest/dg/deployment-guardrails-blue-green.html). The core stack needs
    no GPU quota: it deploys, and serves the CPU routes, whatever this check says."""
    if "sagemaker" not in config.backends:
        return skipped("sagemaker quota", "no deployed model routes to SageMaker")
    quota_name = f"{config.instance_type} for endpoint usage"
    cpu_only = ",".join(name for name, spec in MODEL_TABLE.items() if spec.backend == "lambda")
    core_only = f"or deploy the core stack alone (`npx cdk deploy {CORE_STACK_ID}`, stack {config.stack_name}: the CPU routes, API and console)"
    try:
        quota = find_quota(service_quotas, "sagemaker", quota_name)
    except (ClientError, BotoCoreError) as err:
        return unreadable("sagemaker quota", err, "servicequotas:ListServiceQuotas and servicequotas:ListAWSDefaultServiceQuotas")
    if quota is None:
        return CheckResult("sagemaker quota", Status.WARN, f"Service Quotas lists no quota {quota_name!r} in {region}",
                           f"check that SageMaker offers {config.instance_type} in {region}, {core_only}, or deploy CPU models only (-c ocr:models={cpu_only})")
    value, code, need = int(quota["Value"]), quota["QuotaCode"], config.max_instance_count
    blue_green = 2 * need
    detail = (f"{quota_name} = {value} (quota {code}); {config.gpu_stack_name}'s endpoint scales up to max_instance_count={need}, "
              f"and a blue/green redeploy while it runs needs {blue_green}")
    request = (f"`aws service-quotas request-service-quota-increase --service-code sagemaker --quota-code {code} "
               f"--desired-value {{}} --region {region}`")
    if value >= blue_green:
        return CheckResult("sagemaker quota", Status.OK, detail)
    if value >= need:
        return CheckResult(
            "sagemaker quota", Status.WARN, detail,
            f"redeploy {config.gpu_stack_name} (`npx cdk deploy {GPU_STACK_ID}`) only while its endpoint is at 0 instances "
            "(idle_minutes after the last GPU job), "
            f"or request {blue_green}: {request.format(blue_green)}",
        )
    lower = f", lower max_instance_count (-c ocr:max_instance_count={value})" if value >= 1 else ""
    return CheckResult(
        "sagemaker quota", Status.FAIL, detail,
        f"request {blue_green} (at least {need}) in Service Quotas: {request.format(blue_green)}{lower}, {core_only}, "
        f"or deploy CPU models only (-c ocr:models={cpu_only})",
    )


@dataclass(frozen=True)
class LambdaLimits:
    """``GetAccountSettings``' ``AccountLimit``: the region's concurrency quota and what no function reserves."""

    concurrency: int
    unreserved: int


def _request(need: int, region: str) -> str:
    return (f"request the Lambda quota \"Concurrent executions\" ({LAMBDA_CONCURRENCY_QUOTA}) of at least {need}: "
            f"`aws service-quotas request-service-quota-increase --service-code lambda --quota-code {LAMBDA_CONCURRENCY_QUOTA} "
            f"--desired-value {need} --region {region}`")


def check_concurrency(limits: LambdaLimits, config: PlatformConfig, region: str) -> CheckResult:
    """The stage's functions at their bounds (``PlatformConfig.peak_concurrency``) must fit in the account."""
    need = config.peak_concurrency
    processor = config.processor_max_concurrency if "lambda" in config.backends else 0
    rest = need - config.invoker_max_concurrency - processor - config.webhook_deliverer_max_concurrency
    parts = (f"invoker {config.invoker_max_concurrency} + processor {processor} + webhook deliverer "
             f"{config.webhook_deliverer_max_concurrency} + {rest} for the other functions")
    if limits.concurrency < need:
        floor = defaults.peak_concurrency(invoker=2, processor=1 if processor else 0, webhook_deliverer=2)
        spare = limits.concurrency - (need - processor)
        if processor and spare >= 1:
            lower = f"; or lower processor_max_concurrency (-c ocr:processor_max_concurrency={spare})"
        elif floor <= limits.concurrency:
            lower = "; or lower processor_max_concurrency, invoker_max_concurrency and webhook_deliverer_max_concurrency"
        else:
            lower = (f"; lowering processor_max_concurrency, invoker_max_concurrency and webhook_deliverer_max_concurrency "
                     f"cannot fit: at their smallest the stage still asks for {floor}")
        return CheckResult("lambda concurrency", Status.FAIL,
                           f"the account allows {limits.concurrency} concurrent executions; the stage can ask for {need} ({parts})",
                           _request(need, region) + lower)
    if limits.unreserved < need:
        return CheckResult("lambda concurrency", Status.WARN,
                           f"other functions reserve {limits.concurrency - limits.unreserved} of the account's {limits.concurrency}; "
                           f"{limits.unreserved} unreserved < {need} the stage can ask for ({parts})",
                           f"free reserved concurrency elsewhere, or {_request(limits.concurrency + need - limits.unreserved, region)}")
    return CheckResult("lambda concurrency", Status.OK,
                       f"{limits.unreserved} of the account's {limits.concurrency} unreserved >= {need} the stage can ask for ({parts})")


def check_reservation(limits: LambdaLimits, config: PlatformConfig, region: str) -> CheckResult:
    """``reserved`` mode reserves ``processor_max_concurrency``; Lambda refuses a reservation that leaves fewer
    than ``defaults.MIN_UNRESERVED_CONCURRENCY`` executions unreserved."""
    if "lambda" not in config.backends:
        return skipped("reserved concurrency", "no deployed model runs on the CPU processor")
    reserve, least = config.processor_max_concurrency, defaults.MIN_UNRESERVED_CONCURRENCY
    left = limits.unreserved - reserve
    if config.processor_concurrency_mode == "reserved":
        if left >= least:
            return CheckResult("reserved concurrency", Status.OK,
                               f"reserving processor_max_concurrency={reserve} leaves {left} unreserved (Lambda keeps {least})")
        lower = f", or lower processor_max_concurrency (-c ocr:processor_max_concurrency={limits.unreserved - least})" if limits.unreserved - least >= 1 else ""
        return CheckResult(
            "reserved concurrency", Status.FAIL,
            f"reserving processor_max_concurrency={reserve} would leave {left} of {limits.unreserved} unreserved; Lambda keeps at least {least}",
            f"deploy with -c ocr:processor_concurrency_mode=dispatcher (any account), or "
            f"{_request(limits.concurrency + least - left, region)}{lower}",
        )
    if left >= least:
        return CheckResult("reserved concurrency", Status.OK,
                           f"dispatcher mode; reserved mode is possible here (reserving {reserve} leaves {left} unreserved, "
                           f"Lambda keeps {least}): -c ocr:processor_concurrency_mode=reserved")
    return CheckResult("reserved concurrency", Status.OK,
                       f"dispatcher mode, nothing reserved (reserved mode is not possible here: {limits.unreserved} unreserved "
                       f"- {reserve} < the {least} Lambda keeps)")


def check_memory(limits: LambdaLimits, config: PlatformConfig) -> CheckResult:
    """New accounts may give a function at most 3,008 MB, and no AWS API reports that limit: Service Quotas
    has no Lambda memory quota and ``GetAccountSettings`` does not return it; Lambda only refuses the function
    at deploy time. AWS documents that new accounts have reduced concurrency *and* memory quotas and raises
    both with usage, so a concurrency quota below Lambda's default of 1,000 is the sign this check reads: with
    it, memory above 3,008 MB fails; without it, memory above 3,008 MB is reported as not verifiable."""
    sizes = {
        name: int(getattr(config, name)) for name in config.field_names()
        if name.endswith("_memory_mb") and (name != "processor_memory_mb" or "lambda" in config.backends)
    }
    over = {name: size for name, size in sizes.items() if size > NEW_ACCOUNT_MEMORY_MB}
    if not over:
        return CheckResult("lambda memory", Status.OK, f"every function fits a new account's {NEW_ACCOUNT_MEMORY_MB} MB (largest "
                           f"{max(sizes.values())} MB)")
    asked = ", ".join(f"{name}={size}" for name, size in over.items())
    if limits.concurrency < DEFAULT_ACCOUNT_CONCURRENCY:
        return CheckResult(
            "lambda memory", Status.FAIL,
            f"{asked} MB > the {NEW_ACCOUNT_MEMORY_MB} MB of a new account, and this one looks new (concurrency quota "
            f"{limits.concurrency} < the default {DEFAULT_ACCOUNT_CONCURRENCY}); no AWS API shows the memory quota itself",
            " ".join(f"-c ocr:{name}={NEW_ACCOUNT_MEMORY_MB}" for name in over)
            + ", or ask AWS Support to lift the account's Lambda memory limit (AWS also lifts it with usage)",
        )
    return CheckResult("lambda memory", Status.OK, f"{asked} MB: no sign of a new account's {NEW_ACCOUNT_MEMORY_MB} MB limit "
                       f"(concurrency quota {limits.concurrency}); no AWS API shows the memory quota itself")


def check_lambda(client: Any, config: PlatformConfig, region: str) -> list[CheckResult]:
    """The three Lambda checks from one ``GetAccountSettings``."""
    names = ("lambda concurrency", "reserved concurrency", "lambda memory")
    try:
        account = client.get_account_settings()["AccountLimit"]
    except (ClientError, BotoCoreError) as err:
        return [unreadable(names[0], err, "lambda:GetAccountSettings"), *(skipped(name, "needs the account's Lambda limits") for name in names[1:])]
    limits = LambdaLimits(int(account["ConcurrentExecutions"]), int(account["UnreservedConcurrentExecutions"]))
    return [check_concurrency(limits, config, region), check_reservation(limits, config, region), check_memory(limits, config)]
