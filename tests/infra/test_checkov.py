"""checkov, the scanner security reviewers run on CloudFormation, on the synthesized templates: no failed check, and
every check the platform answers with a reason instead of a setting carries that reason in the template.

Two templates: the session's (the default config, synthesized once in ``conftest``) and one with the stage's own KMS
key and VPC (``customer_managed_key`` and ``vpc``), synthesized here once, cdk-nag included, where the key and the
VPC must reach what they are for. checkov runs from ``.venv-checkov`` (``scripts/setup.sh``; see
``requirements/checkov.txt`` for the pin and why it is a venv of its own).
"""

from __future__ import annotations

import json
import subprocess
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aws_cdk import App, Stack
from aws_cdk import aws_s3 as s3

from ocr_infra.app_builder import build_app
from ocr_infra.network import interface_endpoint_services
from ocr_infra.secure_defaults import CHECKOV_METADATA_KEY, MIN_CHECKOV_REASON_LENGTH, skip_checkov
from ocr_platform.core.routing import MODEL_TABLE
from tests.infra.conftest import Synthesis
from tests.infra.template_helpers import flatten

CHECKOV = Path(__file__).resolve().parents[2] / ".venv-checkov" / "bin" / "checkov"
#: The functions that call public hosts (documents by URL, webhooks) and so stay outside the VPC.
OUTSIDE_THE_VPC = ("InvokerFunction", "WebhookDelivererFunction")
#: What the default config answers with a reason, by check: each is a choice a reviewer reads in the template.
DEFAULT_SKIPS = {
    "CKV_AWS_115",  # function concurrency: bounded by event sources, the processor semaphore, schedules
    "CKV_AWS_116",  # function DLQ: on-failure destinations, SQS redrive, synchronous callers
    "CKV_AWS_117",  # VPC: off by default (PlatformConfig.vpc)
    "CKV_AWS_173",  # environment KMS key: off by default (customer_managed_key)
    "CKV_AWS_158",  # log group KMS key: likewise
    "CKV_AWS_119",  # DynamoDB customer managed key: likewise
    "CKV_AWS_149",  # Secrets Manager customer managed key: likewise
    "CKV_AWS_27",  # SQS: SSE-SQS, which this check does not recognize
    "CKV_AWS_18",  # the access-log bucket's own access logs
    "CKV_AWS_21",  # the console bucket's versioning
    "CKV_AWS_68",  # CloudFront WAF (the cdk-nag CFR2 reason)
    "CKV_AWS_86",  # CloudFront logging (CFR3)
    "CKV_AWS_174",  # CloudFront TLS 1.2 (CFR4)
}
#: With the stage's key and VPC, the key and network checks pass, except the VPC for the two public callers.
KEY_AND_VPC_SKIPS = DEFAULT_SKIPS - {"CKV_AWS_173", "CKV_AWS_158", "CKV_AWS_119", "CKV_AWS_149", "CKV_AWS_27"}


def require_checkov() -> None:
    if not CHECKOV.exists():
        pytest.skip(f"{CHECKOV} is missing: run `bash scripts/setup.sh`, which installs checkov there")


def scan(template: Path) -> dict[str, Any]:
    """checkov's JSON report on one CloudFormation template.

    ``--skip-download`` keeps checkov offline (it would fetch guidelines from Prisma Cloud); no ``--quiet``, which
    would leave the skipped checks, and so their reasons, out of the JSON report.
    """
    require_checkov()
    run = subprocess.run(
        [str(CHECKOV), "-f", str(template), "--framework", "cloudformation", "-o", "json", "--skip-download"],
        capture_output=True, text=True, timeout=300, check=False,
    )
    assert run.stdout.strip(), run.stderr
    report = json.loads(run.stdout)
    assert report["summary"]["parsing_errors"] == 0, report["summary"]
    return dict(report)


def scan_stage(outdir: Path, stacks: list[Stack]) -> dict[str, Any]:
    """checkov's reports on every template of a stage (the core and the GPU stack), as one."""
    reports = [scan(outdir / stack.template_file) for stack in stacks]
    return {"results": {kind: [check for report in reports for check in report["results"][kind]]
                        for kind in ("passed_checks", "failed_checks", "skipped_checks")}}


def failures(report: dict[str, Any]) -> list[str]:
    return [f"{c['check_id']} {c['resource']}: {c['check_name']}" for c in report["results"]["failed_checks"]]


