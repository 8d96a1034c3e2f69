"""A stage is two stacks: the core, which deploys and serves the CPU routes on any account, and the GPU stack, which
depends on it and never the other way, so a GPU endpoint that cannot start rolls back the GPU stack alone."""

from __future__ import annotations

import json
from typing import Any

from ocr_infra.paths import REPO_ROOT
from tests.infra.conftest import Synthesis


def _references(template: dict[str, Any]) -> set[str]:
    """The stacks a template reads outputs of (``Fn::GetStackOutput``) or imports from (``Fn::ImportValue``)."""
    found: set[str] = set()

    def visit(node: Any) -> None:
        if isinstance(node, dict):
            if "Fn::GetStackOutput" in node:
                found.add(json.dumps(node["Fn::GetStackOutput"]["StackName"]))
            if "Fn::ImportValue" in node:
                found.add(json.dumps(node["Fn::ImportValue"]))
            for value in node.values():
                visit(value)
        elif isinstance(node, list):
            for value in node:
                visit(value)

    visit(template)
    return found


def test_the_core_stack_holds_no_sagemaker_resource_and_reads_nothing_of_the_gpu_stack(synthesis: Synthesis) -> None:
    core = synthesis.template_json
    assert not [r for r in core["Resources"].values() if r["Type"].startswith("AWS::SageMaker::")]
    assert _references(core) == set()
    # It knows the endpoint by the name fixed in advance (the invoker's environment, the EndpointName output).
    assert core["Outputs"]["EndpointName"]["Value"] == "ocr-dev-paddleocr-vl"


def test_the_gpu_stack_depends_on_the_core_and_holds_the_endpoint(synthesis: Synthesis) -> None:
    gpu = synthesis.gpu_template_json
    assert {r["Type"] for r in gpu["Resources"].values()} >= {
        "AWS::SageMaker::Model", "AWS::SageMaker::EndpointConfig", "AWS::SageMaker::Endpoint",
        "AWS::ApplicationAutoScaling::ScalableTarget", "AWS::Lambda::Function", "AWS::SNS::Topic",
    }
    assert _references(gpu) == {'"ocr-platform-dev"'}
    assert synthesis.gpu_stack.dependencies == [synthesis.stack]
    assert synthesis.gpu_stack.stack_name == "ocr-platform-dev-gpu"
    # The cloud assembly deploys the core first (`cdk deploy --all` follows the manifest's dependencies).
    manifest = json.loads((synthesis.outdir / "manifest.json").read_text())
    assert synthesis.stack.artifact_id in manifest["artifacts"][synthesis.gpu_stack.artifact_id]["dependencies"]


def test_the_core_refuses_a_partition_without_the_powertools_layer(synthesis: Synthesis) -> None:
    """The Powertools layer is the aws partition's (commercial regions): a rule stops a deploy elsewhere before it
    creates anything."""
    rules = synthesis.template_json["Rules"]
    [assertion] = rules["PowertoolsLayerPartition"]["Assertions"]
    assert assertion["Assert"] == {"Fn::Equals": [{"Ref": "AWS::Partition"}, "aws"]}
    assert "deploy to a commercial AWS region" in assertion["AssertDescription"]
    assert json.loads((REPO_ROOT / "cdk.json").read_text())["context"]["@aws-cdk/core:target-partitions"] == ["aws"]
