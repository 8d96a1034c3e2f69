"""``ocr-platform doctor``: what would stop ``npx cdk deploy`` in this account, said before a deploy fails.

A first deploy fails late and at a cost when the account or the machine is not ready: the CDK was never
bootstrapped in the region, no Docker engine runs to build the two images, the endpoint's GPU instance type
has a SageMaker quota of 0 (or too little for a blue/green redeploy), or a new account's Lambda limits are below
what the stage asks for. CloudFormation then rolls the stack back after the images were built and pushed: the
core stack for a Lambda shortfall, the GPU stack alone for a SageMaker one. Each check reads one fact from the
account or the machine, compares it with the config ``cdk deploy`` would build (``cdk.json``'s context and
the same ``-c`` options, as ``ocr_infra.app_builder`` does) and says what to do about a shortfall: the command
to run, the quota to request with its code and the value needed, or the config field to change.

It only reads: sts:GetCallerIdentity, cloudformation:DescribeStacks, ssm:GetParameter,
servicequotas:ListServiceQuotas and ListAWSDefaultServiceQuotas, lambda:GetAccountSettings. The account
checks live in ``doctor_quotas``; this module runs them all and prints one line per check:

>>> print(format_results([CheckResult("docker", Status.FAIL, "`docker info` failed (exit 1)", "start Docker")]))
FAIL  docker  `docker info` failed (exit 1)
      fix: start Docker
1 check(s) FAIL: fix them before `npx cdk deploy`
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, cast

import boto3
from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError, ProfileNotFound

from ocr_infra.config import PlatformConfig
from ocr_infra.image_build import NO_ATTESTATIONS_VALUE, NO_ATTESTATIONS_VARIABLE
from ocr_infra.paths import CDK_JSON
from ocr_platform.cli.doctor_quotas import CheckResult, Status, check_lambda, check_sagemaker_quota, skipped, unreadable
from ocr_platform.core.client_errors import describe_aws_error

__all__ = ["CheckResult", "Status", "diagnose", "exit_status", "format_results", "run_checks"]

#: What the ``DefaultStackSynthesizer`` of the installed aws-cdk-lib (2.275.0) requires of the bootstrap stack
#: (its ``MIN_BOOTSTRAP_STACK_VERSION``): every synthesized template carries a ``CheckBootstrapVersion`` rule
#: that refuses the versions below. ``tests/unit/test_doctor.py`` reads it from the installed library.
MIN_BOOTSTRAP_VERSION = 6
#: The synthesizer's lookup role (``MIN_LOOKUP_ROLE_BOOTSTRAP_STACK_VERSION``), which the CDK CLI assumes to
#: read a deployed stack (``cdk diff``, the change set of ``cdk deploy``); below it, it uses your credentials.
LOOKUP_ROLE_BOOTSTRAP_VERSION = 8
#: The CDK's default bootstrap qualifier, unless the context sets ``@aws-cdk/core:bootstrapQualifier``.
DEFAULT_QUALIFIER = "hnb659fds"
QUALIFIER_CONTEXT = "@aws-cdk/core:bootstrapQualifier"
TOOLKIT_STACK = "CDKToolkit"
#: Stack states in which the bootstrap resources exist and can be deployed against.
USABLE_STACK_STATES = frozenset(
    {"CREATE_COMPLETE", "UPDATE_COMPLETE", "UPDATE_ROLLBACK_COMPLETE", "IMPORT_COMPLETE", "IMPORT_ROLLBACK_COMPLETE"}
)

#: ``docker info``'s storage driver line when the containerd image store is on; with it, a build is pushed as an OCI
#: image index (with provenance attestations), which neither SageMaker nor Lambda accepts (``ocr_infra.image_build``).
CONTAINERD_SNAPSHOTTER = "io.containerd.snapshotter"
#: Printed under a ready verdict: the GPU stack reads the core's outputs when it deploys (``Fn::GetStackOutput``, the
#: CDK's weak cross-stack references), so a core change that replaces what it refers to reaches it only at its own deploy.
WEAK_REFERENCE_NOTE = (
    "note  the GPU stack reads the core's outputs (bucket, topics, key) only when it deploys itself: after a core deploy "
    "that replaced one of them, deploy the GPU stack too (`npx cdk deploy --all`)"
)

#: Runs a command; its exit status and output. It raises ``OSError`` when the program cannot be started.
CommandRunner = Callable[[Sequence[str]], tuple[int, str]]


def run_command(argv: Sequence[str]) -> tuple[int, str]:
    """Run ``argv`` for at most 60 s (a hung Docker socket must not hang the doctor); exit status and output."""
    try:
        done = subprocess.run(list(argv), capture_output=True, text=True, timeout=60, check=False)
    except subprocess.TimeoutExpired:
        return 124, f"`{' '.join(argv)}` did not answer within 60 s"
    return done.returncode, done.stdout + done.stderr


class _ContextScope:
    """Stands in for the CDK app in ``PlatformConfig.from_context``: the same lookups, without starting jsii."""

    def __init__(self, context: Mapping[str, Any]) -> None:
        self.node = self
        self._context = dict(context)

    def try_get_context(self, key: str) -> Any:
        return self._context.get(key)

    def get_all_context(self) -> dict[str, Any]:
        return dict(self._context)


def load_context(assignments: Sequence[str], cdk_json: Path = CDK_JSON) -> dict[str, Any]:
    """``cdk.json``'s context overridden by ``KEY=VALUE`` options, split at the first ``=`` as the CDK CLI does."""
    context = dict(json.loads(cdk_json.read_text(encoding="utf-8")).get("context", {})) if cdk_json.exists() else {}
    for assignment in assignments:
        key, equals, value = assignment.partition("=")
        if not (key and equals):
            raise ValueError(f"-c {assignment!r} is not KEY=VALUE (for example -c ocr:processor_memory_mb=4096)")
        context[key] = value
    return context


