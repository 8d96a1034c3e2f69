"""How engines load: the garbage-collector pause around a load and the Lambda init-phase preload."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from ocr_platform import engines
from ocr_platform.core.results import EngineInfo
from ocr_platform.engines import collector_paused, get_engine, preload_engines


class Loaded:
    """An engine that records whether the collector ran while it was built; not OCR."""

    info = EngineInfo(name="loaded", models=[], version="0")

    def __init__(self) -> None:
        self.collector_was_on = gc.isenabled()


@pytest.fixture
def registered() -> Iterator[str]:
    engines.register_engine("loading-test", Loaded)
    yield "loading-test"
    engines._factories.pop("loading-test", None)
    engines._instances.pop("loading-test", None)


def test_an_engine_loads_with_the_collector_paused_and_what_it_loaded_is_frozen(registered: str) -> None:
    frozen = gc.get_freeze_count()
    kept = [[object()] for _ in range(1000)]  # tracked objects that exist while the engine loads

    engine = get_engine(registered)

    assert engine.collector_was_on is False
    assert gc.isenabled()
    assert gc.get_freeze_count() >= frozen + len(kept)


def test_the_collector_comes_back_when_the_load_fails() -> None:
    with pytest.raises(RuntimeError), collector_paused():
        raise RuntimeError("weights missing")

    assert gc.isenabled()


def test_a_nested_pause_and_a_collector_that_is_already_off_are_left_alone() -> None:
    with collector_paused():
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the inner pause did not switch it back on
    assert gc.isenabled()

    gc.disable()
    try:
        frozen = gc.get_freeze_count()
        with collector_paused():
            pass
        assert not gc.isenabled() and gc.get_freeze_count() == frozen
    finally:
        gc.enable()


def test_preload_builds_the_named_engines_and_reports_the_ones_that_cannot_start(
    registered: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OCR_PRELOAD_MODELS", f"{registered}, no-such-model")

    outcome = preload_engines()

    assert outcome[registered] is None and isinstance(engines._instances[registered], Loaded)
    assert outcome["no-such-model"].startswith("unknown_model:")
    assert preload_engines([]) == {}
