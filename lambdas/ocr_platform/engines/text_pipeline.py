"""PaddleOCR's OCR pipeline as the PP-OCR routes run it: text lines recognised on every core, and a
line that reads badly checked for being upside down.

The pipeline's recogniser is replaced after it is built by a drop-in that takes and returns what the
original does:

- **On every core** (``ParallelRecognizer``). Recognition is 85-95 % of a dense page (335 lines on
  four pages of a real two-column guideline: detection 0.27 s a page, recognition 4.1-4.5 s). ONNX
  Runtime's second intra-op thread gains little and unevenly on the small recognition graph, so the
  lines are split across ``rec_workers`` predictors of one thread each, in threads (ONNX Runtime
  releases the GIL): 2.3-2.4 s a page with two, measured side by side in one process. The pipeline
  hands the crops over sorted by width; taking every n-th crop gives each worker the same mix.
- **Right-to-left lines** (``LogicalOrder``): a recogniser of Arabic script reads a line from the left of its image
  to the right; its text is put in the order it is typed.
- **Upside-down lines** (``TurnedLineCheck``). A line turned by 180 degrees reads as garbage with a
  low score: on 180 real lines every upright one scored at least 0.9 and every turned one below 0.85.
  So only a line scoring below ``TURNED_LINE_SCORE`` is shown to the text-line orientation classifier,
  and where it says 180 degrees the turned crop is read and kept if it scores higher. PaddleOCR's own
  text-line step classifies every line and trusts the classifier alone; the classifier available
  here (``ch_ppocr_mobile_v2.0_cls``) called 30 of 335 upright English lines upside down, 15 of them
  with a score of 1.0, and a wrongly turned line is lost (word F1 0.974 -> 0.923 on one page). Here
  an upright page costs nothing extra. A line turned 90 degrees needs no step of its own: PaddleOCR
  turns a tall crop a quarter turn, which leaves it upright or upside down.

The workers cost no more to load than one recogniser: PaddleX parses a model's ``inference.yml`` for
every predictor it builds, 0.4 s for a recogniser's 18,000-character dictionary in pure-Python YAML,
and ``model_configs_read_once`` makes every parse after the first a copy while an engine loads.

The pipeline's internals are PaddleX 3.7's (``paddleocr`` is pinned in pyproject.toml);
``install_recognizer`` and ``model_configs_read_once`` check they are there and say what to do if an
upgrade moved them, and the OCR tests run the whole pipeline.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

from ocr_platform.engines.word_boxes import turned_columns


class ParallelRecognizer:
    """The pipeline's text recogniser, with the crops of a page split across ``predictors`` in threads.

    Args:
        predictors: PaddleX text recognition predictors, each used by one thread at a time.
        batch_size: lines per inference call of each predictor.
    """

    def __init__(self, predictors: Sequence[Any], *, batch_size: int = 1) -> None:
        if not predictors:
            raise ValueError("ParallelRecognizer needs at least one predictor")
        self.predictors = list(predictors)
        self.batch_size = batch_size
        self._pool = ThreadPoolExecutor(len(self.predictors), thread_name_prefix="rec") if len(self.predictors) > 1 else None

    def __call__(self, crops: Sequence[Any], **kwargs: Any) -> list[Any]:
        """One recognition result per crop, in the order given (``kwargs`` go to every predictor)."""
        crops = list(crops)
        workers = len(self.predictors)
        if self._pool is None or len(crops) < 2:
            return self._read(self.predictors[0], crops, kwargs)
        shares = [crops[k::workers] for k in range(workers)]
        futures = [self._pool.submit(self._read, predictor, share, kwargs) for predictor, share in zip(self.predictors, shares, strict=True) if share]
        results: list[Any] = [None] * len(crops)
        for k, future in enumerate(futures):
            results[k::workers] = future.result()
        return results

    def _read(self, predictor: Any, crops: list[Any], kwargs: dict[str, Any]) -> list[Any]:
        return list(predictor.predict(crops, batch_size=self.batch_size, **kwargs))


#: A recognised line scoring below this is checked for being upside down (see the module docstring).
TURNED_LINE_SCORE = 0.9


class TurnedLineCheck:
    """A recogniser whose low-scoring lines are read turned by 180 degrees where the classifier says so.

    Args:
        recognizer: reads crops (``rec_score`` per result), e.g. a ``ParallelRecognizer``.
        classifier: PaddleX's text-line orientation predictor (``class_ids`` 1 = turned by 180 degrees).

    Attributes:
        enabled: whether the check runs; an engine sets it per job (``options.orientation``) and reads
            one document at a time.
        turned: lines read turned since the engine last reset it (for tests and logs).
    """

    def __init__(self, recognizer: Any, classifier: Any) -> None:
        self.recognizer = recognizer
        self.classifier = classifier
        self.enabled = True
        self.turned = 0

    def __call__(self, crops: Sequence[Any], **kwargs: Any) -> list[Any]:
        import numpy as np

        crops = list(crops)
        results = self.recognizer(crops, **kwargs)
        suspects = [i for i, result in enumerate(results) if float(result["rec_score"]) < TURNED_LINE_SCORE] if self.enabled else []
        if not suspects:
            return results
        classes = self.classifier.predict([crops[i] for i in suspects])
        flagged = [i for i, result in zip(suspects, classes, strict=True) if int(np.asarray(result["class_ids"]).ravel()[0]) == 1]
        if flagged:
            again = self.recognizer([np.ascontiguousarray(crops[i][::-1, ::-1]) for i in flagged], **kwargs)
            for index, result in zip(flagged, again, strict=True):
                if float(result["rec_score"]) > float(results[index]["rec_score"]):
                    if isinstance(result["rec_text"], tuple):  # word boxes asked for: columns from the crop's other end
                        result["rec_text"] = (result["rec_text"][0], turned_columns(result["rec_text"][1]))
                    results[index] = result
                    self.turned += 1
        return results


class LogicalOrder:
    """A right-to-left script's recogniser whose text comes in the order it is typed (``scripts.logical_order``):
    PaddleX decodes a line from the left of its image to the right, which mirrors Arabic.

    Args:
        recognizer: reads crops (``rec_text`` per result), e.g. a ``ParallelRecognizer``.
    """

    def __init__(self, recognizer: Any) -> None:
        self.recognizer = recognizer

    def __call__(self, crops: Sequence[Any], **kwargs: Any) -> list[Any]:
        from ocr_platform.engines.scripts import logical_order

        results = self.recognizer(crops, **kwargs)
        for result in results:
            result["rec_text"] = logical_order(str(result["rec_text"]))
        return results


def install_recognizer(pipeline: Any, recognizer: Any) -> None:
    """Put ``recognizer`` in place of a built ``paddleocr.PaddleOCR`` pipeline's text recogniser."""
    inner = getattr(getattr(pipeline, "paddlex_pipeline", None), "_pipeline", None)
    if inner is None or not hasattr(inner, "text_rec_model"):
        raise RuntimeError(
            "PaddleOCR's OCR pipeline no longer keeps its recogniser at paddlex_pipeline._pipeline.text_rec_model; "
            "engines/text_pipeline.py was written against paddleocr 3.7: pin that version or update install_recognizer."
        )
    inner.text_rec_model = recognizer


