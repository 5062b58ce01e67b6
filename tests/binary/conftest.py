"""Shared paths and loaders for the binary reader tests (data made by data/make_data.sh)."""

from __future__ import annotations

from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="session")
def data_bytes():
    """Read one file of tests/binary/data as bytes."""
    cache: dict[str, bytes] = {}

    def read(name: str) -> bytes:
        if name not in cache:
            cache[name] = (DATA / name).read_bytes()
        return cache[name]

    return read
