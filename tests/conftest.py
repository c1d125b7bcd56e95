"""Shared test fixtures: paths to the shared data and reference results beside the repository."""

from __future__ import annotations

from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[1].parent / "shared"


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    if not SHARED.exists():
        pytest.skip(f"shared data folder {SHARED} is absent")
    return SHARED
