"""Generated sweeps of the warp-collective instructions the other warp cases leave out, over one
block of four warps:

- redux.sync .add/.min/.max on .s32 and .u32 (PTX ISA 9.7.13.12: the add truncated to 32
  bits) and on .f32 with .abs and .NaN (sm_100a: "+0.0 > -0.0", NaN inputs ignored unless
  .NaN, canonical NaN when all are NaN);
- match.any.sync.b64 and match.all.sync.b64 (9.7.13.11: the mask of the lanes holding the
  same value; all: the member mask and true when every lane agrees, else 0 and false);
- movmatrix.sync.aligned.m8n8.trans.b16 (9.7.14.5.17), ldmatrix (9.7.14.5.15) and stmatrix
  (9.7.14.5.16) with .shared::cta: lane l holds elements (l / 4, 2 (l % 4)) and
  (l / 4, 2 (l % 4) + 1) of an 8x8 matrix of 16-bit elements (low half first); the transposed
  fragment of lane l is (2 (l % 4), l / 4) and (2 (l % 4) + 1, l / 4) (the layouts of the
  matrix/ldmatrix case, checked against hardware results).
"""

from __future__ import annotations

from tests.conformance.reference import fpops
from tests.conformance.reference.bits import signed, unsigned
from tests.conformance.reference.ieee import F32, NAN, canonical_nan, value_of
from tests.conformance.sweep import Form, Operand, Sweep, register

THREADS = 128


def value(i: int) -> int:
    return ((i * 0x2545F491) ^ (i << 11) ^ 0x80010002) & 0xFFFFFFFF


VALUES = tuple(f"{value(i):#x}" for i in range(THREADS))


def _warp(th) -> list[int]:
    base = th.i // 32 * 32
    return [value(base + k) for k in range(32)]


def _lane(th) -> int:
    return th.i % 32


