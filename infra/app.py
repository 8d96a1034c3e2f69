#!/usr/bin/env python3
"""CDK entry point (``cdk.json``: ``"app": ".venv/bin/python infra/app.py"``).

Builds the OCR platform stack from ``PlatformConfig`` (overridable with ``-c ocr:<field>=<value>``),
applies cdk-nag's AwsSolutions checks and synthesizes. Synth needs neither AWS credentials nor Docker.
"""

from ocr_infra.app_builder import build_app

if __name__ == "__main__":
    build_app().app.synth()
