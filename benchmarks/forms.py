"""Forms: key-value linking and selection marks (``engines.forms``, ``engines.checkboxes``), end to end from pixels
with the route's own OCR (PP-OCRv5, the text routes' engine and the layout route's line reader here).

Three sets:

- ``funsd DIR``: FUNSD (Jaume et al., 2019, "FUNSD: A Dataset for Form Understanding in Noisy Scanned
  Documents"; https://guillaumejaume.github.io/FUNSD/; non-commercial research and educational use only, so it is
  not in this repository: pass the folder that holds ``testing_data/`` and ``training_data/``). Each form's PNG is
  read by the route; a predicted pair is right when its key's words lie in a question entity and its value's
  words in an answer entity that FUNSD links to it (most of the words' centres inside the entity's box).
  Precision over predicted pairs with a value, recall over FUNSD's question-answer links. ``--split training``
  reads the training split (the only one tuned on).
- ``generated``: filled-in forms made in code (``tests/form_documents.py``: labels, typed answers beside or under
  them, blanks, ticked and empty boxes, scanned): pairs by text (rapidfuzz ratio >= 80 on key and value), marks by
  box (IoU >= 0.5) and state.
- ``pdf-forms``: public PDF forms whose own check boxes and radio buttons are the truth (their ``form_fields``,
  those drawn with an outline): each page is rendered with its fields drawn, as a printer would, read by the
  route's OCR, and its marks found from the pixels and those lines (``--pixels-only``: without the lines).

Beside the method, a nearest-neighbour baseline: the same labels, each paired with the nearest other text
(centre to centre). Reported: precision, recall and F1 of pairs; precision and recall of marks and the accuracy
of their state; seconds per page for forms alone (OCR apart).

    .venv/bin/python benchmarks/forms.py generated --count 40
    .venv/bin/python benchmarks/forms.py funsd /path/to/funsd/dataset
    .venv/bin/python benchmarks/forms.py pdf-forms tests/documents/public/*.pdf

Not part of the test suite; docs/performance/forms.md reports its figures with the machine they ran on.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "lambdas")]

from rapidfuzz import fuzz  # noqa: E402

from ocr_platform.core.forms import form_text  # noqa: E402
from ocr_platform.core.results import KeyValue  # noqa: E402
from ocr_platform.engines.forms import read_forms, segments  # noqa: E402

Box = tuple[float, float, float, float]


def engine() -> Any:
    from ocr_platform.engines import get_engine

    return get_engine("pp-ocrv5")


def read(path: Path, ocr: Any) -> tuple[dict[str, Any], Any]:
    """The route's page for ``path`` (OCR only: forms are timed apart) and the page image."""
    from PIL import Image

    output = ocr.predict(path, options={"text_layer": "ignore"})
    return output.pages[0], Image.open(path).convert("RGB")


def nearest_neighbour(lines: Sequence[Any]) -> list[KeyValue]:
    """The baseline: each label (a segment ending in ':') paired with the nearest other segment, centre to centre."""
    parts = segments(lines)
    pairs: list[KeyValue] = []
    for label in (s for s in parts if s.is_label):
        centre = ((label.box[0] + label.box[2]) / 2, (label.box[1] + label.box[3]) / 2)
        others = [s for s in parts if s is not label and not s.is_label]
        if not others:
            continue
        best = min(others, key=lambda s: ((s.box[0] + s.box[2]) / 2 - centre[0]) ** 2 + ((s.box[1] + s.box[3]) / 2 - centre[1]) ** 2)
        pairs.append({"key": form_text(label.words), "value": dict(form_text(best.words)), "confidence": 1.0, "source": "layout"})  # type: ignore[typeddict-item]
    return pairs


def scores(right: int, predicted: int, truth: int) -> dict[str, float]:
    precision = right / predicted if predicted else 0.0
    recall = right / truth if truth else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": round(precision, 3), "recall": round(recall, 3), "f1": round(f1, 3), "right": right, "predicted": predicted, "truth": truth}


