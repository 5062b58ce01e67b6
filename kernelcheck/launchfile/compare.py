"""Compare output buffers: against a launch file's expectations, or two backends' results.

Comparison is bit for bit unless an expectation gives a tolerance. A tolerance applies to the
elements of a floating-point type: ``ulp`` counts representable values between the two
(+0 and -0 are 0 apart), ``abs`` and ``rel`` bound the error; an element passes when any
given bound holds. Infinities must match exactly, and a NaN matches only a NaN (any NaN when
``nan="any"``, the same bits otherwise).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from kernelcheck.launchfile.spec import Expectation
from kernelcheck.launchfile.values import decode_values, format_value, type_width

__all__ = ["Mismatch", "check_expectation", "diff_outputs"]


@dataclass(frozen=True, slots=True)
class Mismatch:
    """One element of one buffer that differs: where, what was expected, what was found."""

    buffer: str
    index: int
    offset: int
    expected: str
    found: str

    def __str__(self) -> str:
        return (f"{self.buffer}[{self.index}] (byte {self.offset}): expected {self.expected}, "
                f"found {self.found}")


def check_expectation(expectation: Expectation, found: bytes) -> list[Mismatch]:
    """Every element of ``found`` that does not meet ``expectation``."""
    type_name = expectation.type
    width = type_width(type_name) if type_name else 1
    if len(found) != len(expectation.data):
        return [Mismatch(expectation.buffer, 0, 0, f"{len(expectation.data)} bytes",
                         f"{len(found)} bytes")]
    tolerant = bool(expectation.ulp or expectation.abs or expectation.rel
                    or expectation.nan == "any")
    out = []
    for index in range(len(found) // width):
        lo, hi = index * width, (index + 1) * width
        want, got = expectation.data[lo:hi], found[lo:hi]
        if want == got:
            continue
        if tolerant and _close(want, got, expectation):
            continue
        out.append(Mismatch(expectation.buffer, index, lo, _show(want, type_name),
                            _show(got, type_name)))
    return out


def diff_outputs(first: dict[str, bytes], second: dict[str, bytes],
                 types: dict[str, str | None]) -> list[Mismatch]:
    """Every element where two backends' outputs differ, bit for bit."""
    out = []
    for name in first:
        type_name = types.get(name)
        width = type_width(type_name) if type_name else 1
        a, b = first[name], second.get(name, b"")
        if len(a) != len(b):
            out.append(Mismatch(name, 0, 0, f"{len(a)} bytes", f"{len(b)} bytes"))
            continue
        for index in range(len(a) // width):
            lo, hi = index * width, (index + 1) * width
            if a[lo:hi] != b[lo:hi]:
                out.append(Mismatch(name, index, lo, _show(a[lo:hi], type_name),
                                    _show(b[lo:hi], type_name)))
    return out


def _show(data: bytes, type_name: str | None) -> str:
    bits = "0x" + data[::-1].hex()
    if not type_name:
        return bits
    value = decode_values(data, type_name)[0]
    return f"{format_value(value, type_name)} ({bits})"


def _close(want: bytes, got: bytes, expectation: Expectation) -> bool:
    type_name = expectation.type
    if type_name not in ("f16", "bf16", "f32", "f64"):
        return False
    a = decode_values(want, type_name)[0]
    b = decode_values(got, type_name)[0]
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b) and expectation.nan == "any"
    if math.isinf(a) or math.isinf(b):
        return a == b
    if expectation.ulp and _ulp_distance(want, got, type_name) <= expectation.ulp:
        return True
    if expectation.abs and abs(a - b) <= expectation.abs:
        return True
    return bool(expectation.rel and abs(a - b) <= expectation.rel * abs(a))


def _ulp_distance(want: bytes, got: bytes, type_name: str) -> int:
    """Representable values between two floats: bits mapped onto one ordered integer line."""
    bits = len(want) * 8

    def ordered(data: bytes) -> int:
        raw = int.from_bytes(data, "little")
        sign = raw >> (bits - 1)
        magnitude = raw & ((1 << (bits - 1)) - 1)
        return -magnitude if sign else magnitude

    return abs(ordered(want) - ordered(got))

