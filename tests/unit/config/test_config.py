"""Settings come from RAGLINE_* variables (and a few standard aliases), read in one place."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from ragline.config import Settings

pytestmark = pytest.mark.unit


def test_environment_is_layered_under_explicit_values() -> None:
    env = {
        "RAGLINE_HOME": "/data/rl",
        "RAGLINE_RRF_K": "30",
        "OPENAI_API_KEY": "sk-x",
        "AWS_REGION": "eu-west-1",
    }
    s = Settings.from_env(env, rrf_k=10)
    assert s.home == Path("/data/rl") and s.rrf_k == 10 and s.aws_region == "eu-west-1"
    assert s.openai_api_key.get_secret_value() == "sk-x" and s.llm_configured
    assert "sk-x" not in repr(s)


def test_ragline_variable_wins_over_the_standard_alias() -> None:
    s = Settings.from_env(
        {"RAGLINE_OPENAI_BASE_URL": "http://127.0.0.1:1/v1", "OPENAI_BASE_URL": "http://other"}
    )
    assert s.openai_base_url == "http://127.0.0.1:1/v1"


def test_defaults_are_the_embedded_backend_without_a_model() -> None:
    s = Settings.from_env({})
    assert (s.backend, s.resolved_store, s.llm_configured, s.rrf_k) == ("embedded", "sqlite", False, 60)


def test_bad_values_are_refused_clearly() -> None:
    with pytest.raises(ValidationError, match="backend"):
        Settings.from_env({"RAGLINE_BACKEND": "cloud"})
    with pytest.raises(ValidationError):
        Settings(unknown_setting=1)  # type: ignore[call-arg]


def test_silo_tenants_are_a_json_list_in_the_environment_and_anything_else_is_refused() -> None:
    assert Settings.from_env(
        {"RAGLINE_OPENSEARCH_SILO_TENANTS": '["acme", "globex"]'}
    ).opensearch_silo_tenants == [
        "acme",
        "globex",
    ]
    assert Settings.from_env({}).opensearch_silo_tenants == []
    for bad in ("acme", "acme,globex", '{"acme": 1}', "[1]"):
        with pytest.raises(ValidationError):
            Settings.from_env({"RAGLINE_OPENSEARCH_SILO_TENANTS": bad})


def test_ocr_is_offline_when_the_extra_is_installed_and_none_when_off(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import importlib.util

    from ragline.adapters.local_models.ocr import RapidOcrRecognizer
    from ragline.wiring import Container

    assert Settings.from_env({}).ocr == "auto"
    assert isinstance(Container(Settings.from_env({})).text_recognizer, RapidOcrRecognizer)
    assert isinstance(
        Container(Settings.from_env({"RAGLINE_OCR": "offline"})).text_recognizer, RapidOcrRecognizer
    )
    assert Container(Settings.from_env({"RAGLINE_OCR": "off"})).text_recognizer is None
    with pytest.raises(ValidationError, match="ocr"):
        Settings.from_env({"RAGLINE_OCR": "tesseract"})
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "rapidocr_onnxruntime" else real(name, *a),
    )
    assert Container(Settings.from_env({})).text_recognizer is None  # auto, and the extra is not installed
