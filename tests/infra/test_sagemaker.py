"""The PaddleOCR-VL async endpoint: model, endpoint config, endpoint, 0..1 scaling and its alarms."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from aws_cdk.assertions import Template

from ocr_infra.paths import VL_ENDPOINT_DOCKERFILE
from ocr_platform.engines import _LAZY_FACTORIES as ENGINE_FACTORIES
from tests.infra.conftest import Synthesis
from tests.infra.template_helpers import flatten


@pytest.fixture(scope="module")
def gpu(synthesis: Synthesis):
    assert synthesis.gpu is not None, "the default models include paddleocr-vl"
    return synthesis.gpu


def test_one_model_from_the_vl_endpoint_image(template: Template, synthesis: Synthesis, gpu) -> None:
    template.resource_count_is("AWS::SageMaker::Model", 1)
    model = synthesis.resource(gpu.model)
    props = model["Properties"]
    assert props["ExecutionRoleArn"] == {"Fn::GetAtt": [synthesis.logical_id(gpu.execution_role), "Arn"]}
    container = props["PrimaryContainer"]
    assert container["Mode"] == "SingleModel"
    assert "container-assets" in flatten(container["Image"])
    # The network-isolated container reaches nothing: SageMaker reads the request and writes the answer.
    assert props["EnableNetworkIsolation"] is True
    assert container["Environment"] == {
        "OCR_MODEL_HUB": "off",  # no bucket, no hub: the models are baked into the image
        "OCR_MAX_CONCURRENT_INVOCATIONS": "1",
        "OCR_VL_BACKEND": "native",
        "OCR_VL_VERSION": "v1.6",  # PlatformConfig.endpoint_vl_version: the newest PaddleOCR-VL PaddleOCR ships
        "OCR_ENGINE_FALLBACK": "none",  # the stack's value, over the image's: fail closed by default
        "OCR_MAX_PAGES": "2000",
        "OCR_GPU_PAGES_PER_CHUNK": "10",  # a longer job is answered with a split plan, one request per chunk
    }
    # SageMaker validates the role when it creates the model: its policy must exist first.
    policy_id = synthesis.logical_id(gpu.execution_role.node.find_child("DefaultPolicy"))
    assert policy_id in model["DependsOn"]


def test_the_image_is_built_for_the_configured_vl_version_with_its_weights_baked(synthesis: Synthesis) -> None:
    manifest = json.loads((synthesis.outdir / f"{synthesis.gpu_stack.artifact_id}.assets.json").read_text())
    [image] = [a["source"] for a in manifest["dockerImages"].values() if a["source"]["dockerFile"] == VL_ENDPOINT_DOCKERFILE]
    # The layout model and VLM of v1.6 (defaults.VL_VERSION_MODELS) are baked; endpoint_bake_models adds none; the
    # image is built for the CUDA the stage's host runs (PlatformConfig.endpoint_image_cuda).
    assert image["dockerBuildArgs"] == {
        "CUDA_VERSION": "12.9", "VL_VERSION": "v1.6", "BAKE_MODELS": "PP-DocLayoutV3 PaddleOCR-VL-1.6-0.9B"
    }


def _endpoint_context(synthesis: Synthesis) -> Path:
    manifest = json.loads((synthesis.outdir / f"{synthesis.gpu_stack.artifact_id}.assets.json").read_text())
    [source] = [a["source"] for a in manifest["dockerImages"].values() if a["source"]["dockerFile"] == VL_ENDPOINT_DOCKERFILE]
    return synthesis.outdir / source["directory"]


def test_the_endpoint_image_is_built_from_what_it_uses_only(synthesis: Synthesis) -> None:
    """A change to the README, the handlers, the CLI, the local stack or the CPU image leaves the endpoint image, and
    so the SageMaker model, its endpoint config and the endpoint, as they are: no blue/green update on redeploy."""
    staged = _endpoint_context(synthesis)
    files = {str(p.relative_to(staged)) for p in staged.rglob("*") if p.is_file()}
    assert {"containers/vl-endpoint/Dockerfile", "containers/vl-endpoint/serve", "containers/vl-endpoint/requirements.lock",
            "containers/bake-models.py", "lambdas/ocr_platform/gpu/model_server.py", "lambdas/ocr_platform/engines/paddleocr_vl.py"} <= files
    for unused in ("README.md", "pyproject.toml", "containers/cpu-ocr/Dockerfile", "requirements/models.txt",
                   "lambdas/ocr_platform/cli/commands.py", "lambdas/ocr_platform/handlers/invoker.py", "lambdas/ocr_platform/local/stack.py",
                   "lambdas/ocr_platform/gpu/completion.py", "lambdas/ocr_platform/cli/doctor.py"):
        assert unused not in files, unused


def test_the_endpoint_server_and_its_engines_import_from_the_context_alone(synthesis: Synthesis) -> None:
    """What the image copies (its context's ocr_platform) is enough for the server and every engine it may build."""
    staged = _endpoint_context(synthesis) / "lambdas"
    modules = ["ocr_platform.gpu.model_server", *(target.partition(":")[0] for target in ENGINE_FACTORIES.values())]
    code = "import importlib, sys; [importlib.import_module(m) for m in sys.argv[1:]]; import ocr_platform; print(ocr_platform.__file__)"
    run = subprocess.run([sys.executable, "-c", code, *modules], env={**os.environ, "PYTHONPATH": str(staged)},
                         cwd=staged, capture_output=True, text=True, timeout=300, check=False)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.strip().startswith(str(staged)), run.stdout


def test_endpoint_config_is_async_on_g5_xlarge(synthesis: Synthesis, gpu) -> None:
    props = synthesis.resource(gpu.endpoint_config)["Properties"]
    assert props["ProductionVariants"] == [
        {
            "VariantName": "AllTraffic",
            "ModelName": {"Fn::GetAtt": [synthesis.logical_id(gpu.model), "ModelName"]},
            "InstanceType": "ml.g5.xlarge",
            "InitialInstanceCount": 1,
            "InitialVariantWeight": 1,
            # Driver 580 / CUDA 13.0 (ocr_infra.gpu_host): without it a g5 host runs driver 470 / CUDA 11.4.
            "InferenceAmiVersion": "al2023-ami-sagemaker-inference-gpu-4-1",
            # A cold load of the baked models, with room: SageMaker's /ping deadline for a new instance.
            "ContainerStartupHealthCheckTimeoutInSeconds": 1200,
        }
    ]
    assert "KmsKeyId" not in props, "g5 instances have local NVMe storage: SageMaker rejects a KmsKeyId"


def test_async_config_paths_topics_and_concurrency(synthesis: Synthesis, gpu) -> None:
    config = synthesis.resource(gpu.endpoint_config)["Properties"]["AsyncInferenceConfig"]
    topics = synthesis.stack.topics
    output = config["OutputConfig"]
    assert flatten(output["S3OutputPath"]) == "s3://<output:BucketName>/async/outputs"
    assert flatten(output["S3FailurePath"]) == "s3://<output:BucketName>/async/failures"
    assert {name: flatten(topic) for name, topic in output["NotificationConfig"].items()} == {
        "SuccessTopic": f"<{synthesis.logical_id(topics.success_topic)}>",
        "ErrorTopic": f"<{synthesis.logical_id(topics.error_topic)}>",
    }
    assert config["ClientConfig"] == {"MaxConcurrentInvocationsPerInstance": 1}


def test_endpoint_is_named_and_keeps_its_instance_count_on_redeploy(synthesis: Synthesis, gpu) -> None:
    props = synthesis.resource(gpu.endpoint)["Properties"]
    assert props["EndpointName"] == "ocr-dev-paddleocr-vl"
    assert props["EndpointConfigName"] == {
        "Fn::GetAtt": [synthesis.logical_id(gpu.endpoint_config), "EndpointConfigName"]
    }
    assert props["RetainAllVariantProperties"] is True


def test_the_endpoints_log_group_is_the_gpu_stacks_own_and_exists_before_the_endpoint(synthesis: Synthesis, gpu) -> None:
    """SageMaker writes the container's output to /aws/sagemaker/Endpoints/<endpoint> from its first start; the GPU
    stack creates that group (with the stage's retention) before the endpoint, so a container that fails at start-up
    leaves its reason there."""
    resources = synthesis.gpu_template_json["Resources"]
    [(logical_id, group)] = [(k, r) for k, r in resources.items() if r["Type"] == "AWS::Logs::LogGroup"
                             and r["Properties"].get("LogGroupName") == "/aws/sagemaker/Endpoints/ocr-dev-paddleocr-vl"]
    assert group["Properties"]["RetentionInDays"] == 30 and group["DeletionPolicy"] == "Delete"
    assert logical_id in synthesis.resource(gpu.endpoint)["DependsOn"]


def test_both_images_are_built_with_docker_media_types(synthesis: Synthesis) -> None:
    """SageMaker and Lambda refuse OCI manifests: each image asset asks docker build for Docker media types
    (ocr_infra.image_build), whatever the builder's image store."""
    sources = []
    for stack in (synthesis.stack, synthesis.gpu_stack):
        manifest = json.loads((synthesis.outdir / f"{stack.artifact_id}.assets.json").read_text())
        sources += [image["source"] for image in manifest["dockerImages"].values()]
    assert len(sources) == 2
    assert all(source["dockerOutputs"] == ["type=image,oci-mediatypes=false"] for source in sources), sources


def test_scalable_target_between_zero_and_one_instance(template: Template, synthesis: Synthesis, gpu) -> None:
    template.resource_count_is("AWS::ApplicationAutoScaling::ScalableTarget", 1)
    props = synthesis.resource(gpu.scalable_target)["Properties"]
    assert props["ServiceNamespace"] == "sagemaker"
    assert props["ScalableDimension"] == "sagemaker:variant:DesiredInstanceCount"
    assert props["MinCapacity"] == 0
    assert props["MaxCapacity"] == 1
    endpoint = synthesis.logical_id(gpu.endpoint)
    assert flatten(props["ResourceId"]) == f"endpoint/<{endpoint}.EndpointName>/variant/AllTraffic"
    # The service-linked role, which Application Auto Scaling creates if the account lacks it.
    assert flatten(props["RoleARN"]).endswith(
        ":role/aws-service-role/sagemaker.application-autoscaling.amazonaws.com/"
        "AWSServiceRoleForApplicationAutoScaling_SageMakerEndpoint"
    )


def _alarm(template: Template, metric: str) -> dict[str, Any]:
    [alarm] = [
        a["Properties"]
        for a in template.find_resources("AWS::CloudWatch::Alarm").values()
        if a["Properties"].get("MetricName") == metric
    ]
    return alarm


def test_idle_alarm_scales_in_through_the_scale_in_topic(template: Template, synthesis: Synthesis) -> None:
    alarm = _alarm(template, "ApproximateBacklogSizePerInstance")
    assert alarm["Namespace"] == "AWS/SageMaker"
    assert alarm["Dimensions"] == [{"Name": "EndpointName", "Value": "ocr-dev-paddleocr-vl"}]
    assert alarm["Statistic"] == "Average"
    assert alarm["Period"] == 60
    assert alarm["ComparisonOperator"] == "LessThanThreshold"
    assert alarm["Threshold"] == 0.1
    assert alarm["EvaluationPeriods"] == 10
    assert alarm["DatapointsToAlarm"] == 10
    assert alarm["TreatMissingData"] == "breaching"
    assert alarm["AlarmActions"] == [{"Ref": synthesis.logical_id(synthesis.gpu.scale_in_topic)}]


def test_backlog_without_capacity_scales_out_from_zero(template: Template, synthesis: Synthesis, gpu) -> None:
    alarm = _alarm(template, "HasBacklogWithoutCapacity")
    assert alarm["Namespace"] == "AWS/SageMaker"
    assert alarm["Dimensions"] == [{"Name": "EndpointName", "Value": "ocr-dev-paddleocr-vl"}]
    assert alarm["Period"] == 60
    assert alarm["ComparisonOperator"] == "GreaterThanOrEqualToThreshold"
    assert alarm["Threshold"] == 1
    assert alarm["EvaluationPeriods"] == 1
    assert alarm["TreatMissingData"] == "notBreaching"
    [policy_id] = [k for k, v in template.find_resources("AWS::ApplicationAutoScaling::ScalingPolicy").items()]
    assert alarm["AlarmActions"] == [{"Ref": policy_id}]
    policy = template.find_resources("AWS::ApplicationAutoScaling::ScalingPolicy")[policy_id]["Properties"]
    assert policy["PolicyType"] == "StepScaling"
    assert policy["ScalingTargetId"] == {"Ref": synthesis.logical_id(gpu.scalable_target)}
    step = policy["StepScalingPolicyConfiguration"]
    assert step["AdjustmentType"] == "ChangeInCapacity"
    assert step["StepAdjustments"] == [{"MetricIntervalLowerBound": 0, "ScalingAdjustment": 1}]


def test_exactly_six_alarms(template: Template) -> None:
    metrics = sorted(a["Properties"].get("MetricName", "<metric math>") for a in template.find_resources("AWS::CloudWatch::Alarm").values())
    assert metrics == [
        "<metric math>",  # the failed-job rate
        "ApproximateBacklogSizePerInstance",
        "ApproximateNumberOfMessagesVisible",  # the job DLQ
        "ApproximateNumberOfMessagesVisible",  # the parked events
        "ApproximateNumberOfMessagesVisible",  # the webhook DLQ
        "HasBacklogWithoutCapacity",
    ]


def test_without_a_recorded_paddle_wheel_hash_the_gpu_stack_alone_warns(synthesis: Synthesis) -> None:
    """`cdk deploy --all` builds every image before it deploys a stack, and the endpoint image stops at the Paddle GPU
    wheel whose sha256 is not recorded: the GPU stack carries a warning the CLI prints before building anything (and
    `--strict` refuses on), one line that says what to do; the core stack, deployed alone, has none."""
    from ocr_infra.image_build import unrecorded_paddle_gpu_wheel

    def errors(stack: Any) -> list[str]:
        metadata = json.loads((synthesis.outdir / f"{stack.artifact_id}.metadata.json").read_text())
        return [entry["data"] for entries in metadata.values() for entry in entries
                if entry["type"] == "aws:cdk:warning" and "paddle-gpu-wheel-unrecorded" in entry["data"]]

    entry = unrecorded_paddle_gpu_wheel("12.9")
    assert errors(synthesis.stack) == []
    if entry is None:  # recorded (after scripts/record-paddle-gpu-wheel.sh): nothing to refuse
        assert errors(synthesis.gpu_stack) == []
        return
    assert entry == "cu129/paddlepaddle_gpu-3.2.2-cp312-cp312-linux_x86_64.whl"
    [warning] = errors(synthesis.gpu_stack)
    assert warning.startswith(f"No sha256 recorded for {entry} in containers/vl-endpoint/paddlepaddle-gpu.sha256, so the "
                              "endpoint image cannot build: run scripts/record-paddle-gpu-wheel.sh")
    assert "(npx cdk deploy OcrPlatform). [ack: ocr:paddle-gpu-wheel-unrecorded]" in warning
    assert synthesis.synth_error is None
