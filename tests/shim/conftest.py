"""Shared set-up of the shim tests: built libraries, the stand-in environment, and launch
specifications made from fixtures/expected.toml."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures"
CLIENTS = Path(__file__).resolve().parent / "clients"
EXPECTED = tomllib.loads((FIXTURES / "expected.toml").read_text())["kernels"]


@pytest.fixture(scope="session")
def libraries(tmp_path_factory):
    """Build the shim and the stand-in once per session, into a private build directory."""
    from kernelcheck.shim.build import ShimBuildError, preload_library, standin_library

    os.environ.setdefault("KERNELCHECK_BUILD_DIR", str(tmp_path_factory.mktemp("build")))
    try:
        return preload_library(), standin_library()
    except ShimBuildError as error:  # pragma: no cover - no C compiler
        pytest.skip(f"cannot build the shim: {error}")


@pytest.fixture
def env(libraries, tmp_path):
    """An environment using the stand-in driver and a fresh private cache directory."""
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    base = dict(os.environ)
    base["LD_LIBRARY_PATH"] = os.pathsep.join(
        p for p in (str(libraries[1].parent), base.get("LD_LIBRARY_PATH")) if p)
    base["KERNELCHECK_CACHE_DIR"] = str(cache)
    base.pop("LD_PRELOAD", None)
    return base


def param_bytes(function, instance, names) -> bytes:
    """The parameter buffer of an expected.toml instance (struct triples, floats, ints)."""
    buf = bytearray(function.param_size)
    for param, name in zip(function.params, names, strict=True):
        value = instance["params"][name]
        if isinstance(value, list):
            for offset, size, v in value:
                start = param.offset + offset
                buf[start:start + size] = (int(v) % (1 << 8 * size)).to_bytes(size, "little")
            continue
        if isinstance(value, float):
            value = int.from_bytes(struct.pack("<f" if param.size == 4 else "<d", value),
                                   "little")
        buf[param.offset:param.offset + param.size] = (
            int(value) % (1 << 8 * param.size)).to_bytes(param.size, "little")
    return bytes(buf)


#: The fixture instances' pointers assume allocations at 0x7f0000000000 and some reach below
#: it (negative offsets); the client's one buffer starts there, so every pointer is moved up
#: by RELOCATE (verdicts depend only on relative placement).
HEAP_BASE = 0x7F0000000000
RELOCATE = 8 << 20


def _relocate(buf: bytes, layout) -> bytes:
    out = bytearray(buf)
    for offset, size in layout:
        for at in range(offset, offset + size - 7, 8):
            value = int.from_bytes(out[at:at + 8], "little")
            if HEAP_BASE - RELOCATE <= value < HEAP_BASE + (16 << 20):
                out[at:at + 8] = (value + RELOCATE).to_bytes(8, "little")
    return bytes(out)


def fixture_launches(ptx_names, forms=("params", "extra", "ex", "library", "coop")):
    """Launch specifications for every instance (without allocations) of the kernels in
    the given sm_90 PTX files, cycling through the launch forms."""
    from kernelcheck.ptx.parser import parse_ptx_file

    launches = []
    k = 0
    for ptx in ptx_names:
        path = FIXTURES / "ptx" / "sm_90" / ptx
        module = parse_ptx_file(path)
        for function in module.kernels:
            expected = EXPECTED.get(function.name)
            for instance in (expected or {}).get("instances", []):
                if "allocations" in instance:
                    continue
                layout = [[p.offset, p.size] for p in function.params]
                raw = param_bytes(function, instance, expected["param_names"])
                launches.append({
                    "ptx": str(path), "kernel": function.name,
                    "params": _relocate(raw, layout).hex(), "layout": layout,
                    "grid": instance["grid"], "block": instance["block"],
                    "form": forms[k % len(forms)], "expected": instance["verdict"]})
                k += 1
    return launches


def run_client(spec, tmp_path, env, under_shim=False, extra_args=(), name="client"):
    """Run the fixture client, plain or under `kernelcheck run`; returns (process, output)."""
    spec_path = tmp_path / f"{name}.json"
    out = tmp_path / f"{name}-out.json"
    spec_path.write_text(json.dumps({"launches": spec}))
    command = [sys.executable, str(CLIENTS / "fixture_client.py"), str(spec_path), str(out)]
    if under_shim:
        command = [sys.executable, "-m", "kernelcheck.cli", "run", *extra_args, "--", *command]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    result = json.loads(out.read_text()) if out.exists() else None
    return done, result
