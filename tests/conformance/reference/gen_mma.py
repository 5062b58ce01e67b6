"""Generated sweeps of mma.sync (PTX ISA 9.7.14.5.14) in every shape and type combination the
emulator runs: .f16 and .bf16 (m16n8k8, m16n8k16, with .f16 or .f32 accumulators), .tf32
(m16n8k4, m16n8k8), .f64 (m8n8k4), .s8/.u8 (m8n8k16, m16n8k16, m16n8k32, with and without
.satfinite) and .e4m3/.e5m2 (m16n8k32).

One warp; each lane's operand row holds its fragment registers of A, B and C exactly as the
ISA's fragment layouts (9.7.14.5.1-9.7.14.5.10) place the matrices' elements, and the lane
stores its D fragment. The reference reads every lane's row, puts the elements back into the
matrices through the same layouts, computes D = A B + C exactly and takes this lane's D
fragment. The elements are small integers, so every product and sum is exact in the
accumulator's format and the result does not depend on the order of the additions (which the
ISA leaves open). Integer accumulation wraps modulo 2^32 and, with .satfinite, saturates to
the .s32 range. With g = lane / 4 and t = lane % 4, element i of each fragment sits at:
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

from tests.conformance.reference.bits import saturate, signed, unsigned
from tests.conformance.reference.ieee import BF16, E4M3, E5M2, F16, F32, F64, round_to, value_of
from tests.conformance.sweep import Form, Operand, Sweep, register

Position = Callable[[int, int, int], tuple[int, int]]


@dataclass(frozen=True)
class Fragment:
    """``count`` elements of ``bits`` bits; element i of lane (g, t) is at position(i, g, t)."""

    count: int
    bits: int
    position: Position

    @property
    def words(self) -> int:
        return self.count * self.bits // 32


# (shape, family) -> (A fragment, B fragment); family: "16" (f16, bf16), "tf32", "f64", "8"
FRAGMENTS: dict[tuple[str, str], tuple[Fragment, Fragment]] = {
    ("m16n8k16", "16"): (
        Fragment(8, 16, lambda i, g, t: (g + 8 * ((i >> 1) & 1), 2 * t + (i & 1) + 8 * (i >> 2))),
        Fragment(4, 16, lambda i, g, t: (2 * t + (i & 1) + 8 * (i >> 1), g))),
    ("m16n8k8", "16"): (
        Fragment(4, 16, lambda i, g, t: (g + 8 * (i >> 1), 2 * t + (i & 1))),
        Fragment(2, 16, lambda i, g, t: (2 * t + i, g))),
    ("m16n8k8", "tf32"): (
        Fragment(4, 32, lambda i, g, t: (g + 8 * (i & 1), t + 4 * (i >> 1))),
        Fragment(2, 32, lambda i, g, t: (t + 4 * i, g))),
    ("m16n8k4", "tf32"): (
        Fragment(2, 32, lambda i, g, t: (g + 8 * i, t)),
        Fragment(1, 32, lambda i, g, t: (t, g))),
    ("m8n8k4", "f64"): (
        Fragment(1, 64, lambda i, g, t: (g, t)),
        Fragment(1, 64, lambda i, g, t: (t, g))),
    ("m8n8k16", "8"): (
        Fragment(4, 8, lambda i, g, t: (g, 4 * t + i)),
        Fragment(4, 8, lambda i, g, t: (4 * t + i, g))),
    ("m16n8k16", "8"): (
        Fragment(8, 8, lambda i, g, t: (g + 8 * (i >> 2), 4 * t + (i & 3))),
        Fragment(4, 8, lambda i, g, t: (4 * t + i, g))),
    ("m16n8k32", "8"): (
        Fragment(16, 8, lambda i, g, t: (g + 8 * ((i >> 2) & 1), 4 * t + (i & 3) + 16 * (i >> 3))),
        Fragment(8, 8, lambda i, g, t: (4 * t + (i & 3) + 16 * (i >> 2), g))),
}

# mma.m8n8k4 on .f16 (9.7.14.5.1) is four independent products, lanes 4q..4q+3 and
# 16+4q..16+4q+3 holding product q; the reference lays product q out as the diagonal block q
# of 32x32 matrices (A 32x4, B 4x32), whose other blocks it never reads.


def _quad(g: int, t: int) -> tuple[int, int]:
    """(8 q, the row offset of the lane within product q: lane % 4, plus 4 for lanes 16..)."""
    lane = 4 * g + t
    return 8 * ((lane >> 2) & 3), (4 if lane >= 16 else 0)


FRAGMENTS[("m8n8k4", "16")] = (
    Fragment(4, 16, lambda i, g, t: (_quad(g, t)[0] + t + _quad(g, t)[1], i)),
    Fragment(4, 16, lambda i, g, t: (i, _quad(g, t)[0] + t + _quad(g, t)[1])))

#: C and D: (shape, family, element bits) -> fragment
ACCUMULATORS = {
    ("m16n8", 32): Fragment(4, 32, lambda i, g, t: (g + 8 * (i >> 1), 2 * t + (i & 1))),
    ("m16n8", 16): Fragment(4, 16, lambda i, g, t: (g + 8 * (i >> 1), 2 * t + (i & 1))),
    ("m8n8", 64): Fragment(2, 64, lambda i, g, t: (g, 2 * t + i)),
    ("m8n8", 32): Fragment(2, 32, lambda i, g, t: (g, 2 * t + i)),
    ("m8n8k4.16", 16): Fragment(8, 16, lambda i, g, t: (
        _quad(g, t)[0] + t + _quad(g, t)[1], _quad(g, t)[0] + i)),
    ("m8n8k4.16", 32): Fragment(8, 32, lambda i, g, t: (
        _quad(g, t)[0] + ((4 * g + t) & 1) + (i & 2) + _quad(g, t)[1],
        _quad(g, t)[0] + (i & 4) + ((4 * g + t) & 2) + (i & 1))),
}


def _accumulator_key(shape: str, family: str) -> str:
    return "m8n8k4.16" if (shape, family) == ("m8n8k4", "16") else shape[:shape.index("k")]

__doc__ += "\n".join(
    f"    {shape} {family:>4}: A[i] at " + ", ".join(
        str(a.position(i, 0, 0)).replace(" ", "") for i in range(a.count)) + " (g = t = 0)"
    for (shape, family), (a, _b) in FRAGMENTS.items())

_FORMATS = {"f16": F16, "bf16": BF16, "tf32": F32, "f32": F32, "f64": F64, "e4m3": E4M3,
            "e5m2": E5M2}
_BITS = {"f16": 16, "bf16": 16, "tf32": 32, "f32": 32, "f64": 64, "e4m3": 8, "e5m2": 8,
         "s8": 8, "u8": 8, "s32": 32}


def _dims(shape: str, family: str = "") -> tuple[int, int, int]:
    if (shape, family) == ("m8n8k4", "16"):
        return 32, 32, 4
    m, rest = shape[1:].split("n")
    n, k = rest.split("k")
    return int(m), int(n), int(k)


def _encode(value: int, type_name: str) -> int:
    if type_name in ("s8", "u8", "s32"):
        return unsigned(value, _BITS[type_name])
    fmt = _FORMATS[type_name]
    return round_to(Fraction(value), fmt)


def _decode(bits: int, type_name: str):
    if type_name in ("s8", "s32"):
        return signed(bits, _BITS[type_name])
    if type_name == "u8":
        return bits
    if type_name == "tf32":
        bits &= ~0x1FFF  # the 13 low bits of a .tf32 operand are not read
    return value_of(bits, _FORMATS[type_name])


class _Random:
    """A small deterministic generator of matrix elements (the inputs are the launch file's;
    this only chooses them)."""

    def __init__(self, seed: int) -> None:
        self.state = seed

    def pick(self, choices: tuple[int, ...]) -> int:
        self.state = (self.state * 6364136223846793005 + 1442695040888963407) % (1 << 64)
        return choices[(self.state >> 33) % len(choices)]


@dataclass
class Operands:
    """The words of every lane's row: A, B, then each accumulator type's C."""

    family: str
    a_type: str
    b_type: str
    a: Fragment
    b: Fragment
    accumulators: dict[str, Fragment]    # C type -> fragment

    def layout(self) -> list[tuple[str, Fragment]]:
        parts = [("A", self.a), ("B", self.b)]
        parts += [(f"C.{t}", f) for t, f in self.accumulators.items()]
        return parts

    def offsets(self) -> dict[str, int]:
        out, at = {}, 0
        for name, fragment in self.layout():
            out[name] = at
            at += fragment.words
        out["end"] = at
        return out


def _pack(elements: list[int], bits: int) -> list[int]:
    """Elements (low first) into 32-bit words."""
    if bits == 64:
        return [w for e in elements for w in (e & 0xFFFFFFFF, e >> 32)]
    per = 32 // bits
    return [sum(elements[w * per + k] << (bits * k) for k in range(per))
            for w in range(len(elements) // per)]


def _unpack(words: list[int], bits: int, count: int) -> list[int]:
    if bits == 64:
        return [words[2 * k] | words[2 * k + 1] << 32 for k in range(count)]
    per = 32 // bits
    return [(words[k // per] >> (bits * (k % per))) & ((1 << bits) - 1) for k in range(count)]


def _images(shape: str, ops: Operands, matrices: dict[str, list[list[int]]]) -> list[int]:
    """Every lane's row of words, the matrices' elements placed by the fragment layouts."""
    words = []
    for lane in range(32):
        g, t = lane // 4, lane % 4
        for name, fragment in ops.layout():
            matrix = matrices[name]
            type_name = {"A": ops.a_type, "B": ops.b_type}.get(name, name[2:])
            elements = [_encode(matrix[r][c], type_name)
                        for r, c in (fragment.position(i, g, t) for i in range(fragment.count))]
            words += _pack(elements, fragment.bits)
    return words


def _read(th, ops: Operands, name: str, fragment: Fragment, type_name: str, rows: int,
          cols: int):
    """A matrix rebuilt from every lane's fragment words."""
    key = (th.a_all, id(ops), name, type_name)
    if key not in _MATRICES:
        _MATRICES[key] = _rebuild(th.a_all, ops, name, fragment, type_name, rows, cols)
    return _MATRICES[key]


