"""Benchmark ``ocr`` (PP-OCRv5 on the CPU): load seconds, warm seconds per page, peak RSS and CER.

Pages are generated here: A4 at 200 DPI (1654 x 2339 px) with 32 lines of mixed words, numbers and
punctuation each, drawn in DejaVu Sans at 11-12 pt. Every configuration runs in a fresh process so the
load time and peak memory are its own.

    .venv/bin/python benchmarks/ocr_benchmark.py                 # the engine's default settings
    .venv/bin/python benchmarks/ocr_benchmark.py --grid          # the tuning grid, one line each
    .venv/bin/python benchmarks/ocr_benchmark.py --det-limit-type min --det-limit-side-len 64  # PaddleOCR's defaults

Not part of the test suite; the README reports its figures with the machine they ran on.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "lambdas")]

WORDS = ("invoice total amount payment customer account reference shipping address order delivery tax "
         "number date quantity price description balance due period service contract office Oslo Berlin").split()

GRID = [
    # PaddleOCR's own defaults on Paddle Inference (oneDNN on).
    {"inference_engine": "paddle", "det_limit_type": "min", "det_limit_side_len": 64, "rec_batch_size": 6},
    {"inference_engine": "paddle", "det_limit_type": "max", "det_limit_side_len": 1280, "rec_batch_size": 1},
    {"inference_engine": "paddle", "det_limit_type": "max", "det_limit_side_len": 1280, "rec_batch_size": 16},
    {"inference_engine": "onnxruntime", "det_limit_type": "min", "det_limit_side_len": 64, "rec_batch_size": 6},
    {"inference_engine": "onnxruntime", "det_limit_type": "max", "det_limit_side_len": 1280, "rec_batch_size": 6},
    {"inference_engine": "onnxruntime", "det_limit_type": "max", "det_limit_side_len": 1280, "rec_batch_size": 1},
    {"inference_engine": "onnxruntime", "det_limit_type": "max", "det_limit_side_len": 960, "rec_batch_size": 1},
]


def make_pages(directory: Path, count: int, seed: int = 7) -> list[tuple[Path, str]]:
    from PIL import Image, ImageDraw, ImageFont

    rng = random.Random(seed)
    font = ImageFont.truetype("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", 32)  # ~11.5 pt at 200 DPI
    pages = []
    for index in range(count):
        lines = []
        for _ in range(32):
            words = [rng.choice(WORDS).capitalize() if rng.random() < 0.2 else rng.choice(WORDS) for _ in range(rng.randint(4, 8))]
            words.insert(rng.randint(0, len(words)), f"{rng.randint(1, 9999)}.{rng.randint(0, 99):02d}")
            lines.append(" ".join(words) + rng.choice([".", ",", ":", ""]))
        image = Image.new("RGB", (1654, 2339), "white")
        draw = ImageDraw.Draw(image)
        for row, text in enumerate(lines):
            draw.text((150, 180 + row * 62), text, fill="black", font=font)
        path = directory / f"page-{index + 1}.png"
        image.save(path)
        pages.append((path, "\n".join(lines)))
    return pages


def run_once(config: dict, pages: int) -> dict:
    """One configuration in this process: load, then every page; returns the figures."""
    from dataclasses import replace

    t0 = time.perf_counter()
    from ocr_platform.cpu.job_runner import ocr_document
    from ocr_platform.engines.ppocrv5 import PPOCRv5Engine
    from ocr_platform.engines.settings import PaddleSettings
    from tests.documents import character_error_rate

    import_s = time.perf_counter() - t0
    with tempfile.TemporaryDirectory() as tmp:
        # A fresh local model cache: an ONNX export, when needed, counts in the load time like a cold start.
        os.environ["OCR_MODEL_CACHE_DIR"] = str(Path(tmp) / "models")
        settings = replace(PaddleSettings(allow_hub_download=False, bucket=None), **config)
        generated = make_pages(Path(tmp), pages)
        t1 = time.perf_counter()
        engine = PPOCRv5Engine(settings)
        load_s = time.perf_counter() - t1
        seconds, errors, chars = [], 0.0, 0
        for path, reference in generated:
            t2 = time.perf_counter()
            result, _ = ocr_document(path, job_id="bench", model="pp-ocrv5", engine=engine)
            seconds.append(time.perf_counter() - t2)
            text = "\n".join(line["text"] for line in result["pages"][0]["lines"])
            errors += character_error_rate(text, reference) * len("".join(reference.split()))
            chars += len("".join(reference.split()))
    warm = seconds[1:] or seconds
    return {
        "config": config,
        "import_s": round(import_s, 2),
        "load_s": round(load_s, 2),
        "first_page_s": round(seconds[0], 2),
        "warm_s_per_page": round(sum(warm) / len(warm), 3),
        "cer": round(errors / chars, 4),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "pages": pages,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=6, help="pages per configuration (the first counts as cold)")
    parser.add_argument("--grid", action="store_true", help="run the tuning grid")
    parser.add_argument("--inference-engine", choices=["onnxruntime", "paddle"])
    parser.add_argument("--det-limit-type", choices=["min", "max"])
    parser.add_argument("--det-limit-side-len", type=int)
    parser.add_argument("--rec-batch-size", type=int)
    parser.add_argument("--cpu-threads", type=int)
    parser.add_argument("--no-mkldnn", action="store_true")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()

    config = {k: v for k, v in {
        "inference_engine": args.inference_engine, "det_limit_type": args.det_limit_type, "det_limit_side_len": args.det_limit_side_len,
        "rec_batch_size": args.rec_batch_size, "cpu_threads": args.cpu_threads,
    }.items() if v is not None}
    if args.no_mkldnn:
        config["enable_mkldnn"] = False
    if args.json:
        print(json.dumps(run_once(config, args.pages)))
        return

    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}", file=sys.stderr)
    configs = GRID if args.grid else [config]
    header = f"{'config':<70} {'import s':>8} {'load s':>7} {'1st page s':>10} {'warm s/page':>11} {'CER':>7} {'peak RSS MB':>11}"
    print(header)
    for cfg in configs:
        cmd = [sys.executable, __file__, "--json", "--pages", str(args.pages)]
        for key, value in cfg.items():
            cmd += ["--no-mkldnn"] if key == "enable_mkldnn" else [f"--{key.replace('_', '-')}", str(value)]
        out = subprocess.run(cmd, capture_output=True, text=True, check=True, env={**os.environ, "GLOG_minloglevel": "2"})
        r = json.loads(out.stdout.strip().splitlines()[-1])
        label = json.dumps(r["config"]) if r["config"] else "(engine defaults)"
        print(f"{label:<70} {r['import_s']:>8} {r['load_s']:>7} {r['first_page_s']:>10} {r['warm_s_per_page']:>11} {r['cer']:>7.2%} {r['peak_rss_mb']:>11}")


if __name__ == "__main__":
    main()
