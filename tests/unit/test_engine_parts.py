"""The engine parts that are plain code: page turns and the coordinates mapped back, engine options,
recognition split across workers and the upside-down line check (fakes stand in for the models here;
tests/ocr runs them for real)."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from ocr_platform.core.errors import JobError
from ocr_platform.document.intake import PageImage
from ocr_platform.engines.options import EngineOptions, parse_options
from ocr_platform.engines.orientation import submitted_point, to_submitted, turn
from ocr_platform.engines.text_pipeline import ParallelRecognizer, TurnedLineCheck


@pytest.mark.parametrize("rotation", [0, 90, 180, 270])
def test_a_point_of_the_turned_page_maps_back_onto_the_submitted_page(rotation: int) -> None:
    width, height = 40, 30
    pixels = np.full((height, width, 3), 255, np.uint8)
    pixels[7, 31] = 0  # one dark pixel at x=31, y=7
    turned = np.asarray(turn(PageImage(page=1, image=Image.fromarray(pixels), scale=1.0), rotation).image)

    [[y, x]] = np.argwhere(turned[:, :, 0] == 0).tolist()
    # The pixel's centre, mapped back, is the submitted pixel's centre.
    assert submitted_point(x + 0.5, y + 0.5, rotation, width, height) == (31.5, 7.5)


def test_lines_and_blocks_are_mapped_and_keep_their_point_order() -> None:
    content = {
        "lines": [{"text": "a", "polygon": [[10, 0], [30, 0], [30, 5], [10, 5]], "score": 0.9}],
        "blocks": [{"label": "text", "bbox": [10, 0, 30, 5], "text": "a"}],
        "markdown": "a",
    }

    mapped = to_submitted(content, 180, width=100, height=50)

    assert mapped["lines"][0]["polygon"] == [[90.0, 50.0], [70.0, 50.0], [70.0, 45.0], [90.0, 45.0]]
    assert mapped["blocks"][0]["bbox"] == [70.0, 45.0, 90.0, 50.0]
    assert mapped["markdown"] == "a"
    assert to_submitted(content, 0, width=100, height=50) is content


@pytest.mark.parametrize(("options", "message"), [
    ({"orientation": "no"}, "must be true or false"),
    ({"variant": "small"}, "applies only to a model that has variants"),
    ({"backend": "faster-paddle"}, "applies only to a model that has several"),
    ({"colour": True}, "Unknown option 'colour'"),
])
def test_engine_options_are_checked(options: dict, message: str) -> None:
    with pytest.raises(JobError, match=message) as caught:
        parse_options(options)
    assert caught.value.code == "invalid_options"
    assert parse_options(None) == EngineOptions(orientation=True, variant=None)


class _Predictor:
    """A recogniser that reads each crop's label, scoring it as the crop says."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def predict(self, crops, batch_size: int = 1, **kwargs):
        for crop in crops:
            self.seen.append(crop.label)
            yield {"rec_text": crop.label, "rec_score": crop.score}


class _Crop(np.ndarray):
    label: str
    score: float


def _crop(label: str, score: float = 0.99) -> _Crop:
    crop = np.zeros((2, 2, 3), np.uint8).view(_Crop)
    crop.label, crop.score = label, score
    return crop


def test_recognition_is_split_across_workers_and_comes_back_in_order() -> None:
    workers = [_Predictor(), _Predictor()]
    crops = [_crop(str(i)) for i in range(5)]

    results = ParallelRecognizer(workers, batch_size=1)(crops)

    assert [r["rec_text"] for r in results] == ["0", "1", "2", "3", "4"]
    assert (workers[0].seen, workers[1].seen) == (["0", "2", "4"], ["1", "3"])


class _TurnedAware:
    """Reads a crop flipped by the check (a view whose label did not survive) as the upright text."""

    def __call__(self, crops, **kwargs):
        return [
            {"rec_text": getattr(c, "label", "turned"), "rec_score": getattr(c, "score", 0.98)} for c in crops
        ]


class _Classifier:
    def __init__(self, turned: set[str]) -> None:
        self.turned, self.seen = turned, []

    def predict(self, crops, **kwargs):
        for crop in crops:
            self.seen.append(crop.label)
            yield {"class_ids": [1 if crop.label in self.turned else 0]}


def test_only_lines_that_read_badly_are_checked_and_turned_where_that_reads_better() -> None:
    classifier = _Classifier(turned={"garbage", "hard"})
    check = TurnedLineCheck(_TurnedAware(), classifier)
    crops = [_crop("clean", 0.99), _crop("garbage", 0.3), _crop("hard", 0.99), _crop("blurry", 0.5)]

    results = check(crops)

    assert classifier.seen == ["garbage", "blurry"]  # "hard" scored well and was never shown
    assert [r["rec_text"] for r in results] == ["clean", "turned", "hard", "blurry"]
    assert check.turned == 1

    check.enabled = False
    assert [r["rec_text"] for r in check(crops)] == ["clean", "garbage", "hard", "blurry"]


def test_a_model_config_is_parsed_once_while_an_engine_loads(tmp_path) -> None:
    from paddlex.inference.models.utils import model_config, model_resolver

    from ocr_platform.engines.text_pipeline import model_configs_read_once

    (tmp_path / "inference.yml").write_text("Global:\n  model_name: m\nPostProcess:\n  character_dict: [a, b]\n")
    reads = []
    original = model_config.load_model_config

    with model_configs_read_once():
        first = model_resolver.load_model_config(tmp_path)
        (tmp_path / "inference.yml").write_text("Global:\n  model_name: changed\n")  # not read again
        second = model_config.load_model_config(tmp_path)
        reads.append(first == second and first is not second)
        first["PostProcess"]["character_dict"].append("c")  # a predictor's change stays its own
        reads.append(model_config.load_model_config(tmp_path)["PostProcess"]["character_dict"] == ["a", "b"])

    assert reads == [True, True]
    assert model_config.load_model_config is original and model_resolver.load_model_config is original
    assert model_config.load_model_config(tmp_path)["Global"]["model_name"] == "changed"
