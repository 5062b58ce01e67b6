"""Read ZLUDA's PTX test list (ptx/src/test/spirv_run/mod.rs) into launch files.

ZLUDA (github.com/vosen/ZLUDA) tests each PTX file of that directory with a macro line in
mod.rs: ``test_ptx!(name, [inputs], [outputs])`` launches kernel ``name`` on one thread with
the parameters (input pointer, output pointer); ``test_ptx_warp!(name, [outputs])`` launches
64 threads with the output pointer as first parameter; every launch has 1024 bytes of dynamic
shared memory and a zero-filled output buffer, and its outputs must equal the list. The
inputs and outputs are Rust literals (``0xFFu32``, ``-1i32``, ``f32::NAN``,
``half::f16::from_f32(3.14)``, ``u64::max_value()``, ...), typed by a suffix or, when
untyped, by the other elements of the list.

This module parses those lines (without running any Rust) into launch documents for
``kernelcheck emulate``; the PTX files are used as they are.
"""

from __future__ import annotations

import math
import re
import struct
from dataclasses import dataclass
from pathlib import Path

__all__ = ["ZludaTest", "read_mod_rs", "launch_document"]

_RUST_TYPES = {"u8": "u8", "u16": "u16", "u32": "u32", "u64": "u64", "i8": "s8", "i16": "s16",
               "i32": "s32", "i64": "s64", "f32": "f32", "f64": "f64", "f16": "f16"}
_MACROS = ("test_ptx_with_32", "test_ptx_warp", "test_ptx")


@dataclass(frozen=True)
class ZludaTest:
    """One test line of mod.rs: the kernel (and file) name, its inputs and outputs."""

    name: str
    inputs: tuple[tuple[str, object], ...] | None  # (type, value) pairs; None: no input
    outputs: tuple[tuple[str, object], ...] | None  # None: the test checks no output
    threads: int


class RustLiteralError(ValueError):
    """A literal of mod.rs this reader does not understand."""


def read_mod_rs(path: Path) -> tuple[list[ZludaTest], list[tuple[str, str]]]:
    """The tests of a mod.rs, and (name, reason) for the lines that could not be read."""
    text = _strip_comments(path.read_text())
    tests, problems = [], []
    for macro, body in _macro_calls(text):
        parts = _split_top(body)
        name = parts[0].strip()
        try:
            if macro == "test_ptx_warp":
                if len(parts) < 2:
                    tests.append(ZludaTest(name, None, None, 64))
                    continue
                tests.append(ZludaTest(name, None, _array(parts[1]), 64))
            elif len(parts) >= 3:
                tests.append(ZludaTest(name, _array(parts[1]), _array(parts[2]), 1))
            else:
                tests.append(ZludaTest(name, None, None, 1))
        except RustLiteralError as error:
            problems.append((name, str(error)))
    return tests, problems


def launch_document(test: ZludaTest, params: int) -> dict:
    """The launch file of ``test`` for a kernel taking ``params`` parameters."""
    buffers: dict = {}
    order = []
    if test.inputs is not None:
        buffers["input"] = {"hex": _pack(test.inputs).hex()}
        order.append("input")
    size = len(_pack(test.outputs or ()))
    buffers["output"] = {"size": max(size, 1)}
    order.append("output")
    if test.inputs is None:
        order = ["output", "output"]  # ZLUDA passes the output pointer twice
    document = {
        "format": "kernelcheck-launch",
        "version": 1,
        "kernel": test.name,
        "grid": [1],
        "block": [test.threads],
        "shared_bytes": 1024,
        "buffers": buffers,
        "params": [{"buffer": b} for b in order[:params]],
        "outputs": ["output"],
    }
    if test.outputs:
        expect: dict = {"hex": _pack(test.outputs).hex()}
        types = {t for t, _ in test.outputs}
        if len(types) == 1 and types <= {"f32", "f64", "f16"}:
            expect = {"type": types.pop(), "hex": expect["hex"], "nan": "any"}
        document["expect"] = {"output": expect}
    return document


# -- parsing ---------------------------------------------------------------------------------

def _strip_comments(text: str) -> str:
    return re.sub(r"//[^\n]*", "", text)


def _macro_calls(text: str):
    """(macro, argument text) of every top-level test macro call."""
    pattern = re.compile(r"^\s*(" + "|".join(_MACROS) + r")!\s*\(", re.M)
    for match in pattern.finditer(text):
        start = match.end()
        depth, index = 1, start
        while depth and index < len(text):
            depth += {"(": 1, ")": -1}.get(text[index], 0)
            index += 1
        yield match.group(1), text[start:index - 1]


def _split_top(text: str) -> list[str]:
    parts, depth, current = [], 0, []
    for char in text:
        if char in "([":
            depth += 1
        elif char in ")]":
            depth -= 1
        if char == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    if "".join(current).strip():
        parts.append("".join(current))
    return parts