def _box(polygon: Sequence[Sequence[float]]) -> Box:
    xs, ys = [p[0] for p in polygon], [p[1] for p in polygon]
    return min(xs), min(ys), max(xs), max(ys)


def _iou(a: Box, b: Box) -> float:
    w, h = min(a[2], b[2]) - max(a[0], b[0]), min(a[3], b[3]) - max(a[1], b[1])
    inter = max(0.0, w) * max(0.0, h)
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union else 0.0


def mark_scores(found: Sequence[Any], truth: Sequence[tuple[bool, Box]]) -> dict[str, int]:
    """Marks matched to the truth's boxes (IoU >= 0.5, greedily), and how many of those have the right state."""
    used: set[int] = set()
    matched = correct = 0
    for mark in found:
        box = _box(mark["polygon"])
        best = max((i for i in range(len(truth)) if i not in used), key=lambda i: _iou(box, truth[i][1]), default=None)
        if best is not None and _iou(box, truth[best][1]) >= 0.5:
            used.add(best)
            matched += 1
            correct += (mark["state"] == "selected") == truth[best][0]
    return {"found": len(found), "truth": len(truth), "matched": matched, "state_right": correct}


def _norm(text: str | None) -> str:
    return "".join((text or "").lower().rstrip(":").split())


def _same(a: str | None, b: str | None) -> bool:
    return fuzz.ratio(_norm(a), _norm(b)) >= 80


def generated(count: int, first: int) -> dict[str, Any]:
    from tests.form_documents import filled_form

    ocr = engine()
    totals = {"method": [0, 0, 0], "baseline": [0, 0, 0], "blank_right": 0, "blank": 0, "mark_labels": [0, 0]}
    marks = {"found": 0, "truth": 0, "matched": 0, "state_right": 0}
    seconds: list[float] = []
    for seed in range(count):
        image, truth = filled_form(first + seed)
        path = Path(f"/tmp/forms-benchmark-{seed}.png")
        image.save(path)
        page = ocr.predict(path, options={"text_layer": "ignore"}).pages[0]
        started = time.perf_counter()
        pairs, found = read_forms(image, page["lines"])
        seconds.append(time.perf_counter() - started)
        filled = [(k, v) for k, v in truth.pairs if v]
        for name, predicted in (("method", pairs), ("baseline", nearest_neighbour(page["lines"]))):
            texts = [p for p in predicted if p["value"] and "state" not in p["value"]]
            right = sum(any(_same(p["key"]["text"], k) and _same(p["value"]["text"], v) for k, v in filled) for p in texts)  # type: ignore[index]
            totals[name] = [a + b for a, b in zip(totals[name], (right, len(texts), len(filled)), strict=True)]  # type: ignore[arg-type]
        for label, answer in truth.pairs:
            if answer is None:
                totals["blank"] += 1  # type: ignore[operator]
                totals["blank_right"] += any(_same(p["key"]["text"], label) and p["value"] is None for p in pairs)  # type: ignore[operator]
        for key, value in mark_scores(found, [(selected, box) for _, selected, box in truth.marks]).items():
            marks[key] += value
        labelled = [p for p in pairs if p["value"] and "state" in p["value"]]
        totals["mark_labels"][0] += sum(  # type: ignore[index]
            any(_same(p["key"]["text"], label) and (p["value"]["state"] == "selected") == selected for label, selected, _ in truth.marks)  # type: ignore[index]
            for p in labelled)
        totals["mark_labels"][1] += len(truth.marks)  # type: ignore[index]
        path.unlink()
    return {
        "forms": count, "seeds": f"{first}-{first + count - 1}",
        "pairs": scores(*totals["method"]),  # type: ignore[misc]
        "pairs_baseline": scores(*totals["baseline"]),  # type: ignore[misc]
        "blank_fields_null": f"{totals['blank_right']}/{totals['blank']}",
        "marks": _mark_summary(marks),
        "marks_paired_with_their_label": f"{totals['mark_labels'][0]}/{totals['mark_labels'][1]}",  # type: ignore[index]
        "forms_seconds_per_page": round(statistics.mean(seconds), 4),
    }


