"""``ocr-platform doctor`` against the accounts an operator meets: a ready one, a new one, and none at all.

moto answers what it emulates faithfully (STS, the CDKToolkit stack, its SSM version parameter). Service
Quotas (moto knows only VPC quotas) and Lambda's GetAccountSettings (moto has none) come from botocore's
Stubber with the answers a real account gives. Docker is a fake runner. The tests read the lines a person
sees: each check's status, and the fix with the quota code and the value to ask for.
"""

from __future__ import annotations

import importlib.util
import json
import re
import tarfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber
from moto import mock_aws

from ocr_infra.config import PlatformConfig
from ocr_platform.cli import commands as cli
from ocr_platform.cli import doctor, doctor_quotas

REGION = "eu-west-1"
ACCOUNT = "123456789012"  # moto's
G5_QUOTA = {"ServiceCode": "sagemaker", "QuotaCode": "L-G5TEST01", "QuotaName": "ml.g5.xlarge for endpoint usage", "Value": 0.0}
OTHER_QUOTA = {"ServiceCode": "sagemaker", "QuotaCode": "L-OTHER001", "QuotaName": "ml.m5.large for endpoint usage", "Value": 4.0}
ENGINE_INFO = "Client: Docker Engine - Community\nServer:\n Server Version: 27.3.1\n Architecture: x86_64\n"
BOOTSTRAP_TEMPLATE = {
    "Resources": {
        "CdkBootstrapVersion": {
            "Type": "AWS::SSM::Parameter",
            "Properties": {"Type": "String", "Name": "/cdk-bootstrap/hnb659fds/version", "Value": "29"},
        }
    },
    "Outputs": {"BootstrapVersion": {"Value": {"Fn::GetAtt": ["CdkBootstrapVersion", "Value"]}}},
}


def docker_ok(argv: Sequence[str]) -> tuple[int, str]:
    return 0, ENGINE_INFO


@pytest.fixture
def aws_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Fake credentials (conftest) and a config of our own: ~/.aws is never read, no instance metadata asked."""
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "aws-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    for name in ("AWS_REGION", "AWS_PROFILE", "CDK_DOCKER"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(boto3, "DEFAULT_SESSION", None)


@pytest.fixture
def no_credentials(aws_home: None, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(name, raising=False)


def stub_account(
    monkeypatch: pytest.MonkeyPatch, *, concurrency: int, unreserved: int, applied: list[dict[str, Any]], defaults: list[dict[str, Any]]
) -> None:
    """Every boto3 client of the test answers Lambda and Service Quotas as such an account would; the rest is moto's."""
    create = boto3.session.Session.client
    stubbers: list[Stubber] = []

    def client(self: boto3.session.Session, service_name: str, **kwargs: Any) -> Any:
        made = create(self, service_name, **kwargs)
        stubber = Stubber(made)
        if service_name == "lambda":
            limits = {"ConcurrentExecutions": concurrency, "UnreservedConcurrentExecutions": unreserved}
            stubber.add_response("get_account_settings", {"AccountLimit": limits}, {})
        elif service_name == "service-quotas":
            stubber.add_response("list_service_quotas", {"Quotas": applied[:1], "NextToken": "page-2"}, {"ServiceCode": "sagemaker"})
            stubber.add_response("list_service_quotas", {"Quotas": applied[1:]}, {"ServiceCode": "sagemaker", "NextToken": "page-2"})
            if not any(quota["QuotaName"] == G5_QUOTA["QuotaName"] for quota in applied):
                stubber.add_response("list_aws_default_service_quotas", {"Quotas": defaults}, {"ServiceCode": "sagemaker"})
        else:
            return made
        stubber.activate()
        stubbers.append(stubber)
        return made

    monkeypatch.setattr(boto3.session.Session, "client", client)


def run(*options: str) -> tuple[int, list[str]]:
    """``ocr-platform doctor -c OPTION...`` (region from AWS_DEFAULT_REGION) with a running Docker engine."""
    results = doctor.diagnose(context_options=options, docker=docker_ok)
    text = doctor.format_results(results)
    assert "Traceback" not in text
    return doctor.exit_status(results), text.splitlines()


