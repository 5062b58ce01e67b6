"""References of the video instructions (PTX ISA 9.7.11 "Video Instructions"), from the
pseudocode there: partSelectSignExtend picks a byte (.b0-.b3), a half (.h0, .h1) or the word
and extends it by the operand's type; the operation is computed without overflow; .sat clamps
to the destination type, otherwise the result is truncated to 32 bits; the secondary
operation (.add, .min, .max) combines the result with c. The SIMD forms (vadd2, vadd4, ...)
work per lane with the full mask (all lanes from the result, none from c) or accumulate
the lanes into c with .add."""

from __future__ import annotations

from tests.conformance.reference.bits import array, pyints, saturate, signed, unsigned
from tests.conformance.reference.registry import Inputs, reference

_PART = {"b0": (0, 8), "b1": (8, 8), "b2": (16, 8), "b3": (24, 8), "h0": (0, 16),
         "h1": (16, 16), None: (0, 32)}


def part(value: int, type_: str, sel: str | None = None) -> int:
    shift, width = _PART[sel]
    raw = (value >> shift) & ((1 << width) - 1)
    return signed(raw, width) if type_ == "s32" else raw


def finish(tmp: int, dtype: str, sat: bool) -> int:
    if sat:
        return unsigned(saturate(tmp, 32, dtype == "s32"), 32)
    return unsigned(tmp, 32)


def secondary(op: str, tmp: int, c: int, dtype: str) -> int:
    t = signed(tmp, 32) if dtype == "s32" else tmp
    cc = signed(c, 32) if dtype == "s32" else unsigned(c, 32)
    result = {"add": t + cc, "min": min(t, cc), "max": max(t, cc)}[op]
    return unsigned(result, 32)


def simd(a: int, b: int, c: int, lanes: int, op: str, atype: str, sat: bool,
         accumulate: bool) -> int:
    width = 32 // lanes
    va = [part_lane(a, k, width, atype) for k in range(lanes)]
    vb = [part_lane(b, k, width, atype) for k in range(lanes)]
    t = []
    for x, y in zip(va, vb, strict=True):
        if op == "add":
            r = x + y
        elif op == "min":
            r = min(x, y)
        elif op == "absdiff":
            r = abs(x - y)
        else:  # avrg: rounds half up for non-negative sums, down otherwise
            s = x + y
            r = (s + 1) >> 1 if s >= 0 else s >> 1
        if sat:
            r = saturate(r, width, atype == "s32")
        t.append(r)
    if accumulate:
        total = signed(c, 32) if atype == "s32" else c
        return unsigned(total + sum(t), 32)
    d = 0
    for k, r in enumerate(t):
        d |= unsigned(r, width) << (width * k)
    return d


def part_lane(value: int, k: int, width: int, type_: str) -> int:
    raw = (value >> (width * k)) & ((1 << width) - 1)
    return signed(raw, width) if type_ == "s32" else raw


def shift(a: int, n: int, left: bool, atype: str, mode: str) -> int:
    n = min(n, 32) if mode == "clamp" else n & 0x1F
    ta = part(a, atype)
    return unsigned(ta << n if left else ta >> n, 32)


@reference("video/video_select")
def video_select(inputs: Inputs) -> dict:
    a_s, b_s, _ = (pyints(v) for v in inputs.cross("a", "b", "c"))
    out: dict[str, list[int]] = {"o_add_b": [], "o_max_h": [], "o_absdiff_b": []}
    for a, b in zip(a_s, b_s, strict=True):
        out["o_add_b"].append(secondary(
            "add", finish(part(a, "u32", "b0") + part(b, "u32", "b1"), "u32", False), a, "u32"))
        out["o_max_h"].append(secondary(
            "max", finish(max(part(a, "s32", "h1"), part(b, "s32", "h0")), "s32", False), b,
            "s32"))
        out["o_absdiff_b"].append(finish(abs(part(a, "s32", "b3") - part(b, "s32", "b2")),
                                         "s32", True))
    return {k: array(v, "<u4") for k, v in out.items()}


@reference("video/video")
def video(inputs: Inputs) -> dict:
    a_s, b_s, c_s = (pyints(v) for v in inputs.cross("a", "b", "c"))
    out: dict[str, list[int]] = {}

    def add(name: str, value: int) -> None:
        out.setdefault(name, []).append(value)

    for a, b, n in zip(a_s, b_s, c_s, strict=True):
        add("o_add", finish(part(a, "u32") + part(b, "u32"), "u32", False))
        add("o_add_sat", finish(part(a, "s32") + part(b, "s32"), "s32", True))
        add("o_sub_sat", finish(part(a, "u32") - part(b, "u32"), "s32", True))
        add("o_absdiff", finish(abs(part(a, "u32") - part(b, "u32")), "u32", False))
        add("o_min", finish(min(part(a, "s32"), part(b, "s32")), "s32", False))
        add("o_max", finish(max(part(a, "u32"), part(b, "u32")), "u32", False))
        add("o_set", 1 if part(a, "u32") < part(b, "u32") else 0)
        add("o_set_add", secondary("add", 1 if part(a, "s32") >= part(b, "s32") else 0, a,
                                   "u32"))
        add("o_shl_clamp", shift(a, n, True, "u32", "clamp"))
        add("o_shl_wrap", shift(a, n, True, "u32", "wrap"))
        add("o_shr_clamp", shift(a, n, False, "s32", "clamp"))
        add("o_add2", simd(a, b, a, 2, "add", "u32", False, False))
        add("o_add2_sat", simd(a, b, a, 2, "add", "s32", True, False))
        add("o_min2_add", simd(a, b, b, 2, "min", "s32", False, True))
        add("o_add4_sat", simd(a, b, a, 4, "add", "u32", True, False))
        add("o_avrg4", simd(a, b, a, 4, "avrg", "s32", False, False))
        add("o_absdiff4_add", simd(a, b, b, 4, "absdiff", "u32", False, True))
    return {k: array(v, "<u4") for k, v in out.items()}