_MATRICES: dict = {}


def _rebuild(rows_of_lanes: tuple, ops: Operands, name: str, fragment: Fragment,
             type_name: str, rows: int, cols: int):
    offset = ops.offsets()[name]
    stride = ops.offsets()["end"]
    matrix = [[None] * cols for _ in range(rows)]
    for lane, row_value in enumerate(rows_of_lanes):
        words = [(row_value >> (32 * k)) & 0xFFFFFFFF for k in range(stride)]
        elements = _unpack(words[offset:offset + fragment.words], fragment.bits, fragment.count)
        g, t = lane // 4, lane % 4
        for i, bits in enumerate(elements):
            r, c = fragment.position(i, g, t)
            matrix[r][c] = _decode(bits, type_name)
    return matrix


def _mma_ref(th, shape: str, ops: Operands, a_type: str, b_type: str, c_type: str, d_type: str,
             d_fragment: Fragment, satfinite: bool) -> int:
    m, n, k = _dims(shape, ops.family)
    a = _read(th, ops, "A", ops.a, a_type, m, k)
    b = _read(th, ops, "B", ops.b, b_type, k, n)
    c = _read(th, ops, f"C.{c_type}", ops.accumulators[c_type], c_type, m, n)
    g, t = th.i // 4, th.i % 4
    out = []
    for i in range(d_fragment.count):
        r, col = d_fragment.position(i, g, t)
        total = sum(Fraction(a[r][j]) * Fraction(b[j][col]) for j in range(k))
        total += Fraction(c[r][col])
        if d_type == "s32":
            value = int(total)
            out.append(unsigned(saturate(value, 32) if satfinite else value, 32))
        else:
            out.append(round_to(total, _FORMATS[d_type]))
    words = _pack(out, d_fragment.bits)
    return sum(w << (32 * k) for k, w in enumerate(words))