# PaddleX's config reader, in its own module and where its model resolver imported it by name.
_CONFIG_READER = "load_model_config"


@contextmanager
def model_configs_read_once() -> Iterator[None]:
    """While it is open, each model directory's ``inference.yml`` is parsed once and copied for every
    further predictor built from it (PaddleX's ``load_model_config``, which its model resolver and its
    predictors call)."""
    import importlib

    modules = [importlib.import_module(f"paddlex.inference.models.utils.{name}") for name in ("model_config", "model_resolver")]
    original = getattr(modules[0], _CONFIG_READER, None)
    if original is None or any(getattr(module, _CONFIG_READER, None) is not original for module in modules):
        raise RuntimeError(
            "PaddleX no longer reads model configs through paddlex.inference.models.utils.model_config.load_model_config; "
            "engines/text_pipeline.py was written against paddlex 3.7: pin that version or update model_configs_read_once."
        )
    parsed: dict[str, Any] = {}

    def load_model_config(model_dir: Any) -> Any:
        key = str(model_dir)
        if key not in parsed:
            parsed[key] = original(model_dir)
        return copy.deepcopy(parsed[key])

    for module in modules:
        setattr(module, _CONFIG_READER, load_model_config)
    try:
        yield
    finally:
        for module in modules:
            setattr(module, _CONFIG_READER, original)
