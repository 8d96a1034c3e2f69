#!/usr/bin/env python3
"""Bake PaddleX models into an image at build time (the Dockerfiles' ``BAKE_MODELS`` build argument).

Usage: ``python bake-models.py NAME [NAME ...]`` (names may also be comma-separated), with
``OCR_MODEL_DIR`` set. Each model is fetched with PaddleX's own downloader and copied to
``$OCR_MODEL_DIR/<name>``, the first place ``ocr_platform.engines.model_cache.ModelCache`` looks, so a cold start
neither downloads it from a model hub nor from the bucket's ``models/`` cache. No names: nothing to do.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path


def main(args: list[str]) -> int:
    names = [name for arg in args for name in arg.replace(",", " ").split()]
    target = Path(os.environ["OCR_MODEL_DIR"])
    target.mkdir(parents=True, exist_ok=True)
    if not names:
        return 0
    # PaddleX's model manager downloads a named official model and returns its local directory.
    from paddlex.inference.utils.official_models import official_models

    for name in names:
        source = Path(official_models[name])
        shutil.copytree(source, target / name, dirs_exist_ok=True)
        print(f"baked {name} into {target / name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