def _registers(prefix: str, first: int, count: int) -> str:
    return "{" + ", ".join(f"%{prefix}{first + k}" for k in range(count)) + "}"


def _mma_form(shape: str, ops: Operands, a_type: str, b_type: str, c_type: str, d_type: str,
              satfinite: bool = False) -> Form:
    offsets = ops.offsets()
    wide = ops.a.bits == 64
    reg = "rd" if wide else "r"
    unit = 8 if wide else 4
    c_fragment = ops.accumulators[c_type]
    d_fragment = ACCUMULATORS[(_accumulator_key(shape, ops.family), _BITS[d_type])]
    a_regs = ops.a.words // (2 if wide else 1)
    b_regs = ops.b.words // (2 if wide else 1)
    c_regs = c_fragment.words // (2 if wide else 1)
    d_regs = d_fragment.words // (2 if wide else 1)
    lines = []
    for k in range(a_regs):
        lines.append(f"ld.global.b{8 * unit} %{reg}{1 + k}, "
                     f"[%a_addr+{4 * offsets['A'] + unit * k}];")
    for k in range(b_regs):
        lines.append(f"ld.global.b{8 * unit} %{reg}{5 + k}, "
                     f"[%a_addr+{4 * offsets['B'] + unit * k}];")
    for k in range(c_regs):
        lines.append(f"ld.global.b{8 * unit} %{reg}{7 + k}, "
                     f"[%a_addr+{4 * offsets[f'C.{c_type}'] + unit * k}];")
    sat = ".satfinite" if satfinite else ""
    lines.append(f"mma.sync.aligned.{shape}.row.col{sat}.{d_type}.{a_type}.{b_type}.{c_type} "
                 f"{_registers(reg, 16, d_regs)}, {_registers(reg, 1, a_regs)}, "
                 f"{_registers(reg, 5, b_regs)}, {_registers(reg, 7, c_regs)};")
    for k in range(d_regs):
        lines.append(f"st.global.b{8 * unit} [{{o}}+{unit * k}], %{reg}{16 + k};")
    return Form("x32", "\n".join(lines),
                lambda th: _mma_ref(th, shape, ops, a_type, b_type, c_type, d_type, d_fragment,
                                    satfinite))


