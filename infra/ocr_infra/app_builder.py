"""Builds the CDK app: the one function ``infra/app.py`` and the tests share."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from aws_cdk import App, Environment, Stack
from cdk_nag import AwsSolutionsChecks

from ocr_infra.config import CORE_STACK_ID, PlatformConfig
from ocr_infra.gpu_stack import OcrGpuStack
from ocr_infra.nag import apply_nag_checks
from ocr_infra.paths import CDK_JSON, check_layout
from ocr_infra.stack import OcrPlatformStack


@dataclass(frozen=True)
class PlatformApp:
    """The app, its stacks and the cdk-nag pack registered on it.

    Attributes:
        stack: the core stack (storage, queues, functions, the CPU route, API, console).
        gpu_stack: the GPU route's stack, depending on the core; ``None`` when no model routes to SageMaker.
    """

    app: App
    stack: OcrPlatformStack
    gpu_stack: OcrGpuStack | None
    nag: AwsSolutionsChecks | None

    @property
    def stacks(self) -> list[Stack]:
        """Every stack, in deployment order."""
        return [self.stack, *([self.gpu_stack] if self.gpu_stack else [])]


def cdk_json_context() -> dict[str, Any]:
    """The ``context`` of ``cdk.json`` (feature flags and defaults), for runs without the CDK CLI."""
    if not CDK_JSON.exists():
        return {}
    return dict(json.loads(CDK_JSON.read_text(encoding="utf-8")).get("context", {}))


def add_stage(
    app: App, config: PlatformConfig, env: Environment | None = None, *, prefix: str = CORE_STACK_ID
) -> tuple[OcrPlatformStack, OcrGpuStack | None]:
    """The stacks of one stage on ``app``: the core (construct id ``prefix``), then the GPU stack (``prefix`` + ``Gpu``)
    where a model routes to SageMaker."""
    stack = OcrPlatformStack(app, prefix, config=config, env=env)
    gpu_stack = OcrGpuStack(app, f"{prefix}Gpu", config=config, core=stack, env=env) if "sagemaker" in config.backends else None
    return stack, gpu_stack


def build_app(
    context: Mapping[str, Any] | None = None,
    *,
    outdir: str | None = None,
    nag: bool = True,
) -> PlatformApp:
    """Create the app with the stacks of the configured stage (the core, then the GPU stack where a model routes
    to SageMaker), cdk-nag AwsSolutions applied.

    ``cdk.json``'s context is always loaded as the base, so ``python infra/app.py``, the tests and
    ``npx cdk synth`` synthesize with the same feature flags; context given by the CLI (``-c``) takes
    precedence over both, ``context`` over ``cdk.json``.
    """
    check_layout()
    # analytics_reporting=False: no AWS::CDK::Metadata resource (cdk.json's versionReporting for the CLI).
    app = App(context={**cdk_json_context(), **dict(context or {})}, outdir=outdir, analytics_reporting=False)
    config = PlatformConfig.from_context(app)
    account, region = os.environ.get("CDK_DEFAULT_ACCOUNT"), os.environ.get("CDK_DEFAULT_REGION")
    env = Environment(account=account, region=region) if account and region else None
    stack, gpu_stack = add_stage(app, config, env)
    pack = apply_nag_checks(app) if nag else None
    return PlatformApp(app=app, stack=stack, gpu_stack=gpu_stack, nag=pack)
