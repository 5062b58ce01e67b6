"""Entries of the emulator's dispatch table that no valid PTX instruction has.

The dispatch table (``kernelcheck.emu.dispatch_entries()``) is built as cross products of an
opcode's types and modifiers, and some of its (opcode, type, modifier) entries name forms the
PTX ISA does not define: ``setp.lt.b32``, ``cvt.rn.f32.f16``, ``st.const``. No conformance case
can hold them (a case is PTX that NVIDIA's toolchain accepts), so the coverage test leaves
them out, each by a :class:`Rule` that says which ISA rule excludes it. Each rule carries
probe instructions of the excluded shape; ``python -m tests.conformance.generate --ptxas``
assembles every probe and fails unless ptxas rejects it, so a rule that excludes valid PTX
does not go unnoticed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["Rule", "RULES", "excluded"]

Entry = tuple[str, str, str]

_INTS = ("u8", "s8", "u16", "s16", "u32", "s32", "u64", "s64")
_BITS = {"u8": 8, "s8": 8, "u16": 16, "s16": 16, "u32": 32, "s32": 32, "u64": 64, "s64": 64}
_FLOAT_RANK = {"f16": 16, "bf16": 16, "f32": 32, "f64": 64}


@dataclass(frozen=True)
class Rule:
    """A class of entries no PTX instruction has: why (the ISA's rule), which entries, and
    instructions of that shape that ptxas must reject (registers: %h .b16, %r .b32, %rd .b64,
    %b .b8, %p .pred, as in the generator's probe kernel)."""

    why: str
    test: Callable[[str, str, str], bool]
    probes: tuple[str, ...]
    target: str = "sm_90a"


def _range(t: str) -> tuple[int, int]:
    bits = _BITS[t]
    return (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if t[0] == "s" else (0, (1 << bits) - 1)


def _cvt_types(types: str) -> tuple[str, str] | None:
    parts = types.split(".")
    return (parts[0], parts[1]) if len(parts) == 2 else None


def _cvt_sat_cannot_saturate(op: str, types: str, mod: str) -> bool:
    pair = _cvt_types(types)
    if op != "cvt" or mod != "sat" or pair is None or not all(p in _BITS for p in pair):
        return False
    (dlo, dhi), (slo, shi) = _range(pair[0]), _range(pair[1])
    return dlo <= slo and shi <= dhi


def _cvt_rounding_without_loss(op: str, types: str, mod: str) -> bool:
    pair = _cvt_types(types)
    if op != "cvt" or mod not in ("rn", "rz", "rm", "rp") or pair is None:
        return False
    d, s = pair
    if d not in _FLOAT_RANK or s not in _FLOAT_RANK or "bf16" in pair and d != s:
        return False
    return _FLOAT_RANK[d] >= _FLOAT_RANK[s]


def _cvt_ftz_without_f32(op: str, types: str, mod: str) -> bool:
    pair = _cvt_types(types)
    return (op == "cvt" and mod == "ftz" and pair is not None and "f32" not in pair
            and all(p in _BITS or p in _FLOAT_RANK for p in pair))


def _cvt_sat_bf16(op: str, types: str, mod: str) -> bool:
    pair = _cvt_types(types)
    return op == "cvt" and mod == "sat" and pair is not None and "bf16" in pair


def _compare_source(op: str, types: str) -> str | None:
    if op == "setp":
        return types
    if op == "set" and "." in types:
        return types.split(".")[1]
    return None


def _bit_type_order(op: str, types: str, mod: str) -> bool:
    source = _compare_source(op, types)
    return (source in ("b16", "b32", "b64")
            and mod in ("lt", "le", "gt", "ge", "lo", "ls", "hi", "hs"))


def _signed_unsigned_order(op: str, types: str, mod: str) -> bool:
    source = _compare_source(op, types)
    return source in ("s16", "s32", "s64") and mod in ("lo", "ls", "hi", "hs")


def _compare_ftz(op: str, types: str, mod: str) -> bool:
    source = _compare_source(op, types)
    return source in ("f64", "bf16", "bf16x2") and mod == "ftz"


_MEMORY = ("ld", "st", "ldu")
_NARROW = ("b8", "u8", "s8", "b16", "u16", "s16")
_WIDE = ("b64", "u64", "s64", "f64")


def _l2_eviction_narrow(op: str, types: str, mod: str) -> bool:
    return op in ("ld", "st") and types in _NARROW and mod.startswith("L2::evict_")


def _store_prefetch(op: str, types: str, mod: str) -> bool:
    return op == "st" and mod in ("L2::64B", "L2::128B", "L2::256B")


def _store_const_or_entry(op: str, types: str, mod: str) -> bool:
    return op == "st" and mod in ("const", "param::entry")


def _ldu_v4_wide(op: str, types: str, mod: str) -> bool:
    return op == "ldu" and types in _WIDE and mod == "v4"


RULES: tuple[Rule, ...] = (
    Rule("setp/set on a bit-size type compare with eq and ne only (PTX ISA 9.7.4.1, 9.7.4.2: "
         "the integer comparison operators of each type)", _bit_type_order,
         ("setp.lt.b32 %p1, %r0, %r1;", "setp.hi.b64 %p1, %rd0, %rd1;",
          "set.ge.u32.b16 %r3, %h0, %h1;")),
    Rule("setp/set: lo, ls, hi, hs are the unsigned comparisons; signed types take eq..ge "
         "(PTX ISA 9.7.4.2)", _signed_unsigned_order,
         ("setp.lo.s32 %p1, %r0, %r1;", "set.hs.f32.s64 %r3, %rd0, %rd1;")),
    Rule("setp/set .ftz applies to .f32, .f16 and .f16x2 sources only (PTX ISA 9.7.4.1, "
         "9.7.4.2, 9.7.4.5, 9.7.4.6)", _compare_ftz,
         ("setp.lt.ftz.f64 %p1, %rd0, %rd1;", "set.lt.ftz.u32.f64 %r3, %rd0, %rd1;",
          "setp.lt.ftz.bf16 %p1, %h0, %h1;", "set.lt.ftz.u32.bf16x2 %r3, %r0, %r1;")),
    Rule("cvt: floating-point rounding is illegal where the conversion loses no precision "
         "(a float to a wider float or to its own type; PTX ISA 9.7.9.21, \"Floating-point "
         "rounding is required for float-to-float conversions that result in loss of "
         "precision ... illegal in all other instances\")", _cvt_rounding_without_loss,
         ("cvt.rn.f32.f16 %r3, %h0;", "cvt.rz.f64.f32 %rd3, %r0;", "cvt.rm.f32.f32 %r3, %r0;",
          "cvt.rp.bf16.bf16 %h3, %h0;")),
    Rule("cvt .ftz flushes single-precision values: it needs an .f32 source or destination "
         "(PTX ISA 9.7.9.21, \"Subnormal numbers\")", _cvt_ftz_without_f32,
         ("cvt.rzi.ftz.s32.f64 %r3, %rd0;", "cvt.ftz.f64.f64 %rd3, %rd0;",
          "cvt.rn.ftz.bf16.f16 %h3, %h0;", "cvt.ftz.f16.f16 %h3, %h0;")),
    Rule("cvt .sat between integer types where the source's range lies inside the "
         "destination's: there is nothing to saturate and ptxas rejects the modifier "
         "(PTX ISA 9.7.9.21, \"Saturation modifier\")", _cvt_sat_cannot_saturate,
         ("cvt.sat.s32.s16 %r3, %h0;", "cvt.sat.u64.u32 %rd3, %r0;", "cvt.sat.u8.u8 %h3, %h0;")),
    Rule("cvt .sat does not apply to conversions to or from .bf16 (PTX ISA 9.7.9.21: the "
         ".bf16 conversions take .relu and .satfinite)", _cvt_sat_bf16,
         ("cvt.rn.sat.bf16.f32 %h3, %r0;", "cvt.sat.f32.bf16 %r3, %h0;",
          "cvt.rzi.sat.s32.bf16 %r3, %h0;")),
)


def _atomic_f32_min_max(op: str, types: str, mod: str) -> bool:
    return op in ("atom", "red") and types == "f32" and mod in ("min", "max")


def _atomic_s64_add(op: str, types: str, mod: str) -> bool:
    return op in ("atom", "red") and types == "s64" and mod == "add"


def _atomic_b16_hint(op: str, types: str, mod: str) -> bool:
    return op == "atom" and types == "b16" and mod == "L2::cache_hint"


def _cvta_u32(op: str, types: str, mod: str) -> bool:
    return op == "cvta" and types == "u32"


def _bar_aligned(op: str, types: str, mod: str) -> bool:
    return op == "bar" and mod == "aligned"


def _reduction_sync(op: str, types: str, mod: str) -> bool:
    return op in ("bar", "barrier") and types in ("u32", "pred") and mod == "sync"


def _mma_f16_d_f32_c(op: str, types: str, mod: str) -> bool:
    return op == "mma" and types == "f16.f16.f16.f32"


def _mma_m16n8_mixed(op: str, types: str, mod: str) -> bool:
    return (op == "mma" and types == "f32.f16.f16.f16"
            and mod in ("m16n8k8", "m16n8k16"))


RULES += (
    Rule("mma with an .f32 C needs an .f32 D (PTX ISA 9.7.14.5.14: the .f16 forms' "
         ".dtype/.ctype pairs; ptxas: \".dtype must be '.f32' when .ctype is '.f32'\")",
         _mma_f16_d_f32_c,
         ("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f32 {%r0, %r1}, "
          "{%r0, %r1, %r0, %r1}, {%r0, %r1}, {%r0, %r1, %r0, %r1};",)),
    Rule("mma .m16n8k8/.m16n8k16 on .f16 take a D of C's type; an .f32 D with an .f16 C "
         "exists for .m8n8k4 only (PTX ISA 9.7.14.5.14)", _mma_m16n8_mixed,
         ("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f16 {%r0, %r1, %r0, %r1}, "
          "{%r0, %r1, %r0, %r1}, {%r0, %r1}, {%r0, %r1};",)),
)

RULES += (
    Rule("bar takes no .aligned: bar{.cta}.sync is barrier{.cta}.sync.aligned, and bar.red is "
         "always aligned (PTX ISA 9.7.13.1)", _bar_aligned,
         ("bar.sync.aligned 0;", "bar.red.popc.aligned.u32 %r3, 1, %p0;")),
    Rule("the reductions of bar/barrier are .red, not .sync: barrier{.cta}.red.op{.aligned}."
         "type d, a{, b}, {!}c (PTX ISA 9.7.13.1); a .u32 or .pred type names a reduction",
         _reduction_sync,
         ("barrier.red.sync.popc.u32 %r3, 1, %p0;", "bar.red.sync.and.pred %p1, 1, %p0;")),
)

RULES += (
    Rule("cvta .u32 converts 32-bit addresses: \"the source and destination addresses must be "
         "the same size\" as the program's (PTX ISA 9.7.9.20), and ptxas no longer assembles "
         "32-bit addressing (\"32-Bit compilation is no longer supported\")", _cvta_u32,
         ("cvta.shared.u32 %r3, %r0;", "cvta.to.global.u32 %r3, %r0;")),
)

RULES += (
    Rule("atom/red .min and .max are integer operations, and floating-point ones only on the "
         "half types in vector form: there is no .min/.max.f32 (PTX ISA 9.7.12.5, 9.7.12.6)",
         _atomic_f32_min_max,
         ("atom.global.min.f32 %r3, [%rd2], %r0;", "red.global.max.f32 [%rd2], %r0;")),
    Rule("atom/red .add takes .u32, .s32, .u64 and the float types, not .s64 (PTX ISA "
         "9.7.12.5, 9.7.12.6; a 64-bit two's-complement add is .u64)", _atomic_s64_add,
         ("atom.global.add.s64 %rd3, [%rd2], %rd0;", "red.global.add.s64 [%rd2], %rd0;")),
    Rule("atom on .b16 is .cas only, and .cas takes no cache policy (PTX ISA 9.7.12.5 "
         "syntax: atom.cas.b16 d, [a], b, c)", _atomic_b16_hint,
         ("atom.global.cas.L2::cache_hint.b16 %h3, [%rd2], %h0, %h1, %rd1;",)),
)

RULES += (
    Rule("ld/st .L2::evict_normal/_first/_last apply to 256-bit accesses only (.v8 of a 32-bit "
         "type, .v4 of a 64-bit type; PTX ISA 9.7.9.8, 9.7.9.10 \"Qualifier "
         ".level2::eviction_priority is supported if ...\"): 8- and 16-bit types cannot have "
         "them", _l2_eviction_narrow,
         ("ld.global.L2::evict_first.u8 %h3, [%rd2];",
          "st.global.L2::evict_last.v8.b16 [%rd2], {%h0, %h0, %h0, %h0, %h0, %h0, %h0, %h0};"),
         target="sm_100a"),
    Rule("st has no prefetch size: .L2::64B/128B/256B are .level::prefetch_size of ld "
         "(PTX ISA 9.7.9.10 syntax)", _store_prefetch,
         ("st.global.L2::128B.b32 [%rd2], %r0;",)),
    Rule("st cannot write .const memory or kernel parameters: \"Stores to const memory are "
         "illegal\" and st's state spaces are .global, .local, .param{::func}, .shared "
         "(PTX ISA 9.7.9.10)", _store_const_or_entry,
         ("st.const.b32 [%rd2], %r0;", "st.param::entry.b32 [out], %r0;")),
    Rule("ldu vectors hold at most 128 bits: no .v4 of 64-bit elements (PTX ISA 9.7.9.9; "
         "ptxas: \"Vector type too large, exceeds 128 bit limit\")", _ldu_v4_wide,
         ("ldu.global.v4.b64 {%rd0, %rd1, %rd2, %rd3}, [%rd2];",)),
)


def excluded(entry: Entry) -> Rule | None:
    """The rule that excludes ``entry``, or None when some valid instruction has it."""
    for rule in RULES:
        if rule.test(*entry):
            return rule
    return None