def _mark_summary(marks: dict[str, int]) -> dict[str, Any]:
    return {
        **marks,
        "precision": round(marks["matched"] / marks["found"], 3) if marks["found"] else 0.0,
        "recall": round(marks["matched"] / marks["truth"], 3) if marks["truth"] else 0.0,
        "state_accuracy": round(marks["state_right"] / marks["matched"], 3) if marks["matched"] else 0.0,
    }


def pdf_forms(paths: Sequence[Path], scale: float = 150 / 72, *, ocr_lines: bool = True) -> dict[str, Any]:
    """Marks on public PDF forms, rendered with their fields drawn; the fields' boxes and states are the truth.

    Each page is read as the route reads it: its lines by the route's OCR (their height sets the scale of a box,
    their words rule out letters such as ``D`` or ``B``) unless ``ocr_lines`` is off (pixels alone)."""
    import tempfile

    import pypdfium2 as pdfium

    from ocr_platform.document.form_fields import at_scale, read_form_fields

    ocr = engine() if ocr_lines else None
    marks = {"found": 0, "truth": 0, "matched": 0, "state_right": 0}
    pages = unseen = 0
    for path in paths:
        fields = read_form_fields(path, range(1, len(pdfium.PdfDocument(str(path))) + 1))
        pdf = pdfium.PdfDocument(str(path))
        pdf.init_forms()
        for number, page_fields in fields.items():
            image = pdf[number - 1].render(scale=scale, may_draw_forms=True).to_pil().convert("RGB")
            widgets = [(bool(f.get("selected")), tuple(f["bbox"]), f["type"] == "radio")
                       for f in at_scale(page_fields, scale) if f["type"] in ("checkbox", "radio")]
            truth = [(selected, box) for selected, box, radio in widgets if _outlined(image, box, radio=radio)]  # type: ignore[arg-type]
            unseen += len(widgets) - len(truth)
            if not truth:
                continue
            lines: list[Any] = []
            if ocr is not None:
                with tempfile.NamedTemporaryFile(suffix=".png") as png:
                    image.save(png.name)
                    lines = ocr.predict(Path(png.name), options={"text_layer": "ignore"}).pages[0]["lines"]
            found = read_forms(image, lines)[1]
            pages += 1
            for key, value in mark_scores(found, truth).items():  # type: ignore[arg-type]
                marks[key] += value
    return {"pages": pages, "ocr_lines": ocr_lines, "marks": _mark_summary(marks), "widgets_drawn_without_an_outline": unseen}


#: Grey darker than this is ink in a rendered outline (a thin rule is drawn anti-aliased, mid-grey, at 150 dpi).
OUTLINE_GREY = 200


def _outlined(image: Any, box: Box, *, radio: bool = False) -> bool:
    """Whether a check box widget is drawn with an outline a reader of the printed page sees: ink (``OUTLINE_GREY``)
    within 2 pixels of most points (60 %) of its box's edges, or, for a radio button, of the circle inside its box.
    A widget drawn without one (only its tick, or nothing) is no box on paper and is left out of the truth."""
    import math

    import numpy as np

    gray = np.asarray(image.convert("L"))
    x0, y0, x1, y1 = box
    if x1 - x0 < 4 or y1 - y0 < 4:
        return False
    steps = 48
    rectangle = [(x0 + (x1 - x0) * i / steps, y) for i in range(steps + 1) for y in (y0, y1)]
    rectangle += [(x, y0 + (y1 - y0) * i / steps) for i in range(steps + 1) for x in (x0, x1)]
    cx, cy, rx, ry = (x0 + x1) / 2, (y0 + y1) / 2, (x1 - x0) / 2, (y1 - y0) / 2
    circle = [(cx + rx * math.cos(2 * math.pi * i / steps), cy + ry * math.sin(2 * math.pi * i / steps)) for i in range(steps)]

    def inked(points: list[tuple[float, float]]) -> bool:
        dark = 0
        for x, y in points:
            near = gray[max(0, round(y) - 2):round(y) + 3, max(0, round(x) - 2):round(x) + 3]
            dark += bool(near.size) and int(near.min()) < OUTLINE_GREY
        return dark >= 0.6 * len(points)

    return inked(rectangle) or (radio and inked(circle))


