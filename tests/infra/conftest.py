"""Synthesize the CDK app once per test session and share the result.

The app comes from the same ``build_app`` that ``infra/app.py`` runs, cdk-nag included: the core stack and the GPU
stack (fixtures ``gpu_template``, ``gpu_resources``); ``template`` and ``resources`` hold both stacks' resources. Synthesis costs
about 0.6 GB and several seconds, so every infra test reads this one synthesis. cdk-nag findings make
``app.synth()`` raise; the templates are written before that, so the other tests still run and the
cdk-nag test reports the findings.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")

from aws_cdk import PolicyValidationPluginReport, Stack  # noqa: E402
from aws_cdk.assertions import Template  # noqa: E402
from constructs import IConstruct  # noqa: E402

from ocr_infra.app_builder import PlatformApp, build_app  # noqa: E402
from ocr_infra.gpu_backend import GpuBackend  # noqa: E402
from ocr_infra.gpu_stack import OcrGpuStack  # noqa: E402
from ocr_infra.stack import OcrPlatformStack  # noqa: E402


@dataclass(frozen=True)
class Synthesis:
    """The one synthesis of the session."""

    platform: PlatformApp
    outdir: Path
    nag_report: PolicyValidationPluginReport
    synth_error: Exception | None
    templates: dict[str, dict[str, Any]]

    @property
    def stack(self) -> OcrPlatformStack:
        """The core stack."""
        return self.platform.stack

    @property
    def gpu_stack(self) -> OcrGpuStack:
        """The GPU stack (the default config deploys paddleocr-vl)."""
        assert self.platform.gpu_stack is not None, "the default models include paddleocr-vl"
        return self.platform.gpu_stack

    @property
    def gpu(self) -> GpuBackend:
        return self.gpu_stack.gpu

    @property
    def template_json(self) -> dict[str, Any]:
        """The core stack's template."""
        return self.templates[self.stack.artifact_id]

    @property
    def gpu_template_json(self) -> dict[str, Any]:
        return self.templates[self.gpu_stack.artifact_id]

    def template_of(self, construct: IConstruct) -> dict[str, Any]:
        """The template of the stack ``construct`` is in."""
        return self.templates[Stack.of(construct).artifact_id]

    def logical_id(self, construct: IConstruct) -> str:
        """Logical ID of ``construct`` (an L2 construct: its default child) in the synthesized template."""
        cfn = construct.node.default_child or construct
        stack = Stack.of(construct)
        return stack.resolve(stack.get_logical_id(cfn))

    def resource(self, construct: IConstruct) -> dict[str, Any]:
        return self.template_of(construct)["Resources"][self.logical_id(construct)]


@pytest.fixture(scope="session")
def synthesis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Synthesis]:
    outdir = tmp_path_factory.mktemp("cdk.out")
    with pytest.MonkeyPatch.context() as patch:
        # Environment-agnostic stacks, whatever the developer's shell says.
        patch.delenv("CDK_DEFAULT_ACCOUNT", raising=False)
        patch.delenv("CDK_DEFAULT_REGION", raising=False)
        platform = build_app(outdir=str(outdir))
    assert platform.nag is not None, "build_app must register cdk-nag"
    report = platform.nag.validate_scope(platform.app)
    synth_error: Exception | None = None
    try:
        platform.app.synth()
    except Exception as err:  # cdk-nag (or CDK's own validation) failed the synth; templates exist.
        synth_error = err
    templates = {
        stack.artifact_id: json.loads((outdir / stack.template_file).read_text(encoding="utf-8"))
        for stack in platform.stacks
    }
    yield Synthesis(platform, outdir, report, synth_error, templates)


def stage_resources(synthesis: Synthesis) -> dict[str, dict[str, Any]]:
    """Every resource of the stage, both stacks (their logical IDs are distinct): the view of tests about all
    functions, roles, alarms or topics; a reference from the GPU stack into the core is ``Fn::GetStackOutput`` there."""
    core, gpu = synthesis.template_json["Resources"], synthesis.gpu_template_json["Resources"]
    assert not set(core) & set(gpu), "a logical ID in both stacks"
    return {**core, **gpu}


@pytest.fixture(scope="session")
def template(synthesis: Synthesis) -> Template:
    return Template.from_json({**synthesis.template_json, "Resources": stage_resources(synthesis)})


@pytest.fixture(scope="session")
def resources(synthesis: Synthesis) -> dict[str, dict[str, Any]]:
    return stage_resources(synthesis)


@pytest.fixture(scope="session")
def gpu_template(synthesis: Synthesis) -> Template:
    return Template.from_json(synthesis.gpu_template_json)


@pytest.fixture(scope="session")
def gpu_resources(synthesis: Synthesis) -> dict[str, dict[str, Any]]:
    return synthesis.gpu_template_json["Resources"]
