"""Shared fixtures: every test gets its own store (TUNEKIT_CACHE_DIR under tmp_path)."""

import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]  # the checkout: tests read only inside it


@pytest.fixture(autouse=True)
def cache_dir(tmp_path, monkeypatch):
    directory = tmp_path / "cache"
    monkeypatch.setenv("TUNEKIT_CACHE_DIR", str(directory))
    monkeypatch.delenv("TUNEKIT_MODE", raising=False)
    for name in ("TUNEKIT_ARTIFACT_DIR", "TUNEKIT_STORE", "TUNEKIT_MODEL_SERVE"):
        monkeypatch.delenv(name, raising=False)
    return directory


@pytest.fixture
def repo():
    return REPO
