"""Stack outputs, cdk-nag AwsSolutions (zero unacknowledged findings) and cfn-lint."""

from __future__ import annotations

import json

from aws_cdk import App, Stack
from aws_cdk import aws_iam as iam
from aws_cdk.assertions import Template
from cfnlint.api import ManualArgs, lint_file

from ocr_infra.nag import apply_nag_checks
from ocr_platform.cli import client
from tests.infra.conftest import Synthesis

#: CDK's Lambda construct always adds DependsOn on the function's role (so its policy exists before the
#: function runs) next to the GetAtt on the role's ARN; cfn-lint's W3005 flags that as redundant.
CFN_LINT_IGNORED = ["W3005"]


def test_client_outputs(template: Template, synthesis: Synthesis) -> None:
    stack = synthesis.stack
    outputs = synthesis.template_json["Outputs"]
    assert outputs["BucketName"]["Value"] == {"Ref": synthesis.logical_id(stack.documents.bucket)}
    assert outputs["QueueUrl"]["Value"] == {"Ref": synthesis.logical_id(stack.queue.queue)}
    assert outputs["TableName"]["Value"] == {"Ref": synthesis.logical_id(stack.jobs.table)}
    assert outputs["EndpointName"]["Value"] == "ocr-dev-paddleocr-vl"
    assert outputs["DlqUrl"]["Value"] == {"Ref": synthesis.logical_id(stack.queue.dead_letter_queue)}
    assert outputs["Models"]["Value"] == "pp-ocrv5,pp-ocrv6,pp-structurev3,paddleocr-vl"
    assert stack.stack_name == "ocr-platform-dev"


def test_outputs_match_what_the_client_reads(synthesis: Synthesis) -> None:
    assert set(client.OUTPUT_KEYS.values()) <= set(synthesis.template_json["Outputs"])


def test_cdk_nag_aws_solutions_has_no_unacknowledged_findings(synthesis: Synthesis) -> None:
    findings = [
        f"{v.severity} {v.rule_name}: {[r.construct_path for r in v.violating_resources]}"
        for v in synthesis.nag_report.violations
    ]
    assert findings == []
    assert synthesis.nag_report.success
    # The same checks ran inside app.synth() as a validation plugin and passed.
    assert synthesis.synth_error is None, str(synthesis.synth_error)
    report = json.loads((synthesis.outdir / "validation-report.json").read_text())
    # Only the GPU stack's warning that PaddlePaddle's GPU wheel has no recorded sha256 yet (test_sagemaker), if any.
    assert [plugin for plugin in report["pluginReports"] if not (
        plugin["pluginName"] == "Construct Annotations"
        and all(v["severity"] == "warning" and "No sha256 recorded for" in json.dumps(v) for v in plugin["violations"])
    )] == []


def test_cdk_nag_would_catch_an_unacknowledged_wildcard() -> None:
    """The pack really checks IAM wildcards (a probe app, not the platform: findings are per finding id)."""
    app = App()
    stack = Stack(app, "Probe")
    role = iam.Role(stack, "Role", assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"))
    role.add_to_policy(iam.PolicyStatement(actions=["s3:GetObject"], resources=["arn:aws:s3:::b/*"]))
    pack = apply_nag_checks(app)
    rules = {v.rule_name for v in pack.validate_scope(app).violations}
    assert "AwsSolutions-IAM5[Resource::arn:aws:s3:::b/*]" in rules


def test_cfn_lint_finds_no_errors_or_warnings(synthesis: Synthesis) -> None:
    for stack in synthesis.platform.stacks:
        matches = lint_file(synthesis.outdir / stack.template_file, config=ManualArgs(ignore_checks=CFN_LINT_IGNORED))
        assert [str(match) for match in matches] == [], stack.template_file