def check_config(context: Mapping[str, Any], options: int) -> tuple[CheckResult, PlatformConfig | None]:
    """The config ``cdk deploy`` would build from this context, or why ``cdk synth`` would refuse it."""
    try:
        config = PlatformConfig.from_context(cast(Any, _ContextScope(context)))
    except (ValueError, TypeError) as err:
        return CheckResult("config", Status.FAIL, str(err), "correct that -c option or cdk.json's \"ocr\" object"), None
    source = "cdk.json" + (f" and {options} -c option(s)" if options else "")
    routes = " + ".join(sorted(config.backends))
    stacks = config.stack_name + (f" then {config.gpu_stack_name}" if "sagemaker" in config.backends else "")
    return CheckResult("config", Status.OK, f"{stacks}: {', '.join(config.models)} on {routes} (from {source})"), config


def check_credentials(sts: Any) -> tuple[CheckResult, str | None]:
    """Who the credentials belong to, and the account id the other checks and the fixes name."""
    try:
        identity = sts.get_caller_identity()
    except NoCredentialsError:
        return CheckResult(
            "credentials", Status.FAIL, "no AWS credentials found (environment, --profile / AWS_PROFILE, ~/.aws)",
            "run `aws configure` (access keys) or `aws configure sso` and `aws sso login --profile NAME`, "
            "then pass --profile NAME or export AWS_PROFILE=NAME",
        ), None
    except (ClientError, BotoCoreError) as err:
        return CheckResult("credentials", Status.FAIL, describe_aws_error(err).message,
                           "renew the credentials (`aws sso login`) or configure valid ones (`aws configure`)"), None
    account = str(identity["Account"])
    return CheckResult("credentials", Status.OK, f"{identity['Arn']} (account {account})"), account


def check_region(region: str | None, source: str) -> CheckResult:
    """The region ``cdk deploy`` deploys to; without one the CDK CLI silently picks us-east-1."""
    if not region:
        return CheckResult("region", Status.FAIL, "no region configured (the CDK CLI would fall back to us-east-1)",
                           "pass --region REGION, export AWS_REGION=REGION, or `aws configure set region REGION`")
    return CheckResult("region", Status.OK, f"{region} (from {source})")