def skips_without_a_reason(report: dict[str, Any]) -> list[str]:
    return [
        f"{c['check_id']} {c['resource']}: {c['check_result'].get('suppress_comment')!r}"
        for c in report["results"]["skipped_checks"]
        if len((c["check_result"].get("suppress_comment") or "").strip()) < MIN_CHECKOV_REASON_LENGTH
        or c["check_result"]["suppress_comment"] == "No comment provided"
    ]


def skipped(report: dict[str, Any]) -> Counter[str]:
    return Counter(c["check_id"] for c in report["results"]["skipped_checks"])


# ----- the default config ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def default_report(synthesis: Synthesis) -> dict[str, Any]:
    return scan_stage(synthesis.outdir, synthesis.platform.stacks)


def test_checkov_finds_nothing_in_the_default_template(default_report: dict[str, Any]) -> None:
    assert failures(default_report) == []


def test_the_gpu_container_runs_network_isolated(default_report: dict[str, Any]) -> None:
    """CKV_AWS_370 passes: the model's container reaches no network (SageMaker hands it the request, stores the answer)."""
    assert [c["resource"] for c in default_report["results"]["passed_checks"] if c["check_id"] == "CKV_AWS_370"] == [
        "AWS::SageMaker::Model.GpuBackendModel11C5A5D8"
    ]


def test_every_skip_in_the_default_template_carries_its_reason(default_report: dict[str, Any]) -> None:
    assert skips_without_a_reason(default_report) == []
    assert set(skipped(default_report)) == DEFAULT_SKIPS, "a new skip is a choice: add it here with its why"


# ----- the stage's own key and VPC -------------------------------------------------------------