def funsd(root: Path, split: str) -> dict[str, Any]:
    ocr = engine()
    folder = root / f"{split}_data"
    right = {"method": 0, "baseline": 0}
    predicted = {"method": 0, "baseline": 0}
    links_total = 0
    seconds: list[float] = []
    for annotation in sorted((folder / "annotations").glob("*.json")):
        entities = json.loads(annotation.read_text())["form"]
        by_id = {e["id"]: e for e in entities}
        links = {(a, b) for e in entities for a, b in e.get("linking", [])
                 if by_id.get(a, {}).get("label") == "question" and by_id.get(b, {}).get("label") == "answer"}
        links_total += len(links)
        page, image = read(folder / "images" / f"{annotation.stem}.png", ocr)
        started = time.perf_counter()
        pairs, _ = read_forms(image, page["lines"])
        seconds.append(time.perf_counter() - started)
        for name, found in (("method", pairs), ("baseline", nearest_neighbour(page["lines"]))):
            for pair in found:
                if not pair["value"] or "state" in pair["value"]:
                    continue
                predicted[name] += 1
                question = _entity(pair["key"]["words"], entities, "question")
                answer = _entity(pair["value"]["words"], entities, "answer")
                right[name] += question is not None and answer is not None and (question, answer) in links
    return {
        "split": split, "forms": len(seconds),
        "pairs": scores(right["method"], predicted["method"], links_total),
        "pairs_baseline": scores(right["baseline"], predicted["baseline"], links_total),
        "forms_seconds_per_page": round(statistics.mean(seconds), 4) if seconds else 0.0,
    }


def _entity(words: Sequence[Any], entities: Sequence[Any], label: str) -> int | None:
    """The FUNSD entity of ``label`` that holds most of ``words``' centres (at least half of them)."""
    votes: dict[int, int] = {}
    for word in words:
        x0, y0, x1, y1 = _box(word["polygon"])
        cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
        for entity in entities:
            ex0, ey0, ex1, ey1 = entity["box"]
            if entity["label"] == label and ex0 - 2 <= cx <= ex1 + 2 and ey0 - 2 <= cy <= ey1 + 2:
                votes[entity["id"]] = votes.get(entity["id"], 0) + 1
    if not votes:
        return None
    best = max(votes, key=lambda i: votes[i])
    return best if votes[best] * 2 >= len(words) else None


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sets = parser.add_subparsers(dest="set", required=True)
    made = sets.add_parser("generated")
    made.add_argument("--count", type=int, default=40)
    made.add_argument("--first-seed", type=int, default=5000, help="the first form's seed (the method was tuned on 1000-1011)")
    public = sets.add_parser("funsd")
    public.add_argument("root", type=Path, help="the folder holding testing_data/ and training_data/")
    public.add_argument("--split", choices=["testing", "training"], default="testing")
    pdfs = sets.add_parser("pdf-forms")
    pdfs.add_argument("pdfs", type=Path, nargs="+")
    pdfs.add_argument("--pixels-only", action="store_true", help="find marks without the route's OCR lines")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    if args.set == "generated":
        figures = generated(args.count, args.first_seed)
    elif args.set == "funsd":
        figures = funsd(args.root, args.split)
    else:
        figures = pdf_forms(args.pdfs, ocr_lines=not args.pixels_only)
    figures["machine"] = f"{platform.machine()}, {platform.python_version()}"
    print(json.dumps(figures, indent=2))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