def check_docker(run: CommandRunner, environ: Mapping[str, str]) -> CheckResult:
    """The CDK builds the processor and endpoint images with ``$CDK_DOCKER`` (default ``docker``)."""
    docker = environ.get("CDK_DOCKER") or "docker"
    try:
        code, output = run([docker, "info"])
    except OSError as err:
        return CheckResult("docker", Status.FAIL, f"cannot run `{docker}` ({err.strerror or err}); cdk deploy builds two images with it",
                           "install Docker (Docker Desktop, or Docker Engine on Linux) and start it, "
                           "or set CDK_DOCKER to a compatible client (finch, podman)")
    if code != 0:
        last = next((line.strip() for line in reversed(output.splitlines()) if line.strip()), "no output")
        return CheckResult("docker", Status.FAIL, f"`{docker} info` failed (exit {code}): {last}",
                           "start the engine (Docker Desktop, or `sudo systemctl start docker`); on 'permission denied' "
                           "add yourself to the docker group (`sudo usermod -aG docker $USER`) and log in again")
    facts = {key.strip(): value.strip() for key, _, value in (line.partition(": ") for line in output.splitlines())}
    version, arch = facts.get("Server Version"), facts.get("Architecture", "")
    if arch and arch not in ("x86_64", "amd64"):
        return CheckResult("docker", Status.WARN, f"engine {version} on {arch}: both images are linux/amd64 and build under emulation (slow)",
                           "Docker Desktop emulates amd64 already; on Linux install QEMU's handlers "
                           "(`docker run --privileged --rm tonistiigi/binfmt --install amd64`)")
    found = f"engine {version}" + (f" on {arch}" if arch else "") if version else "answered"
    if CONTAINERD_SNAPSHOTTER in output:
        # The image assets ask for Docker media types (ocr_infra.image_build), but a provenance attestation, which Buildx
        # adds by default on this store, turns OCI media types back on: SageMaker ("Unsupported manifest media type")
        # and Lambda ("The image manifest, config or layer media type ... is not supported") refuse the push.
        if environ.get(NO_ATTESTATIONS_VARIABLE) == NO_ATTESTATIONS_VALUE:
            return CheckResult("docker", Status.OK, f"`{docker} info`: {found}, containerd image store with "
                               f"{NO_ATTESTATIONS_VARIABLE}={NO_ATTESTATIONS_VALUE}: images are pushed with Docker media types")
        return CheckResult("docker", Status.FAIL,
                           f"`{docker} info`: {found}, with the containerd image store: its builds carry a provenance attestation "
                           "and are pushed as OCI manifests, which SageMaker (the endpoint image) and Lambda (the processor image) refuse",
                           f"export {NO_ATTESTATIONS_VARIABLE}={NO_ATTESTATIONS_VALUE} before `npx cdk deploy`, or turn off \"Use "
                           "containerd for pulling and storing images\" (Docker Desktop: Settings > General; Docker Engine: remove "
                           "the containerd-snapshotter feature from /etc/docker/daemon.json and restart it)")
    return CheckResult("docker", Status.OK, f"`{docker} info`: {found}")


def _toolkit_stack(cloudformation: Any) -> dict[str, Any] | None:
    try:
        return cast(dict[str, Any], cloudformation.describe_stacks(StackName=TOOLKIT_STACK)["Stacks"][0])
    except ClientError as err:
        if err.response["Error"]["Code"] == "ValidationError" and "does not exist" in str(err):
            return None
        raise


def _bootstrap_version(ssm: Any, parameter: str) -> int | None:
    try:
        return int(ssm.get_parameter(Name=parameter)["Parameter"]["Value"])
    except ClientError as err:
        if err.response["Error"]["Code"] == "ParameterNotFound":
            return None
        raise


