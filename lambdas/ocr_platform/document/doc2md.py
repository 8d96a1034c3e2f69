"""PaddleOCR's Office converter (``paddleocr._doc2md``) loaded without the rest of PaddleOCR.

``from paddleocr import doc2md_convert`` runs ``paddleocr/__init__.py``, which imports PaddleX and its model
registry: 3 to 7 s on this project's 2-core machine (``python -X importtime``) before a DOCX is looked at, where its
conversion takes tens of milliseconds. The converter package imports nothing of PaddleOCR outside itself (it reads
files with python-docx, python-pptx, openpyxl and lxml), so it is loaded on its own from PaddleOCR's installed files,
the same code at the same version. A process that has imported PaddleOCR already (a processor whose OCR engine is
loaded) uses PaddleOCR's own copy.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

#: The name the converter package is loaded under when PaddleOCR itself is not imported.
STANDALONE = "ocr_platform_paddleocr_doc2md"


@functools.cache
def converter() -> Callable[..., Any]:
    """PaddleOCR's ``convert(source)`` (``doc2md_convert``'s body); ``ModuleNotFoundError`` when PaddleOCR is not installed."""
    if "paddleocr" in sys.modules:
        return importlib.import_module("paddleocr._doc2md").convert  # type: ignore[no-any-return, unused-ignore]
    return _standalone().convert  # type: ignore[no-any-return, unused-ignore]


def _standalone() -> ModuleType:
    package = importlib.util.find_spec("paddleocr")  # finds the package without running its __init__
    if package is None or not package.submodule_search_locations:
        raise ModuleNotFoundError("No module named 'paddleocr'", name="paddleocr")
    folder = Path(next(iter(package.submodule_search_locations))) / "_doc2md"
    spec = importlib.util.spec_from_file_location(STANDALONE, folder / "__init__.py", submodule_search_locations=[str(folder)])
    if spec is None or spec.loader is None:
        raise ModuleNotFoundError(f"No PaddleOCR converter in {folder}", name="paddleocr._doc2md")
    module = importlib.util.module_from_spec(spec)
    sys.modules[STANDALONE] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[STANDALONE]
        raise
    return module
