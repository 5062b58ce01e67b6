"""Shared fixtures of the SASS tests: fixture cubins disassembled once per session."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelcheck.binary.nvdisasm import NvdisasmError, find_nvdisasm

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures"
CUBINS = sorted((FIXTURES / "cubin").glob("sm_*/*.cubin"))


def _have_nvdisasm() -> bool:
    try:
        find_nvdisasm()
    except NvdisasmError:
        return False
    return True


needs_nvdisasm = pytest.mark.skipif(not _have_nvdisasm(),
                                    reason="the nvidia-cuda-nvdisasm wheel is not installed")


@pytest.fixture(scope="session")
def sass_images():
    """``{cubin path: SassImage}`` for every fixture cubin."""
    from kernelcheck.sass.loader import load_cubin_sass

    return {path: load_cubin_sass(path.read_bytes(), str(path)) for path in CUBINS}


def without_line_info(data: bytes) -> bytes:
    """The cubin with its line table renamed out of the way, as a build without
    ``-lineinfo`` would have none (every fixture cubin carries one)."""
    return data.replace(b".debug_line\0", b".debug_lime\0")