def check_bootstrap(cloudformation: Any, ssm: Any, *, account: str, region: str, qualifier: str = DEFAULT_QUALIFIER) -> CheckResult:
    """The bootstrap stack and the version parameter every synthesized template's ``BootstrapVersion`` reads."""
    command = f"npx cdk bootstrap aws://{account}/{region}"
    parameter = f"/cdk-bootstrap/{qualifier}/version"
    try:
        stack, version = _toolkit_stack(cloudformation), _bootstrap_version(ssm, parameter)
    except (ClientError, BotoCoreError) as err:
        return unreadable("cdk bootstrap", err, "cloudformation:DescribeStacks and ssm:GetParameter")
    status = stack["StackStatus"] if stack else None
    if stack is None and version is None:
        return CheckResult("cdk bootstrap", Status.FAIL,
                           f"not bootstrapped: no {TOOLKIT_STACK} stack and no SSM parameter {parameter} in {region}", command)
    if status and status.endswith("_IN_PROGRESS"):
        return CheckResult("cdk bootstrap", Status.WARN, f"{TOOLKIT_STACK} is {status}", "wait until it finishes, then run the doctor again")
    if status and status not in USABLE_STACK_STATES:
        return CheckResult("cdk bootstrap", Status.FAIL, f"{TOOLKIT_STACK} is {status}",
                           f"delete it (`aws cloudformation delete-stack --stack-name {TOOLKIT_STACK} --region {region}`), then `{command}`")
    where = f"{TOOLKIT_STACK} {status}" if status else f"no {TOOLKIT_STACK} stack: a custom --toolkit-stack-name?"
    if version is None:
        return CheckResult("cdk bootstrap", Status.FAIL, f"{where}, but no SSM parameter {parameter}", f"`{command}` (re-bootstraps)")
    if version < MIN_BOOTSTRAP_VERSION:
        return CheckResult("cdk bootstrap", Status.FAIL, f"version {version} < {MIN_BOOTSTRAP_VERSION}, which aws-cdk-lib requires ({where})",
                           f"`{command}` (upgrades it)")
    if version < LOOKUP_ROLE_BOOTSTRAP_VERSION:
        return CheckResult("cdk bootstrap", Status.WARN,
                           f"version {version}: no lookup role (needs {LOOKUP_ROLE_BOOTSTRAP_VERSION}), so cdk diff uses your own credentials ({where})",
                           f"`{command}` (upgrades it)")
    return CheckResult("cdk bootstrap", Status.OK, f"version {version} (needs >= {MIN_BOOTSTRAP_VERSION}; {where})")


def run_checks(
    session: boto3.Session,
    config: PlatformConfig | None,
    *,
    region_source: str = "your AWS config",
    docker: CommandRunner = run_command,
    environ: Mapping[str, str] = os.environ,
    qualifier: str = DEFAULT_QUALIFIER,
) -> list[CheckResult]:
    """Every check of this session's account and region against ``config`` (``None``: it was invalid)."""
    region = session.region_name
    credentials, account = check_credentials(session.client("sts", region_name=region or "us-east-1"))
    results = [credentials, check_region(region, region_source)]
    if account is None or not region:
        reason = "needs credentials" if account is None else "needs a region"
        return [*results, skipped("cdk bootstrap", reason), check_docker(docker, environ), *_skipped_quotas(reason)]
    results.append(check_bootstrap(session.client("cloudformation"), session.client("ssm"), account=account, region=region, qualifier=qualifier))
    results.append(check_docker(docker, environ))
    if config is None:
        return results + _skipped_quotas("needs a valid config")
    results.append(check_sagemaker_quota(session.client("service-quotas"), config, region))
    return results + check_lambda(session.client("lambda"), config, region)


def _skipped_quotas(reason: str) -> list[CheckResult]:
    return [skipped(name, reason) for name in ("sagemaker quota", "lambda concurrency", "reserved concurrency", "lambda memory")]


def _open_session(profile: str | None, region: str | None, environ: Mapping[str, str]) -> tuple[boto3.Session, str]:
    """A session in the region the CDK CLI would use (--region, AWS_REGION, AWS_DEFAULT_REGION, the profile's)."""
    configured = boto3.Session(profile_name=profile).region_name  # AWS_DEFAULT_REGION, else the profile's region
    profile_name = profile or environ.get("AWS_PROFILE") or "default"
    candidates = [("--region", region), ("AWS_REGION", environ.get("AWS_REGION")),
                  ("AWS_DEFAULT_REGION", environ.get("AWS_DEFAULT_REGION")), (f"profile {profile_name}", configured)]
    source, chosen = next(((source, value) for source, value in candidates if value), ("", None))
    return boto3.Session(profile_name=profile, region_name=chosen), source