def _element(words: list[int], row: int, col: int) -> int:
    """Element (row, col) of the 8x8 matrix whose fragments the lanes' words hold."""
    return (words[4 * row + col // 2] >> (16 * (col % 2))) & 0xFFFF


def _transposed(words: list[int], lane: int) -> int:
    g, t = lane // 4, lane % 4
    return _element(words, 2 * t, g) | _element(words, 2 * t + 1, g) << 16


_SETUP = """// %rd20: this warp's 512 bytes of shared memory; %rd21: this lane's word in it;
// %rd22: the start of row (lane % 8) of an 8x8 matrix of 16-byte rows; %rd23: the word of
// lane (lane + 5) % 32
mov.u32 %r20, %laneid;
shr.u32 %r21, %gt, 5;
mov.u64 %rd20, sbuf;
mul.wide.u32 %rd1, %r21, 512;
add.s64 %rd20, %rd20, %rd1;
mul.wide.u32 %rd1, %r20, 4;
add.s64 %rd21, %rd20, %rd1;
and.b32 %r22, %r20, 7;
mul.wide.u32 %rd1, %r22, 16;
add.s64 %rd22, %rd20, %rd1;
add.u32 %r22, %r20, 5;
and.b32 %r22, %r22, 31;
mul.wide.u32 %rd1, %r22, 4;
add.s64 %rd23, %rd20, %rd1;"""

warp = Sweep("warp", "gen_warp",
             "redux.sync on .s32/.u32, match.any.sync.b64, movmatrix, ldmatrix and stmatrix "
             "with .shared::cta (PTX ISA 9.7.13.12, 9.7.13.11, 9.7.14.5.15-17).",
             [Operand("a", "u32", VALUES)], block=THREADS,
             locals=f".shared .align 16 .b8 sbuf[{512 * THREADS // 32}];", setup=_SETUP)
warp.forms += [
    Form("u32", "redux.sync.add.s32 {d}, %a32, 0xffffffff;",
         lambda th: unsigned(sum(signed(v, 32) for v in _warp(th)), 32)),
    Form("u32", "redux.sync.add.u32 {d}, %a32, 0xffffffff;",
         lambda th: unsigned(sum(_warp(th)), 32)),
    Form("u32", "redux.sync.min.u32 {d}, %a32, 0xffffffff;", lambda th: min(_warp(th))),
    Form("u32", "redux.sync.min.s32 {d}, %a32, 0xffffffff;",
         lambda th: unsigned(min(signed(v, 32) for v in _warp(th)), 32)),
    Form("u32", "mov.b32 {d}, 0;\nsetp.lt.u32 %p1, %r20, 16;\n"
                "@%p1 redux.sync.max.u32 {d}, %a32, 0x0000ffff;",
         lambda th: max(_warp(th)[:16]) if _lane(th) < 16 else 0,
         note="executed by lanes 0..15 only, the lanes of the member mask"),
]


def _match_any(th) -> int:
    words = _warp(th)
    own = words[_lane(th)] & 3
    return sum(1 << k for k, w in enumerate(words) if w & 3 == own)


warp.forms.append(Form(
    "u32", "and.b32 %r1, %a32, 3;\ncvt.u64.u32 %rd1, %r1;\nshl.b64 %rd2, %rd1, 33;\n"
           "or.b64 %rd1, %rd1, %rd2;\nmatch.any.sync.b64 {d}, %rd1, 0xffffffff;", _match_any,
    note="match.any on four 64-bit values that differ in both words"))
warp.forms += [
    Form("u32", "movmatrix.sync.aligned.m8n8.trans.b16 {d}, %a32;",
         lambda th: _transposed(_warp(th), _lane(th))),
    Form("u32", "st.shared.b32 [%rd21], %a32;\nbar.warp.sync 0xffffffff;\n"
                "ldmatrix.sync.aligned.m8n8.x1.shared::cta.b16 {%r1}, [%rd22];\n"
                "bar.warp.sync 0xffffffff;\nmov.b32 {d}, %r1;",
         lambda th: _warp(th)[_lane(th)], note="ldmatrix of the matrix the lanes stored"),
    Form("u32", "st.shared.b32 [%rd21], %a32;\nbar.warp.sync 0xffffffff;\n"
                "ldmatrix.sync.aligned.m8n8.x1.trans.shared::cta.b16 {%r1}, [%rd22];\n"
                "bar.warp.sync 0xffffffff;\nmov.b32 {d}, %r1;",
         lambda th: _transposed(_warp(th), _lane(th))),
    Form("u32", "stmatrix.sync.aligned.m8n8.x1.shared::cta.b16 [%rd22], {%a32};\n"
                "bar.warp.sync 0xffffffff;\nld.shared.b32 {d}, [%rd23];\n"
                "bar.warp.sync 0xffffffff;",
         lambda th: _warp(th)[(_lane(th) + 5) % 32],
         note="stmatrix .x1, then a load of lane (lane + 5)'s word"),
]
# stmatrix .x4: matrix i (its rows' addresses from lanes 8i..8i+7, 128 bytes from the start
# of the last) holds register i = a xor i
for _i in range(4):
    warp.forms.append(Form(
        "u32", "and.b32 %r24, %r20, 7;\nshl.b32 %r24, %r24, 4;\nshr.u32 %r23, %r20, 3;\n"
               "shl.b32 %r23, %r23, 7;\nadd.u32 %r24, %r24, %r23;\ncvt.u64.u32 %rd2, %r24;\n"
               "add.s64 %rd2, %rd20, %rd2;\nxor.b32 %r5, %a32, 1;\nxor.b32 %r6, %a32, 2;\n"
               "xor.b32 %r7, %a32, 3;\n"
               "stmatrix.sync.aligned.m8n8.x4.shared::cta.b16 [%rd2], {%a32, %r5, %r6, %r7};\n"
               f"bar.warp.sync 0xffffffff;\nld.shared.b32 {{d}}, [%rd23+{128 * _i}];\n"
               "bar.warp.sync 0xffffffff;",
        lambda th, i=_i: _warp(th)[(_lane(th) + 5) % 32] ^ i,
        note=f"stmatrix .x4, then lane (lane + 5)'s word of matrix {_i}"))
register(warp)

match_all = Sweep("warp", "gen_match_all_b64",
                  "match.all.sync.b64 with and without a predicate destination (PTX ISA "
                  "9.7.13.11).", [Operand("a", "u32", VALUES)], block=THREADS)
match_all.forms += [
    Form("u32", "mov.b64 %rd1, 0x8000000100000002;\nmatch.all.sync.b64 {d}, %rd1, 0xffffffff;",
         lambda th: 0xFFFFFFFF, note="every lane agrees: the member mask"),
    Form("u32", "match.all.sync.b64 {d}, %a64, 0xffffffff;", lambda th: 0,
         note="the lanes disagree: 0"),
    Form("pred", "mov.b64 %rd1, 0x8000000100000002;\n"
                 "match.all.sync.b64 %r1|{d}, %rd1, 0xffffffff;", lambda th: 1),
    Form("pred", "match.all.sync.b64 %r1|{d}, %a64, 0xffffffff;", lambda th: 0),
]
register(match_all.split("gen_match_all_b64_pred", lambda f: "|" in f.code,
                         "match.all.sync.b64 with a predicate destination (PTX ISA 9.7.13.11)."))
register(match_all)

# -- redux.sync on .f32 -----------------------------------------------------------------


def fvalue(i: int) -> int:
    """Lane values: warp 0 numbers, warp 1 with a NaN, warp 2 with both zeros, warp 3 all
    NaN."""
    warp_, lane = divmod(i, 32)
    if warp_ == 3:
        return 0x7FC00000 | lane
    if warp_ == 1 and lane == 7:
        return 0x7FC00000
    if warp_ == 2 and lane in (3, 9):
        return 0x80000000 if lane == 3 else 0x00000000
    magnitude = 0x3F800000 + ((i * 0x9E37) & 0x7FFFFF) + (lane % 5) * 0x800000
    return magnitude | (0x80000000 if (i * 7) % 3 == 0 else 0)


FVALUES = tuple(f"{fvalue(i):#x}" for i in range(THREADS))


def _redux_f32(th, op: str, absolute: bool, nan: bool) -> int:
    base = th.i // 32 * 32
    words = [fvalue(base + k) for k in range(32)]
    if absolute:
        words = [fpops.absolute(w, F32) for w in words]
    if any(value_of(w, F32) is NAN for w in words) and (nan or all(
            value_of(w, F32) is NAN for w in words)):
        return canonical_nan(F32)
    numbers = [w for w in words if value_of(w, F32) is not NAN]
    best = numbers[0]
    for w in numbers[1:]:
        order = fpops.compare(w, best, F32)
        if order == "eq":  # +0.0 > -0.0
            pick = (w if (w >> 31) else best) if op == "min" else (best if w >> 31 else w)
        else:
            pick = w if (order == "lt") == (op == "min") else best
        best = pick
    return best


redux_f32 = Sweep("warp", "gen_redux_f32",
                  "redux.sync.min/max.f32 with .abs and .NaN (PTX ISA 9.7.13.12).",
                  [Operand("a", "u32", FVALUES)], block=THREADS, target="sm_100a")
for _op in ("min", "max"):
    for _abs in (False, True):
        for _nan in (False, True):
            _mods = (".abs" if _abs else "") + (".NaN" if _nan else "")
            redux_f32.forms.append(Form(
                "f32", f"redux.sync.{_op}{_mods}.f32 {{d}}, %a32, 0xffffffff;",
                lambda th, op=_op, a=_abs, n=_nan: _redux_f32(th, op, a, n)))
register(redux_f32)
