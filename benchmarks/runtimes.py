"""PP-OCRv6 small's own ONNX graphs on ONNX Runtime and on OpenVINO, the same inputs, one process: is OpenVINO a
faster way to run the platform's text models on a Lambda CPU?

The graphs are the ones the ``pp-ocrv6`` route's ``paddleocr`` backend runs (PaddleOCR's ONNX exports that
``rapidocr`` 3.9.2 ships, from ``ModelCache``). The inputs are one real dense page (page 2 of pypdf's
``resources/issue-604.pdf``, rendered at scale 2 as in ``benchmarks/real_pages.py``):

- detection: the page resized as the route does (long side 1280, multiples of 32, ImageNet normalisation);
- recognition: its 112 lines (boxes from faster-paddle tiny), each resized to height 48 as PaddleX does,
  one line per call (the route's batch size), on two workers of one thread each (the route's
  ``ParallelRecognizer``) for ONNX Runtime, and on OpenVINO both with two one-thread requests in flight
  (``AsyncInferQueue``, the same split) and with one two-thread request at a time.

OpenVINO is not a dependency of the project: install it anywhere and point ``--openvino-path`` at it
(``pip install --target /tmp/ov openvino==2026.4.1``). Each figure is the fastest of ``--repeat`` passes.
Not part of the test suite.

    .venv/bin/python benchmarks/runtimes.py --pdf issue-604.pdf --openvino-path /tmp/ov
"""

from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "lambdas")]


def page_bgr(pdf: Path, page: int) -> Any:
    import numpy as np
    import pypdfium2 as pdfium

    image = pdfium.PdfDocument(pdf)[page - 1].render(scale=2.0).to_pil().convert("RGB")
    return np.ascontiguousarray(np.asarray(image)[:, :, ::-1])


def det_input(image: Any, limit: int = 1280) -> Any:
    import cv2
    import numpy as np

    height, width = image.shape[:2]
    scale = min(1.0, limit / max(height, width))
    size = (max(32, round(width * scale / 32) * 32), max(32, round(height * scale / 32) * 32))
    resized = cv2.resize(image, size).astype(np.float32) / 255.0
    mean, std = np.array([0.485, 0.456, 0.406], np.float32), np.array([0.229, 0.224, 0.225], np.float32)
    return ((resized - mean) / std).transpose(2, 0, 1)[np.newaxis].astype(np.float32)


def rec_inputs(image: Any) -> list[Any]:
    import cv2
    import faster_paddle
    import numpy as np

    ok, encoded = cv2.imencode(".bmp", image)
    bounds = faster_paddle.OcrEngine(model_size="tiny").ocr(encoded.tobytes())["bounds"].values()
    tensors = []
    for bound in bounds:
        (x0, y0), (x1, y1) = bound["topLeftCoord"], bound["bottomRightCoord"]
        crop = image[y0:y1, x0:x1]
        if crop.size == 0:
            continue
        width = max(16, min(3200, round(48 * crop.shape[1] / crop.shape[0])))
        line = cv2.resize(crop, (width, 48)).astype(np.float32) / 255.0
        tensors.append(((line - 0.5) / 0.5).transpose(2, 0, 1)[np.newaxis].astype(np.float32))
    return tensors


def fastest(run: Any, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - started)
    return best


def onnxruntime_times(det: Path, rec: Path, det_x: Any, lines: list[Any], repeat: int) -> dict[str, float]:
    import onnxruntime as ort

    def session(path: Path, threads: int) -> Any:
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])

    detector = session(det, 2)
    workers = [session(rec, 1) for _ in range(2)]
    pool = ThreadPoolExecutor(2)

    def recognise() -> None:
        shares = [lines[k::2] for k in range(2)]
        list(pool.map(lambda pair: [pair[0].run(None, {pair[0].get_inputs()[0].name: x}) for x in pair[1]], zip(workers, shares, strict=True)))

    return {
        "detection": fastest(lambda: detector.run(None, {detector.get_inputs()[0].name: det_x}), repeat),
        "recognition, 2 workers x 1 thread": fastest(recognise, repeat),
    }


def openvino_times(det: Path, rec: Path, det_x: Any, lines: list[Any], repeat: int) -> dict[str, float]:
    import openvino as ov

    core = ov.Core()
    detector = core.compile_model(str(det), "CPU", {"INFERENCE_NUM_THREADS": 2})
    two_threads = core.compile_model(str(rec), "CPU", {"INFERENCE_NUM_THREADS": 2})
    streams = core.compile_model(str(rec), "CPU", {"NUM_STREAMS": 2, "INFERENCE_NUM_THREADS": 2})
    request = two_threads.create_infer_request()
    queue = ov.AsyncInferQueue(streams, 2)

    def in_flight() -> None:
        for x in lines:
            queue.start_async({0: x})
        queue.wait_all()

    detect = detector.create_infer_request()
    return {
        "detection": fastest(lambda: detect.infer({0: det_x}), repeat),
        "recognition, 2 requests x 1 thread": fastest(in_flight, repeat),
        "recognition, 1 request x 2 threads": fastest(lambda: [request.infer({0: x}) for x in lines], repeat),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pdf", type=Path, required=True, help="pypdf's resources/issue-604.pdf")
    parser.add_argument("--page", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--openvino-path", type=Path, help="a directory OpenVINO is installed in (pip --target)")
    args = parser.parse_args()
    if args.openvino_path:
        sys.path.append(str(args.openvino_path))  # after the venv: its numpy stays the one used
    from ocr_platform.engines.model_cache import ModelCache

    cache = ModelCache()
    det, rec = (cache.resolve(name, onnx=True) for name in ("PP-OCRv6_small_det", "PP-OCRv6_small_rec"))
    if det is None or rec is None:
        raise SystemExit("PP-OCRv6 small is not in the model cache (rapidocr 3.9.2 installs it)")
    image = page_bgr(args.pdf, args.page)
    det_x, lines = det_input(image), rec_inputs(image)
    print(f"page {args.page}: detection input {tuple(det_x.shape)}, {len(lines)} lines; fastest of {args.repeat}, seconds")
    results = {"ONNX Runtime": onnxruntime_times(det / "inference.onnx", rec / "inference.onnx", det_x, lines, args.repeat)}
    try:
        import openvino

        results[f"OpenVINO {openvino.__version__}"] = openvino_times(det / "inference.onnx", rec / "inference.onnx", det_x, lines, args.repeat)
    except ImportError:
        print("OpenVINO is not installed (see --openvino-path)")
    for runtime, times in results.items():
        for part, seconds in times.items():
            print(f"| {runtime} | {part} | {seconds:.3f} |")


if __name__ == "__main__":
    main()