def _array(text: str) -> tuple[tuple[str, object], ...]:
    text = text.strip()
    if not (text.startswith("[") and text.endswith("]")):
        raise RustLiteralError(f"not an array literal: {text[:40]!r}")
    elements = [e.strip() for e in _split_top(text[1:-1]) if e.strip()]
    parsed = [_literal(e) for e in elements]
    known = [t for t, _ in parsed if t is not None]
    default = known[0] if known else None
    out = []
    for type_name, value in parsed:
        if type_name is None:
            if default is None:
                default = "f64" if isinstance(value, float) else "s32"
            type_name = default
        out.append((type_name, value))
    return tuple(out)


_CONSTANTS = {
    "f32::NAN": ("f32", math.nan), "f64::NAN": ("f64", math.nan),
    "f32::INFINITY": ("f32", math.inf), "f32::NEG_INFINITY": ("f32", -math.inf),
    "f64::INFINITY": ("f64", math.inf), "f64::NEG_INFINITY": ("f64", -math.inf),
    "std::f32::consts::PI": ("f32", math.pi), "half::f16::NAN": ("f16", math.nan),
    "half::f16::INFINITY": ("f16", math.inf), "half::f16::NEG_INFINITY": ("f16", -math.inf),
}
_NUMBER = re.compile(r"^(-?)(0x[0-9a-fA-F_]+|0b[01_]+|[0-9][0-9_]*(?:\.[0-9_]*)?(?:e-?\d+)?)"
                     r"(u8|u16|u32|u64|i8|i16|i32|i64|f32|f64)?$")


def _literal(text: str) -> tuple[str | None, object]:
    """(type or None when untyped, value) of one Rust expression of the test lists."""
    text = text.strip()
    if "/" in text:  # a quotient of two literals, e.g. std::f32::consts::PI / 2f32
        left, right = (_literal(t) for t in text.split("/", 1))
        return left[0] or right[0], left[1] / right[1]
    if text in _CONSTANTS:
        return _CONSTANTS[text]
    match = re.fullmatch(r"(u8|u16|u32|u64|i8|i16|i32|i64)::(MAX|MIN|max_value\(\)|min_value\(\))",
                         text)
    if match:
        type_name = _RUST_TYPES[match.group(1)]
        bits = int(match.group(1)[1:])
        signed = match.group(1)[0] == "i"
        high = "MAX" in match.group(2) or "max" in match.group(2)
        value = ((1 << (bits - 1)) - 1 if signed else (1 << bits) - 1) if high else (
            -(1 << (bits - 1)) if signed else 0)
        return type_name, value
    match = re.fullmatch(r"(f32|f64)::from_bits\((.+)\)", text)
    if match:
        bits = _literal(match.group(2))[1]
        fmt = ("<I", "<f") if match.group(1) == "f32" else ("<Q", "<d")
        return match.group(1), struct.unpack(fmt[1], struct.pack(fmt[0], bits))[0]
    match = re.fullmatch(r"half::f16::(from_f32|from_f64|from_bits)\((.+)\)", text)
    if match:
        value = _literal(match.group(2))[1]
        if match.group(1) == "from_bits":
            return "f16", _Bits(int(value), 2)
        return "f16", float(value)
    if text.endswith(".to_bits()"):
        type_name, value = _literal(text[: -len(".to_bits()")])
        width = {"f16": 2, "f32": 4, "f64": 8}[type_name]
        return {2: "u16", 4: "u32", 8: "u64"}[width], _Bits(_pack([(type_name, value)]), width)
    match = _NUMBER.match(text)
    if not match:
        raise RustLiteralError(f"unknown literal {text!r}")
    sign, digits, suffix = match.groups()
    digits = digits.replace("_", "")
    if digits.startswith(("0x", "0b")):
        value: object = int(digits, 0)
    elif "." in digits or "e" in digits:
        value = float(digits)
    else:
        value = int(digits)
    if sign:
        value = -value  # type: ignore[operator]
    type_name = _RUST_TYPES.get(suffix) if suffix else None
    if type_name in ("f32", "f64") and isinstance(value, int):
        value = float(value)
    return type_name, value


@dataclass(frozen=True)
class _Bits:
    """A raw bit pattern (from ``from_bits``/``to_bits``)."""

    value: int | bytes
    width: int


def _pack(values) -> bytes:
    out = bytearray()
    for type_name, value in values:
        if isinstance(value, _Bits):
            raw = value.value
            out += raw if isinstance(raw, bytes) else raw.to_bytes(value.width, "little")
            continue
        if type_name == "f16":
            import numpy as np

            out += np.array([value], dtype="<f2").tobytes()
        elif type_name in ("f32", "f64"):
            out += struct.pack("<f" if type_name == "f32" else "<d", value)
        else:
            width = int(type_name[1:]) // 8
            out += (int(value) % (1 << (8 * width))).to_bytes(width, "little")
    return bytes(out)
