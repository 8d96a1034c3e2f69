"""The engine options a job may set (the message's ``options`` object), checked before any page is read.

Options are per job and documented in docs/contracts.md ("Engine options"). A misspelt or mistyped
option fails the job ``invalid_options`` naming the options that exist, instead of being ignored: a
user who turned orientation off, or asked for another model variant, gets that or an error.

>>> parse_options({"orientation": False})
EngineOptions(orientation=False, variant=None, backend=None, text_layer='auto', outputs=(), features=(), html='main')
>>> parse_options({"text_layer": "ignore", "outputs": ["pdf"], "features": ["forms"]})
EngineOptions(orientation=True, variant=None, backend=None, text_layer='ignore', outputs=('pdf',), features=('forms',), html='main')
>>> parse_options({"variant": "tiny"}, variants=("tiny", "small", "medium")).variant
'tiny'
>>> parse_options({"backend": "faster-paddle"}, backends=("faster-paddle", "paddleocr")).backend
'faster-paddle'
>>> parse_options({"orientaton": False})  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
ocr_platform.core.errors.JobError: invalid_options: Unknown option 'orientaton'; the options are: orientation, ..., features, html.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ocr_platform.core.errors import ErrorCode, JobError
from ocr_platform.core.s3_layout import OUTPUT_FILES

KNOWN_OPTIONS = ("orientation", "variant", "backend", "text_layer", "outputs", "features", "html")
#: What of an HTML file a job reads (``html``): ``main``, its main content without navigation and boilerplate where
#: the page has them (``ocr_platform.document.html_main``); ``page``, the whole page. The first is the default.
HTML_CONTENT = ("main", "page")
#: How a job treats a PDF's own text (``text_layer``); the first is the default (README, "PDF text layers").
TEXT_LAYER_MODES = ("auto", "ignore")
#: Files a job may ask for beside result.json (``outputs``): ``pdf`` a searchable result.pdf, ``hocr``, ``alto`` and
#: ``textract`` the result in those formats (``ocr_platform.outputs.formats``).
OUTPUT_FORMATS = tuple(OUTPUT_FILES)
#: What a job may ask the engine to find beside the text (``features``): ``forms``, each label's answer and each
#: check box's tick (``key_values``, ``selection_marks``; ``engines.forms``). ``pp-structurev3`` always finds them.
FEATURES = ("forms",)
#: The sizes a job may pick with ``variant``, per model (each model's engine has its default).
MODEL_VARIANTS: dict[str, tuple[str, ...]] = {"pp-ocrv6": ("tiny", "small", "medium")}
#: What may run a model's weights (``backend``), per model; the first is the default, chosen by measurement
#: (docs/performance/real-pages.md): faster-paddle (``engines.faster_paddle``) or PaddleOCR's own pipeline.
MODEL_BACKENDS: dict[str, tuple[str, ...]] = {"pp-ocrv6": ("faster-paddle", "paddleocr")}


@dataclass(frozen=True)
class EngineOptions:
    """What a job asked of the engine.

    Attributes:
        orientation: turn each page upright (0/90/180/270) and each text line (0/180) before reading
            (default on); ``false`` reads every page and line as submitted.
        variant: the model size for routes that offer several (``pp-ocrv6``: ``tiny``, ``small``,
            ``medium``); ``None`` is the route's default.
        backend: what runs the route's models, for routes that offer several (``pp-ocrv6``: ``faster-paddle``,
            ``paddleocr``); ``None`` is the route's default. ``engine`` in result.json names the one that ran.
        text_layer: ``auto`` reads a PDF page's own text where it is real and OCRs only what it lacks
            (``engines.text_layer_choice``); ``ignore`` OCRs every page.
        outputs: files wanted beside result.json: ``pdf`` for a searchable result.pdf.
        features: what to find beside the text: ``forms`` for key-value pairs and selection marks.
        html: ``main`` (an HTML file's main content) or ``page`` (the whole page), ``HTML_CONTENT``.
    """

    orientation: bool = True
    variant: str | None = None
    backend: str | None = None
    text_layer: str = TEXT_LAYER_MODES[0]
    outputs: tuple[str, ...] = ()
    features: tuple[str, ...] = ()
    html: str = HTML_CONTENT[0]

    @property
    def forms(self) -> bool:
        """Whether the job asked for forms (``features: ["forms"]``)."""
        return "forms" in self.features


def parse_options(options: Mapping[str, Any] | None, *, variants: Sequence[str] = (), backends: Sequence[str] = ()) -> EngineOptions:
    """``options`` checked against the known options; ``variants`` are the sizes this route offers, ``backends``
    what may run them.

    Raises ``JobError(invalid_options)`` for an unknown option, a wrong type or a variant the route
    does not offer.
    """
    options = dict(options or {})
    for name in options:
        if name not in KNOWN_OPTIONS:
            raise JobError(ErrorCode.INVALID_OPTIONS, f"Unknown option {name!r}; the options are: {', '.join(KNOWN_OPTIONS)}.")
    orientation = options.get("orientation", True)
    if not isinstance(orientation, bool):
        raise JobError(ErrorCode.INVALID_OPTIONS, f"Option 'orientation' must be true or false, not {orientation!r}.")
    variant = options.get("variant")
    if variant is not None:
        if not variants:
            raise JobError(ErrorCode.INVALID_OPTIONS, "Option 'variant' applies only to a model that has variants (pp-ocrv6).")
        if variant not in variants:
            raise JobError(ErrorCode.INVALID_OPTIONS, f"Option 'variant' must be one of {', '.join(variants)}, not {variant!r}.")
    backend = options.get("backend")
    if backend is not None and backend not in backends:
        if not backends:
            raise JobError(ErrorCode.INVALID_OPTIONS, "Option 'backend' applies only to a model that has several (pp-ocrv6).")
        raise JobError(ErrorCode.INVALID_OPTIONS, f"Option 'backend' must be one of {', '.join(backends)}, not {backend!r}.")
    text_layer = options.get("text_layer", TEXT_LAYER_MODES[0])
    if text_layer not in TEXT_LAYER_MODES:
        raise JobError(ErrorCode.INVALID_OPTIONS, f"Option 'text_layer' must be one of {', '.join(TEXT_LAYER_MODES)}, not {text_layer!r}.")
    outputs = options.get("outputs", [])
    if not isinstance(outputs, list) or any(output not in OUTPUT_FORMATS for output in outputs):
        raise JobError(ErrorCode.INVALID_OPTIONS, f"Option 'outputs' must be a list of {', '.join(OUTPUT_FORMATS)}, not {outputs!r}.")
    features = options.get("features", [])
    if not isinstance(features, list) or any(feature not in FEATURES for feature in features):
        raise JobError(ErrorCode.INVALID_OPTIONS, f"Option 'features' must be a list of {', '.join(FEATURES)}, not {features!r}.")
    return EngineOptions(orientation=orientation, variant=variant, backend=backend, text_layer=text_layer,
                         outputs=tuple(dict.fromkeys(outputs)), features=tuple(dict.fromkeys(features)),
                         html=html_content(options))


def html_content(options: Mapping[str, Any] | None) -> str:
    """The job's ``html`` option (``HTML_CONTENT``, the first by default); ``invalid_options`` for another value.

    >>> html_content({"html": "page"}), html_content(None)
    ('page', 'main')
    """
    html = (options or {}).get("html", HTML_CONTENT[0])
    if html not in HTML_CONTENT:
        raise JobError(ErrorCode.INVALID_OPTIONS, f"Option 'html' must be one of {', '.join(HTML_CONTENT)}, not {html!r}.")
    return str(html)