def diagnose(
    *,
    profile: str | None = None,
    region: str | None = None,
    context_options: Sequence[str] = (),
    docker: CommandRunner = run_command,
    environ: Mapping[str, str] = os.environ,
    cdk_json: Path = CDK_JSON,
) -> list[CheckResult]:
    """The doctor as the CLI runs it: the config from ``cdk.json`` and the ``-c`` options, then every check."""
    context: dict[str, Any] = {}
    try:
        context = load_context(context_options, cdk_json)
        config_result, config = check_config(context, len(context_options))
    except ValueError as err:  # a -c that is no assignment, or a cdk.json that is no JSON
        config_result, config = CheckResult("config", Status.FAIL, str(err), "correct it as for `npx cdk deploy -c`"), None
    qualifier = str(context.get(QUALIFIER_CONTEXT) or DEFAULT_QUALIFIER)
    try:
        session, source = _open_session(profile, region, environ)
    except ProfileNotFound as err:
        missing = CheckResult("credentials", Status.FAIL, str(err),
                              f"create it (`aws configure --profile {err.kwargs.get('profile')}` or `aws configure sso`), or name another profile")
        return [config_result, missing, skipped("region", "needs the profile"), skipped("cdk bootstrap", "needs credentials"),
                check_docker(docker, environ), *_skipped_quotas("needs credentials")]
    endpoint = check_endpoint(environ)
    checks = run_checks(session, config, region_source=source, docker=docker, environ=environ, qualifier=qualifier)
    return [config_result, *([endpoint] if endpoint else []), *checks]


def check_endpoint(environ: Mapping[str, str]) -> CheckResult | None:
    """A check that fails when the standard boto3 variables point the doctor (and ``cdk deploy``) away from AWS,
    as in a shell prepared with ``eval "$(ocr-platform local env)"`` for the local stack; ``None`` when none is set."""
    names = sorted(name for name in environ if name == "AWS_ENDPOINT_URL" or name.startswith("AWS_ENDPOINT_URL_"))
    if not names:
        return None
    url = environ.get("AWS_ENDPOINT_URL") or environ[names[0]]
    try:
        from ocr_platform.local import supervisor

        running = supervisor.running_stack()
    except Exception:  # noqa: BLE001 - naming the local stack is a courtesy; the check stands without it
        running = None
    what = "the running local stack" if running is not None and url.rstrip("/") == running.moto_url.rstrip("/") else "an endpoint that is not AWS"
    return CheckResult(
        "endpoint", Status.FAIL, f"{', '.join(names)} point(s) at {url} ({what}): the checks below read it, not your AWS account",
        "open a new shell, or `unset " + " ".join(names) + "` (the local stack's `ocr-platform local env` sets them), then run the doctor again",
    )


def format_results(results: Sequence[CheckResult]) -> str:
    """One line per check (``status name detail``), its ``fix:`` indented below, and a verdict."""
    lines = []
    for result in results:
        lines.append(f"{result.status.value:<5} {result.name}  {result.detail}")
        if result.fix:
            lines.append(f"{'':6}fix: {result.fix}")
    failed = sum(result.status is Status.FAIL for result in results)
    warned = sum(result.status is Status.WARN for result in results)
    if failed:
        lines.append(f"{failed} check(s) FAIL: fix them before `npx cdk deploy`")
    else:
        lines.append(WEAK_REFERENCE_NOTE)
        lines.append("ready for `npx cdk deploy`" + (f" ({warned} warning(s))" if warned else ""))
    return "\n".join(lines)


def exit_status(results: Sequence[CheckResult]) -> int:
    """1 when a check FAILs (something blocks the deploy), else 0; warnings do not block."""
    return 1 if any(result.status is Status.FAIL for result in results) else 0