@pytest.fixture(scope="module")
def key_and_vpc(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    """The template of a stage with customer_managed_key and vpc, cdk-nag clean, and checkov's report on it."""
    require_checkov()  # before the synthesis it would be for
    outdir = tmp_path_factory.mktemp("cdk.out.key-and-vpc")
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("CDK_DEFAULT_ACCOUNT", raising=False)
        patch.delenv("CDK_DEFAULT_REGION", raising=False)
        platform = build_app({"ocr:customer_managed_key": True, "ocr:vpc": True}, outdir=str(outdir))
    platform.app.synth()  # raises on any unacknowledged cdk-nag finding
    templates = [json.loads((outdir / stack.template_file).read_text(encoding="utf-8")) for stack in platform.stacks]
    yield {"Resources": {k: v for t in templates for k, v in t["Resources"].items()}}, scan_stage(outdir, platform.stacks)


def _of_type(template: dict[str, Any], kind: str) -> dict[str, dict[str, Any]]:
    return {name: r for name, r in template["Resources"].items() if r["Type"] == kind}


def test_checkov_finds_nothing_with_the_stages_key_and_vpc(key_and_vpc: tuple[dict[str, Any], dict[str, Any]]) -> None:
    _, report = key_and_vpc
    assert failures(report) == []
    assert skips_without_a_reason(report) == []
    assert set(skipped(report)) == KEY_AND_VPC_SKIPS
    assert skipped(report)["CKV_AWS_117"] == len(OUTSIDE_THE_VPC)


def test_one_key_encrypts_everything_the_stage_keeps(key_and_vpc: tuple[dict[str, Any], dict[str, Any]]) -> None:
    template, _ = key_and_vpc
    [key_id] = _of_type(template, "AWS::KMS::Key")
    key = template["Resources"][key_id]
    assert key["Properties"]["EnableKeyRotation"] is True
    assert key["DeletionPolicy"] == "Retain"  # retain_data: the retained bucket and table stay readable
    key_arn = {"Fn::GetAtt": [key_id, "Arn"]}
    # The GPU stack's log group, function and topic use the core's key through its output.
    for name, log_group in _of_type(template, "AWS::Logs::LogGroup").items():
        assert flatten(log_group["Properties"]["KmsKeyId"]) == flatten(key_arn), name
    for name, function in _of_type(template, "AWS::Lambda::Function").items():
        assert flatten(function["Properties"]["KmsKeyArn"]) == flatten(key_arn), name
    for name, queue in _of_type(template, "AWS::SQS::Queue").items():
        assert queue["Properties"]["KmsMasterKeyId"] == key_arn, name
    for name, topic in _of_type(template, "AWS::SNS::Topic").items():
        assert flatten(topic["Properties"]["KmsMasterKeyId"]) == flatten(key_arn), name
    [table] = _of_type(template, "AWS::DynamoDB::Table").values()
    assert table["Properties"]["SSESpecification"] == {"KMSMasterKeyId": key_arn, "SSEEnabled": True, "SSEType": "KMS"}
    [secret] = _of_type(template, "AWS::SecretsManager::Secret").values()
    assert secret["Properties"]["KmsKeyId"] == key_arn
    encryption = {
        name: bucket["Properties"]["BucketEncryption"]["ServerSideEncryptionConfiguration"][0]
        for name, bucket in _of_type(template, "AWS::S3::Bucket").items()
    }
    [data_bucket] = [rule for name, rule in encryption.items() if name.startswith("StorageBucket")]
    assert data_bucket == {
        "BucketKeyEnabled": True,
        "ServerSideEncryptionByDefault": {"KMSMasterKeyID": key_arn, "SSEAlgorithm": "aws:kms"},
    }
    # CloudWatch Logs may use it for this stack's log groups and the endpoint's own (the GPU stack creates it) only.
    [logs_statement] = [s for s in key["Properties"]["KeyPolicy"]["Statement"] if s.get("Sid") == "AllowCloudWatchLogsForThisStacksLogGroups"]
    assert [flatten(arn) for arn in logs_statement["Condition"]["ArnLike"]["kms:EncryptionContext:aws:logs:arn"]] == [
        "arn:<AWS::Partition>:logs:<AWS::Region>:<AWS::AccountId>:log-group:ocr-platform-dev-*",
        "arn:<AWS::Partition>:logs:<AWS::Region>:<AWS::AccountId>:log-group:/aws/sagemaker/Endpoints/ocr-dev-paddleocr-vl",
    ]


def test_functions_that_call_only_aws_run_in_the_isolated_subnets(key_and_vpc: tuple[dict[str, Any], dict[str, Any]]) -> None:
    template, _ = key_and_vpc
    subnets = _of_type(template, "AWS::EC2::Subnet")
    assert len(subnets) == 2 and not any(s["Properties"]["MapPublicIpOnLaunch"] for s in subnets.values())
    assert _of_type(template, "AWS::EC2::InternetGateway") == {} and _of_type(template, "AWS::EC2::NatGateway") == {}
    for name, function in _of_type(template, "AWS::Lambda::Function").items():
        config = function["Properties"].get("VpcConfig")
        if name.startswith(OUTSIDE_THE_VPC):
            assert config is None, name
            assert "CKV_AWS_117" in json.dumps(function["Metadata"][CHECKOV_METADATA_KEY]), name
        else:
            assert config is not None and sorted(flatten(s).strip("<>") for s in config["SubnetIds"]) == sorted(subnets), name
    endpoints = _of_type(template, "AWS::EC2::VPCEndpoint").values()
    gateways = sorted(flatten(e["Properties"]["ServiceName"]) for e in endpoints if e["Properties"].get("VpcEndpointType") == "Gateway")
    assert gateways == ["com.amazonaws.<AWS::Region>.dynamodb", "com.amazonaws.<AWS::Region>.s3"]
    interfaces = [e for e in endpoints if e["Properties"].get("VpcEndpointType") == "Interface"]
    backends = frozenset(model.backend for model in MODEL_TABLE.values())
    assert len(interfaces) == len(interface_endpoint_services(backends)) == 6
    assert all(e["Properties"]["PrivateDnsEnabled"] for e in interfaces)
    assert len(_of_type(template, "AWS::EC2::FlowLog")) == 1


# ----- the helper ------------------------------------------------------------------------------


def test_skip_checkov_writes_the_form_checkov_reads_and_wants_a_reason() -> None:
    stack = Stack(App(), "Skips")
    bucket = s3.Bucket(stack, "Bucket")
    reason = "A reason a reviewer can check: what answers the finding instead, and which setting would change it."
    skip_checkov(bucket, "CKV_AWS_18", reason)
    skip_checkov(bucket, "CKV_AWS_21", reason)
    cfn = bucket.node.default_child
    assert isinstance(cfn, s3.CfnBucket)
    assert stack.resolve(cfn.get_metadata(CHECKOV_METADATA_KEY)) == {
        "skip": [{"id": "CKV_AWS_18", "comment": reason}, {"id": "CKV_AWS_21", "comment": reason}]
    }
    with pytest.raises(ValueError, match="already answers"):
        skip_checkov(bucket, "CKV_AWS_18", reason)
    with pytest.raises(ValueError, match="specific reason"):
        skip_checkov(bucket, "CKV_AWS_19", "not needed")
    with pytest.raises(ValueError, match="not a checkov"):
        skip_checkov(bucket, "AwsSolutions-S1", reason)
