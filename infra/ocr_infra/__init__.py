"""ocr_infra: the AWS CDK (v2) infrastructure of the OCR platform.

- ``config.PlatformConfig``: every setting, with defaults and validation, overridable from the context.
- ``stack.OcrPlatformStack``: one stage of the platform, composed from the constructs in ``storage``,
  ``messaging``, ``handlers``, ``cpu_backend`` and ``gpu_backend``.
- ``app_builder.build_app``: the app ``infra/app.py`` synthesizes, with cdk-nag AwsSolutions applied.
"""

from ocr_infra.config import PlatformConfig

__all__ = ["PlatformConfig"]
