#!/usr/bin/env python3
"""Regenerate the CUDA C cases of the conformance suite (tests/conformance/cases/cuda/).

For each tests/conformance/cuda/*.cu this script

1. compiles the file to PTX with nvcc (``-arch=sm_90 -O3 -fmad=false``): the CASE lines become
   kernels ``out[i] = fn(a[i], b[i])`` (see tests/conformance/cuda/conformance.h);
2. compiles the same file for the host with g++ (``-O2 -ffp-contract=off``) together with
   driver.cpp, which runs each case's function on the host;
3. draws the inputs of each case (edge values, then values from a fixed-seed generator,
   filtered by the case's domain so that the C code stays defined), runs the host program on
   them, and writes ``<file>.<case>.launch.json`` holding the inputs and, as ``expect``, the
   outputs the host computed.

The tests only read the committed PTX and launch files: nvcc and g++ are needed here only.
Run from the repository root: ``python scripts/build_conformance.py``.
"""

from __future__ import annotations

import json
import math
import random
import shutil
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ROOT / "tests" / "conformance" / "cuda"
CASES = ROOT / "tests" / "conformance" / "cases" / "cuda"
COUNT = 96  # elements per case: two blocks of 64 threads, the second partly idle
BLOCK = 64

#: C type -> (launch-file type, struct format)
C_TYPES = {
    "uint32_t": ("u32", "<I"), "int32_t": ("s32", "<i"), "uint64_t": ("u64", "<Q"),
    "int64_t": ("s64", "<q"), "float": ("f32", "<f"), "double": ("f64", "<d"),
}

_INT_EDGES = {
    "u32": [0, 1, 2, 3, 7, 9, 13, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0xFFFFFFFE, 0x12345678,
            0x80000001, 0x0000FFFF, 0x00010000, 100000],
    "u64": [0, 1, 2, 3, 7, 0xFFFFFFFF, 0x100000000, 0x7FFFFFFFFFFFFFFF, 0x8000000000000000,
            0xFFFFFFFFFFFFFFFF, 0x123456789ABCDEF0, 0xFFFFFFFF00000000],
}
_F32_EDGES = [0x00000000, 0x80000000, 0x3F800000, 0xBF800000, 0x7F800000, 0xFF800000,
              0x7FC00000, 0x00000001, 0x807FFFFF, 0x00800000, 0x7F7FFFFF, 0x3F000000,
              0x40200000, 0xC0200000, 0x3EAAAAAB, 0x4B800001]
_F64_EDGES = [0x0000000000000000, 0x8000000000000000, 0x3FF0000000000000, 0xBFF0000000000000,
              0x7FF0000000000000, 0xFFF0000000000000, 0x7FF8000000000000, 0x0000000000000001,
              0x7FEFFFFFFFFFFFFF, 0x3FE0000000000000, 0x4004000000000000, 0x3FD5555555555555]


def run(command: list[str], **kw) -> str:
    done = subprocess.run(command, capture_output=True, text=True, **kw)
    if done.returncode != 0:
        sys.exit(f"failed: {' '.join(command)}\n{done.stderr}")
    return done.stdout


def tool_versions() -> str:
    nvcc = run(["nvcc", "--version"]).strip().splitlines()[-1]
    gcc = run(["g++", "--version"]).splitlines()[0]
    return f"{nvcc}; {gcc}"


def draw(type_name: str, rng: random.Random, count: int) -> list:
    """Bit patterns (floats) or integers: the edge values, then random ones."""
    if type_name in ("u32", "s32"):
        values = list(_INT_EDGES["u32"]) + [rng.getrandbits(32) for _ in range(count)]
    elif type_name in ("u64", "s64"):
        values = list(_INT_EDGES["u64"]) + [rng.getrandbits(64) for _ in range(count)]
    elif type_name == "f32":
        values = list(_F32_EDGES)
        while len(values) < count:
            if rng.random() < 0.5:
                values.append(struct.unpack("<I", struct.pack("<f", rng.uniform(-300, 300)))[0])
            else:
                values.append(rng.getrandbits(32))
    else:
        values = list(_F64_EDGES)
        while len(values) < count:
            if rng.random() < 0.5:
                values.append(struct.unpack("<Q", struct.pack("<d", rng.uniform(-1e4, 1e4)))[0])
            else:
                values.append(rng.getrandbits(64))
    rng.shuffle(values)
    return values[:count]


def as_number(bits: int, type_name: str):
    if type_name == "f32":
        return struct.unpack("<f", struct.pack("<I", bits))[0]
    if type_name == "f64":
        return struct.unpack("<d", struct.pack("<Q", bits))[0]
    if type_name == "s32":
        return bits - (1 << 32) if bits >> 31 else bits
    if type_name == "s64":
        return bits - (1 << 64) if bits >> 63 else bits
    return bits