_SMALL = (-3, -2, -1, 0, 1, 2, 3, 4)
_FP8 = (-4, -2, -1, 0, 1, 2, 3, 4, 6, 8)


def _matrices(seed: int, shape: str, ops: Operands, choices, c_choices) -> dict:
    m, n, k = _dims(shape, ops.family)
    rng = _Random(seed)
    out = {"A": [[rng.pick(choices) for _ in range(k)] for _ in range(m)],
           "B": [[rng.pick(choices) for _ in range(n)] for _ in range(k)]}
    for c_type in ops.accumulators:
        out[f"C.{c_type}"] = [[rng.pick(c_choices) for _ in range(n)] for _ in range(m)]
    return out


def _sweep(name: str, shape: str, family: str, a_type: str, b_type: str, c_types, forms,
           choices=_SMALL, c_choices=(-40, -7, 0, 5, 33), target: str = "sm_90a") -> Sweep:
    a, b = FRAGMENTS[(shape, family)]
    key = _accumulator_key(shape, family)
    ops = Operands(family, a_type, b_type, a, b,
                   {c: ACCUMULATORS[(key, _BITS[c])] for c in c_types})
    images = _images(shape, ops, _matrices(len(name) * 7919 + sum(map(ord, name)), shape, ops,
                                           choices, c_choices))
    sweep = Sweep("matrix", name,
                  f"mma.sync.aligned.{shape}.row.col on .{a_type}/.{b_type} (PTX ISA 9.7.14.5.14; "
                  "the fragment layouts of 9.7.14.5): each lane's operand row holds its A, B and "
                  "C fragment registers.",
                  [Operand("a", "u32", tuple(f"{w:#x}" for w in images), row=ops.offsets()["end"])],
                  block=32, target=target)
    for a_t, b_t, c_t, d_t, sat in forms:
        sweep.forms.append(_mma_form(shape, ops, a_t, b_t, c_t, d_t, sat))
    return sweep


# the m16n8 shapes take .f16 or .f32 accumulators, D of C's type; m8n8k4 mixes them
_HALF_FORMS = [("f16", "f16", c, c, False) for c in ("f16", "f32")]
register(_sweep("gen_mma_f16_k16", "m16n8k16", "16", "f16", "f16", ("f16", "f32"), _HALF_FORMS))
register(_sweep("gen_mma_f16_k8", "m16n8k8", "16", "f16", "f16", ("f16", "f32"), _HALF_FORMS))
register(_sweep("gen_mma_f16_m8n8k4", "m8n8k4", "16", "f16", "f16", ("f16", "f32"),
                [("f16", "f16", "f16", "f16", False), ("f16", "f16", "f16", "f32", False),
                 ("f16", "f16", "f32", "f32", False)], target="sm_80"))
register(_sweep("gen_mma_bf16", "m16n8k8", "16", "bf16", "bf16", ("f32",),
                [("bf16", "bf16", "f32", "f32", False)]))
register(_sweep("gen_mma_tf32_k8", "m16n8k8", "tf32", "tf32", "tf32", ("f32",),
                [("tf32", "tf32", "f32", "f32", False)]))
register(_sweep("gen_mma_tf32_k4", "m16n8k4", "tf32", "tf32", "tf32", ("f32",),
                [("tf32", "tf32", "f32", "f32", False)]))
register(_sweep("gen_mma_f64", "m8n8k4", "f64", "f64", "f64", ("f64",),
                [("f64", "f64", "f64", "f64", False)]))
_INT_FORMS = [(a, b, "s32", "s32", sat) for a in ("s8", "u8") for b in ("s8", "u8")
              for sat in (False, True)]
_INT_C = (-(1 << 31), -(1 << 31) + 100, -5, 0, 7, (1 << 31) - 100, (1 << 31) - 1)
for _shape in ("m8n8k16", "m16n8k16", "m16n8k32"):
    register(_sweep(f"gen_mma_int8_{_shape}", _shape, "8", "s8", "s8",
                    ("s32",), _INT_FORMS, choices=(-128, -77, -1, 0, 1, 2, 100, 127, 128, 255),
                    c_choices=_INT_C))


def _fp8_sweep() -> Sweep:
    """The .e4m3/.e5m2 combinations: the A and B elements are encoded once per type, so the
    row holds A and B for each type (the bits differ between the formats)."""
    sweeps = []
    for a_t in ("e4m3", "e5m2"):
        for b_t in ("e4m3", "e5m2"):
            sweeps.append(_sweep(f"gen_mma_fp8_{a_t}_{b_t}", "m16n8k32", "8", a_t, b_t,
                                 ("f32",), [(a_t, b_t, "f32", "f32", False)], choices=_FP8))
    return sweeps


for _fp8 in _fp8_sweep():
    register(_fp8)
