"""Malformed inputs and bad output places shared by the bad-invocation tests."""

from __future__ import annotations

import io
import os
import random
import sys
from pathlib import Path

from tests.conftest import FIXTURES

PTX = FIXTURES / "ptx" / "sm_90" / "elementwise.ptx"
CUBIN = FIXTURES / "cubin" / "sm_90" / "elementwise.cubin"
FATBIN = FIXTURES / "fatbin" / "elementwise.fatbin"
HOST = FIXTURES / "exe" / "vec_add_host"


def host_elf_without_device_code() -> Path:
    """A host executable with no .nv_fatbin: the Python interpreter itself."""
    return Path(os.path.realpath(sys.executable))


def make_inputs(root: Path) -> dict[str, Path]:
    """Malformed files under ``root/in`` and places no output can be written."""
    inputs = root / "in"
    inputs.mkdir()
    files = {
        "empty": inputs / "empty.ptx",
        "truncated_ptx": inputs / "truncated.ptx",
        "truncated_cubin": inputs / "truncated.cubin",
        "truncated_fatbin": inputs / "truncated.fatbin",
        "random": inputs / "random.bin",
        "nodevice_dir": inputs / "nothing",
    }
    files["empty"].write_bytes(b"")
    text = PTX.read_bytes()
    files["truncated_ptx"].write_bytes(text[: len(text) // 2])
    files["truncated_cubin"].write_bytes(CUBIN.read_bytes()[:700])
    files["truncated_fatbin"].write_bytes(FATBIN.read_bytes()[:3000])
    files["random"].write_bytes(random.Random(7).randbytes(4096))
    files["nodevice_dir"].mkdir()
    (files["nodevice_dir"] / "notes.txt").write_text("no device code here\n")
    blocker = root / "a-file"
    blocker.write_text("x")
    files["blocker"] = blocker
    files["missing_dir"] = root / "missing-dir"
    return files


def snapshot(root: Path) -> set[str]:
    """Every path under ``root`` (to tell that nothing was left behind)."""
    return {str(p.relative_to(root)) for p in root.rglob("*")}


def stdin_bytes(data: bytes):
    """A stand-in for ``sys.stdin`` whose ``buffer`` gives ``data``."""
    return io.TextIOWrapper(io.BytesIO(data))