def allowed(domain: str, a, b) -> bool:
    """Whether the inputs keep the case's C code defined (see conformance.h)."""
    if domain == "any":
        return True
    if domain == "nonzero_b":
        return b != 0
    if domain == "sdiv":
        return b != 0 and not (a == -(1 << 31) and b == -1)
    if domain == "shift":
        return 0 <= b < 32
    if domain == "nonzero":
        return a != 0 and b != 0
    if domain == "finite":
        return math.isfinite(a)
    if domain == "small":
        return math.isfinite(a) and abs(a) < 1e6
    if domain == "int32":
        return math.isfinite(a) and -(2.0 ** 31) < a < 2.0 ** 31
    if domain == "uint32":
        return math.isfinite(a) and -1.0 < a < 2.0 ** 32
    if domain == "int64":
        return math.isfinite(a) and -(2.0 ** 63) < a < 2.0 ** 63
    raise ValueError(f"unknown domain {domain!r}")


def inputs_for(name: str, a_type: str, b_type: str | None, domain: str
               ) -> tuple[list[int], list[int] | None]:
    rng = random.Random(name)
    a_bits, b_bits = [], []
    while len(a_bits) < COUNT:
        for x in draw(a_type, rng, COUNT):
            y = draw(b_type, rng, 1)[0] if b_type else None
            if b_type and domain in ("nonzero_b", "sdiv", "shift"):
                y = {"shift": y % 32}.get(domain, y)
            a = as_number(x, a_type)
            b = as_number(y, b_type) if b_type else None
            if allowed(domain, a, b):
                a_bits.append(x)
                if b_type:
                    b_bits.append(y)
            if len(a_bits) == COUNT:
                break
    return a_bits, (b_bits if b_type else None)


def pack(values: list[int], type_name: str) -> bytes:
    width = {"u32": 4, "s32": 4, "f32": 4, "u64": 8, "s64": 8, "f64": 8}[type_name]
    return b"".join(v.to_bytes(width, "little") for v in values)


def literal(bits: int, type_name: str) -> int | str:
    """How a launch file writes the value: floats as exact bit patterns, integers plainly."""
    if type_name in ("f32", "f64"):
        return f"0x{bits:0{8 if type_name == 'f32' else 16}x}"
    return as_number(bits, type_name)


def build(source: Path, versions: str, scratch: Path) -> list[str]:
    stem = source.stem
    ptx = CASES / f"{stem}.ptx"
    run(["nvcc", "-ptx", "-arch=sm_90", "-O3", "-fmad=false", "-I", str(SOURCES),
         str(source), "-o", str(ptx)])
    driver = scratch / f"{stem}_driver"
    run(["g++", "-O2", "-std=c++17", "-ffp-contract=off", "-I", str(SOURCES), "-x", "c++",
         str(source), "-x", "c++", str(SOURCES / "driver.cpp"), "-o", str(driver), "-lm"])
    written = []
    for line in run([str(driver), "list"]).splitlines():
        name, out_c, a_c, b_c, domain = line.split()
        out_t, a_t = C_TYPES[out_c][0], C_TYPES[a_c][0]
        b_t = C_TYPES[b_c][0] if b_c != "-" else None
        a_bits, b_bits = inputs_for(name, a_t, b_t, domain)
        (scratch / "a.bin").write_bytes(pack(a_bits, a_t))
        files = [str(scratch / "a.bin")]
        if b_bits is not None:
            (scratch / "b.bin").write_bytes(pack(b_bits, b_t))
            files.append(str(scratch / "b.bin"))
        run([str(driver), "run", name, str(COUNT), *files, str(scratch / "out.bin")])
        out = (scratch / "out.bin").read_bytes()
        buffers = {"a": {"type": a_t, "values": [literal(v, a_t) for v in a_bits]}}
        params = [{"buffer": "out"}, {"buffer": "a"}]
        if b_bits is not None:
            buffers["b"] = {"type": b_t, "values": [literal(v, b_t) for v in b_bits]}
            params.append({"buffer": "b"})
        buffers["out"] = {"type": out_t, "count": COUNT, "fill": 0xAB}
        params.append({"type": "u32", "value": COUNT})
        expect = {"hex": out.hex()}
        if out_t in ("f32", "f64"):
            expect["nan"] = "any"  # NaN payloads differ between x86 and PTX
        document = {
            "format": "kernelcheck-launch",
            "version": 1,
            "comment": f"generated by scripts/build_conformance.py from "
                       f"tests/conformance/cuda/{source.name} ({versions}); expect holds "
                       f"what the host compiler's code computed; domain: {domain}",
            "kernel": name,
            "grid": [(COUNT + BLOCK - 1) // BLOCK],
            "block": [BLOCK],
            "buffers": buffers,
            "params": params,
            "outputs": ["out"],
            "expect": {"out": expect},
        }
        path = CASES / f"{stem}.{name}.launch.json"
        path.write_text(json.dumps(document, indent=1) + "\n")
        written.append(path.name)
    return written


def main() -> int:
    for tool in ("nvcc", "g++"):
        if shutil.which(tool) is None:
            sys.exit(f"{tool} not found: this script needs the CUDA toolkit and g++")
    CASES.mkdir(parents=True, exist_ok=True)
    for old in CASES.glob("*"):
        old.unlink()
    versions = tool_versions()
    with tempfile.TemporaryDirectory() as scratch:
        for source in sorted(SOURCES.glob("*.cu")):
            written = build(source, versions, Path(scratch))
            print(f"{source.name}: {len(written)} cases")
    return 0


if __name__ == "__main__":
    sys.exit(main())