def line(lines: list[str], start: str) -> str:
    found = [text for text in lines if text.startswith(start)]
    assert len(found) == 1, f"no single line starting {start!r} in:\n" + "\n".join(lines)
    return found[0]


def fix_of(lines: list[str], start: str) -> str:
    return lines[lines.index(line(lines, start)) + 1]


@pytest.fixture
def ready_account(aws_home: None, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    with mock_aws():
        boto3.client("cloudformation", region_name=REGION).create_stack(StackName="CDKToolkit", TemplateBody=json.dumps(BOOTSTRAP_TEMPLATE))
        stub_account(monkeypatch, concurrency=1000, unreserved=1000, applied=[OTHER_QUOTA, {**G5_QUOTA, "Value": 2.0}], defaults=[])
        yield


@pytest.fixture
def new_account(aws_home: None, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Never bootstrapped, no GPU endpoint quota, Lambda reduced to 10 concurrent executions."""
    with mock_aws():
        stub_account(monkeypatch, concurrency=10, unreserved=10, applied=[OTHER_QUOTA], defaults=[OTHER_QUOTA, G5_QUOTA])
        yield


def test_a_ready_account_passes_every_check(ready_account: None) -> None:
    status, lines = run()
    assert status == 0, "\n".join(lines)
    assert line(lines, "ok    credentials  ") == f"ok    credentials  arn:aws:sts::{ACCOUNT}:user/moto (account {ACCOUNT})"
    assert line(lines, "ok    region  ") == f"ok    region  {REGION} (from AWS_DEFAULT_REGION)"
    assert line(lines, "ok    cdk bootstrap  ").endswith("version 29 (needs >= 6; CDKToolkit CREATE_COMPLETE)")
    assert line(lines, "ok    docker  ") == "ok    docker  `docker info`: engine 27.3.1 on x86_64"
    assert "ml.g5.xlarge for endpoint usage = 2 (quota L-G5TEST01)" in line(lines, "ok    sagemaker quota  ")
    assert "1000 of the account's 1000 unreserved >= 42" in line(lines, "ok    lambda concurrency  ")
    assert "reserved mode is possible here" in line(lines, "ok    reserved concurrency  ")
    assert line(lines, "ok    lambda memory  ").startswith("ok    lambda memory  every function fits a new account's 3008 MB")
    assert lines[-1] == "ready for `npx cdk deploy`"
    assert lines[-2].startswith("note  the GPU stack reads the core's outputs") and "`npx cdk deploy --all`" in lines[-2]
    assert not [text for text in lines if text.startswith(("FAIL", "WARN", "skip"))]


def test_a_new_account_gets_the_commands_and_quotas_that_unblock_it(new_account: None) -> None:
    status, lines = run()
    assert status == 1
    assert line(lines, "FAIL  cdk bootstrap  ").endswith(f"no CDKToolkit stack and no SSM parameter /cdk-bootstrap/hnb659fds/version in {REGION}")
    assert fix_of(lines, "FAIL  cdk bootstrap  ") == f"      fix: npx cdk bootstrap aws://{ACCOUNT}/{REGION}"
    assert "ml.g5.xlarge for endpoint usage = 0 (quota L-G5TEST01)" in line(lines, "FAIL  sagemaker quota  ")
    fix = fix_of(lines, "FAIL  sagemaker quota  ")
    # One instance to serve and one more for a blue/green redeploy while it runs; or the core stack alone.
    assert f"--service-code sagemaker --quota-code L-G5TEST01 --desired-value 2 --region {REGION}" in fix
    assert "deploy the core stack alone (`npx cdk deploy OcrPlatform`, stack ocr-platform-dev" in fix
    assert "-c ocr:models=pp-ocrv5,pp-ocrv6,pp-structurev3" in fix and "max_instance_count" not in fix  # 0 cannot be lowered to
    assert "allows 10 concurrent executions; the stage can ask for 42 (invoker 5 + processor 20" in line(lines, "FAIL  lambda concurrency  ")
    fix = fix_of(lines, "FAIL  lambda concurrency  ")
    assert f"--quota-code L-B99A9384 --desired-value 42 --region {REGION}" in fix
    assert "cannot fit: at their smallest the stage still asks for 17" in fix
    assert "reserved mode is not possible here: 10 unreserved - 20 < the 100 Lambda keeps" in line(lines, "ok    reserved concurrency  ")
    assert line(lines, "ok    lambda memory  ")
    assert lines[-1] == "3 check(s) FAIL: fix them before `npx cdk deploy`"


def test_a_new_account_refuses_reserved_mode_and_more_than_3008_mb(new_account: None) -> None:
    status, lines = run("ocr:processor_concurrency_mode=reserved", "ocr:processor_memory_mb=4096", "ocr:max_instance_count=2")
    assert status == 1
    assert "would leave -10 of 10 unreserved; Lambda keeps at least 100" in line(lines, "FAIL  reserved concurrency  ")
    fix = fix_of(lines, "FAIL  reserved concurrency  ")
    assert fix.startswith("      fix: deploy with -c ocr:processor_concurrency_mode=dispatcher")
    assert "--quota-code L-B99A9384 --desired-value 120" in fix and "lower processor_max_concurrency" not in fix
    assert "processor_memory_mb=4096 MB > the 3008 MB of a new account" in line(lines, "FAIL  lambda memory  ")
    assert fix_of(lines, "FAIL  lambda memory  ").startswith("      fix: -c ocr:processor_memory_mb=3008, or ask AWS Support")
    assert "--desired-value 4 " in fix_of(lines, "FAIL  sagemaker quota  ")  # 2 instances, twice for blue/green


def test_a_quota_of_one_instance_warns_that_a_redeploy_needs_two(aws_home: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """Enough to serve, not to redeploy while serving: SageMaker's blue/green update starts a second fleet."""
    with mock_aws():
        stub_account(monkeypatch, concurrency=1000, unreserved=1000, applied=[{**G5_QUOTA, "Value": 1.0}], defaults=[])
        _, lines = run()
    assert "ml.g5.xlarge for endpoint usage = 1 (quota L-G5TEST01)" in line(lines, "WARN  sagemaker quota  ")
    assert "a blue/green redeploy while it runs needs 2" in line(lines, "WARN  sagemaker quota  ")
    fix = fix_of(lines, "WARN  sagemaker quota  ")
    assert fix.startswith("      fix: redeploy ocr-platform-dev-gpu (`npx cdk deploy OcrPlatformGpu`) only while its endpoint is at 0 instances")
    assert "--desired-value 2 " in fix


def test_a_cpu_only_config_needs_no_sagemaker_quota(new_account: None) -> None:
    _, lines = run("ocr:models=pp-ocrv5")
    assert line(lines, "skip  sagemaker quota  ") == "skip  sagemaker quota  no deployed model routes to SageMaker"


def test_a_lower_processor_bound_is_offered_where_it_fits() -> None:
    config = PlatformConfig()
    result = doctor_quotas.check_concurrency(doctor_quotas.LambdaLimits(concurrency=30, unreserved=30), config, REGION)
    assert result.status.value == "FAIL" and result.detail.startswith("the account allows 30 concurrent executions; the stage can ask for 42")
    assert result.fix.endswith("; or lower processor_max_concurrency (-c ocr:processor_max_concurrency=8)")


def test_without_credentials_it_says_how_to_configure_them_and_skips_the_account_checks(
    no_credentials: None, capsys: pytest.CaptureFixture[str]
) -> None:
    status, lines = run()
    assert status == 1
    assert line(lines, "FAIL  credentials  ").startswith("FAIL  credentials  no AWS credentials found")
    assert "aws configure" in fix_of(lines, "FAIL  credentials  ")
    for name in ("cdk bootstrap", "sagemaker quota", "lambda concurrency", "reserved concurrency", "lambda memory"):
        assert line(lines, f"skip  {name}  ") == f"skip  {name}  needs credentials"
    assert line(lines, "ok    docker  ")


def test_the_cli_without_credentials_exits_1_with_the_fix(
    no_credentials: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CDK_DOCKER", "true")  # a "docker info" that succeeds: no Docker engine needed
    assert cli.main(["doctor", "--region", REGION, "-c", "ocr:stage=prod"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert line(out, "ok    config  ").startswith("ok    config  ocr-platform-prod then ocr-platform-prod-gpu: ")
    assert line(out, "FAIL  credentials  ")
    assert fix_of(out, "FAIL  credentials  ").startswith("      fix: run `aws configure` (access keys) or `aws configure sso`")
    assert line(out, "ok    region  ") == f"ok    region  {REGION} (from --region)"
    assert line(out, "ok    docker  ") == "ok    docker  `true info`: answered"


def test_no_region_fails_and_an_unknown_profile_is_a_credentials_failure(
    aws_home: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("AWS_DEFAULT_REGION")
    with mock_aws():
        results = doctor.diagnose(docker=docker_ok)
    lines = doctor.format_results(results).splitlines()
    assert line(lines, "FAIL  region  ").endswith("no region configured (the CDK CLI would fall back to us-east-1)")
    assert line(lines, "skip  cdk bootstrap  ") == "skip  cdk bootstrap  needs a region"
    lines = doctor.format_results(doctor.diagnose(profile="nobody", docker=docker_ok)).splitlines()
    assert line(lines, "FAIL  credentials  ") == "FAIL  credentials  The config profile (nobody) could not be found"
    assert "aws configure --profile nobody" in fix_of(lines, "FAIL  credentials  ")


@pytest.mark.parametrize(
    ("answer", "status", "detail", "fix"),
    [
        (FileNotFoundError(2, "No such file or directory"), "FAIL", "cannot run `docker` (No such file or directory)", "install Docker"),
        ((1, "Cannot connect to the Docker daemon at unix:///var/run/docker.sock.\n"), "FAIL",
         "`docker info` failed (exit 1): Cannot connect to the Docker daemon", "start the engine"),
        ((0, " Server Version: 27.3.1\n Architecture: aarch64\n"), "WARN", "engine 27.3.1 on aarch64", "tonistiigi/binfmt"),
    ],
)
def test_docker_must_answer(answer: Any, status: str, detail: str, fix: str) -> None:
    def runner(argv: Sequence[str]) -> tuple[int, str]:
        assert list(argv) == ["docker", "info"]
        if isinstance(answer, Exception):
            raise answer
        return answer

    result = doctor.check_docker(runner, {})
    assert (result.status.value, detail in result.detail, fix in result.fix) == (status, True, True)


def test_docker_fails_on_a_containerd_image_store_that_would_push_oci_manifests() -> None:
    """SageMaker and Lambda reject the OCI manifest such a store pushes with an attestation: the deploy would fail
    half-way. Without default attestations the assets' Docker media types hold (ocr_infra.image_build)."""
    info = "Server Version: 29.0.1\nStorage Driver: overlayfs\n driver-type: io.containerd.snapshotter.v1\nArchitecture: x86_64\n"
    result = doctor.check_docker(lambda argv: (0, info), {})
    assert result.status is doctor.Status.FAIL and "containerd image store" in result.detail
    assert "SageMaker (the endpoint image) and Lambda (the processor image) refuse" in result.detail
    assert result.fix.startswith("export BUILDX_NO_DEFAULT_ATTESTATIONS=1 before `npx cdk deploy`, or turn off")
    fixed = doctor.check_docker(lambda argv: (0, info), {"BUILDX_NO_DEFAULT_ATTESTATIONS": "1"})
    assert fixed.status is doctor.Status.OK and "pushed with Docker media types" in fixed.detail
    assert doctor.check_docker(lambda argv: (0, info.replace("io.containerd.snapshotter.v1", "overlay2")), {}).status is doctor.Status.OK


def test_docker_honours_cdk_docker() -> None:
    called: list[Sequence[str]] = []
    result = doctor.check_docker(lambda argv: (called.append(argv), (0, ""))[1], {"CDK_DOCKER": "finch"})
    assert called == [["finch", "info"]] and result.detail == "`finch info`: answered"


def test_an_old_or_failed_bootstrap_fails(aws_home: None) -> None:
    with mock_aws():
        cloudformation, ssm = boto3.client("cloudformation"), boto3.client("ssm")
        ssm.put_parameter(Name="/cdk-bootstrap/hnb659fds/version", Value="5", Type="String")
        old = doctor.check_bootstrap(cloudformation, ssm, account=ACCOUNT, region=REGION)
        assert old.status.value == "FAIL" and old.detail.startswith("version 5 < 6, which aws-cdk-lib requires")
        assert old.fix == f"`npx cdk bootstrap aws://{ACCOUNT}/{REGION}` (upgrades it)"
        ssm.put_parameter(Name="/cdk-bootstrap/hnb659fds/version", Value="7", Type="String", Overwrite=True)
        assert doctor.check_bootstrap(cloudformation, ssm, account=ACCOUNT, region=REGION).status.value == "WARN"


def test_the_config_is_cdk_json_then_the_c_options(tmp_path: Path) -> None:
    cdk_json = tmp_path / "cdk.json"
    cdk_json.write_text(json.dumps({"context": {"ocr": {"stage": "prod", "processor_memory_mb": 4096}}}))
    context = doctor.load_context(["ocr:processor_memory_mb=5120"], cdk_json)
    result, config = doctor.check_config(context, 1)
    assert config is not None and (config.stage, config.processor_memory_mb) == ("prod", 5120)
    assert result.detail.startswith("ocr-platform-prod then ocr-platform-prod-gpu: ") and result.detail.endswith("(from cdk.json and 1 -c option(s))")
    result, config = doctor.check_config(doctor.load_context(["ocr:processor_memory_mb=99999"], cdk_json), 1)
    assert config is None and result.status.value == "FAIL" and "processor_memory_mb" in result.detail
    with pytest.raises(ValueError, match="is not KEY=VALUE"):
        doctor.load_context(["ocr:stage"], cdk_json)


def test_the_minimum_bootstrap_version_is_the_installed_aws_cdk_libs() -> None:
    """The synthesizer's own constant, read from the installed library without starting jsii."""
    spec = importlib.util.find_spec("aws_cdk")
    assert spec is not None and spec.origin is not None
    bundle = next((Path(spec.origin).parent / "_jsii").glob("aws-cdk-lib@*.jsii.tgz"))
    with tarfile.open(bundle) as archive:
        member = archive.extractfile("package/core/lib/stack-synthesizers/default-synthesizer.js")
        assert member is not None
        source = member.read().decode()
    constants = dict(re.findall(r"(MIN_(?:LOOKUP_ROLE_)?BOOTSTRAP_STACK_VERSION)=(\d+)", source))
    assert int(constants["MIN_BOOTSTRAP_STACK_VERSION"]) == doctor.MIN_BOOTSTRAP_VERSION
    assert int(constants["MIN_LOOKUP_ROLE_BOOTSTRAP_STACK_VERSION"]) == doctor.LOOKUP_ROLE_BOOTSTRAP_VERSION


def test_pointed_at_the_local_stack_it_says_so_and_blocks(ready_account: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """A shell prepared with ``eval "$(ocr-platform local env)"``: the doctor names the endpoint, not a fine AWS account."""
    from types import SimpleNamespace

    from ocr_platform.local import supervisor

    monkeypatch.setattr(supervisor, "running_stack", lambda: SimpleNamespace(moto_url="http://127.0.0.1:4566"))
    environ = {"AWS_ENDPOINT_URL": "http://127.0.0.1:4566", "AWS_ENDPOINT_URL_LAMBDA": "http://127.0.0.1:4567"}
    results = doctor.diagnose(docker=docker_ok, environ=environ)
    lines = doctor.format_results(results).splitlines()
    assert doctor.exit_status(results) == 1
    found = line(lines, "FAIL  endpoint  ")
    assert "AWS_ENDPOINT_URL, AWS_ENDPOINT_URL_LAMBDA" in found and "the running local stack" in found and "not your AWS account" in found
    assert "unset AWS_ENDPOINT_URL AWS_ENDPOINT_URL_LAMBDA" in fix_of(lines, "FAIL  endpoint  ")
    assert not [text for text in run()[1] if text.startswith("FAIL  endpoint")], "without the variables there is no endpoint check"
