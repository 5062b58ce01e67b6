"""Shared test helpers: where the fixture corpus lives."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"


def fixture_ptx_files() -> list[Path]:
    """Every PTX file of the corpus (nvcc -O3 and -O0 -G, NVRTC, Triton, numba-cuda)."""
    return sorted(FIXTURES.glob("ptx/*/*.ptx"))


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    return FIXTURES
