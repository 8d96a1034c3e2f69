"""The GPU stack: the PaddleOCR-VL endpoint, its scaling and scale-in, deployed after the core stack.

Why a stack of its own: a GPU endpoint is the one resource of a stage whose creation can fail for reasons outside
the template (no GPU quota in the account, an image that does not start on the host). In one stack with
everything else, such a failure rolls back the queues, functions, API and console too. Here it rolls back only
this stack; the core deploys first, serves the CPU routes on an account with no GPU quota at all, and keeps
serving them while this stack is fixed and deployed again.

The dependency runs one way, GPU on core: this stack reads the core's bucket, table, topics and parked-events
queue (CloudFormation exports), while the core refers to the endpoint and its alarms only by names fixed in
advance (``gpu_props.GpuResourceNames``), never by a reference into this stack.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from aws_cdk import Annotations, Fn, Stack
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from ocr_infra.config import CORE_STACK_ID, PlatformConfig
from ocr_infra.gpu_backend import GpuBackend, GpuBackendProps
from ocr_infra.image_build import PADDLE_GPU_WHEEL_HASHES, unrecorded_paddle_gpu_wheel
from ocr_infra.platform_function import lambdas_code
from ocr_infra.stack import OUTPUT_BUCKET_NAME, OcrPlatformStack, tag_stage


class OcrGpuStack(Stack):
    """PaddleOCR-VL on a SageMaker async endpoint that scales to zero, for the stage of ``core``.

    Args:
        config: the platform settings; the stack name defaults to ``config.gpu_stack_name``.
        core: the stage's core stack, which this one depends on.
        **kwargs: passed to ``Stack`` (``env``, ``stack_name``, ...).
    """

    def __init__(self, scope: Construct, construct_id: str, *, config: PlatformConfig, core: OcrPlatformStack, **kwargs: Any) -> None:
        kwargs.setdefault("stack_name", config.gpu_stack_name)
        kwargs.setdefault(
            "description",
            f"Serverless OCR platform ({config.stage}), GPU route: PaddleOCR-VL on a scale-to-zero SageMaker async endpoint.",
        )
        super().__init__(scope, construct_id, **kwargs)
        cfg = config
        tag_stage(self, cfg.stage)
        self.add_stack_dependency(core, "the endpoint reads and writes the core's bucket and notifies its topics")

        # What the scale-in function shares with the core's functions, with this stack's own zip asset (an asset
        # belongs to one stack), the bucket read from the core's BucketName output (the key-prefix grants on it then
        # read the same here as in the template, where cdk-nag checks their acknowledgements) and the core's
        # parked-events queue imported: the core admits this stack's subscription and rule to it by name.
        parked = core.parked_events.queue
        common = replace(
            core.common,
            code=lambdas_code(),
            bucket=s3.Bucket.from_bucket_name(self, "Documents", Fn.get_stack_output(core.stack_name, OUTPUT_BUCKET_NAME)),
            parked_events=sqs.Queue.from_queue_attributes(
                self,
                "ParkedEvents",
                queue_arn=parked.queue_arn,
                queue_url=parked.queue_url,
                key_arn=parked.encryption_master_key.key_arn if parked.encryption_master_key else None,
            ),
        )
        self.gpu = GpuBackend(
            self,
            "GpuBackend",
            GpuBackendProps(
                endpoint_name=cfg.endpoint_name,
                common=common,
                status_index_arn=core.jobs.status_index_arn,
                topics=core.topics,
                instance_type=cfg.instance_type,
                variant_name=cfg.variant_name,
                max_instance_count=cfg.max_instance_count,
                max_concurrent_invocations_per_instance=cfg.max_concurrent_invocations_per_instance,
                idle_minutes=cfg.idle_minutes,
                idle_backlog_threshold=cfg.idle_backlog_threshold,
                inflight_window_seconds=cfg.inflight_window_seconds,
                ami_version=cfg.endpoint_ami_version,
                image_cuda=cfg.endpoint_image_cuda,
                startup_timeout_seconds=cfg.endpoint_startup_timeout_seconds,
                base_image=cfg.endpoint_base_image,
                bake_models=cfg.endpoint_bake_models,
                vl_backend=cfg.endpoint_vl_backend,
                vl_version=cfg.endpoint_vl_version,
                engine_fallback=cfg.engine_fallback,
                scale_in_memory_mb=cfg.scale_in_memory_mb,
                scale_in_timeout_seconds=cfg.scale_in_timeout_seconds,
                pages_per_chunk=cfg.gpu_pages_per_chunk,
                max_pages=cfg.max_pages,
            ),
        )
        # A fresh checkout has no sha256 recorded for PaddlePaddle's GPU wheel, and the image build stops there; `cdk
        # deploy --all` builds every image before it deploys any stack, so the core would not deploy either. The CLI
        # prints this warning before it builds anything (and `cdk deploy --all --strict` refuses on it). An error
        # would fail every synth, the core's own deploy included.
        if (entry := unrecorded_paddle_gpu_wheel(cfg.endpoint_image_cuda)) is not None:
            Annotations.of(self).add_warning_v2(
                "ocr:paddle-gpu-wheel-unrecorded",
                f"No sha256 recorded for {entry} in {PADDLE_GPU_WHEEL_HASHES}, so the endpoint image cannot build: run "
                f"scripts/record-paddle-gpu-wheel.sh and commit the file, or deploy the core stack alone (npx cdk deploy {CORE_STACK_ID}).",
            )
