"""Generated sweeps of atom and red (PTX ISA 9.7.12.5 atom, 9.7.12.6 red): every type with
every operation it takes, in global, shared and generic memory, with every .sem and .scope,
.L2::cache_hint, .noftz and vector width.

Each thread owns its location (a 32-byte slot), so a single thread's results are the ISA's
definitions, whatever the qualifiers order: the slot is set to ``a``, the atomic applies
``b``, and the form writes the slot's new value to bytes 0..15 and the returned old value to
bytes 16..31. From 9.7.12.5: ``inc(r, s) = r >= s ? 0 : r + 1``, ``dec(r, s) = (r == 0 ||
r > s) ? s : r - 1``, ``cas(r, s, t) = r == s ? t : r`` (here t = b xor 0x5a5a5a5a...),
``exch`` stores b; integer add wraps; floating-point add rounds to nearest even; .f16, .bf16
and their pairs need .noftz and keep subnormals; "the current implementation" of atom/red
.add.f32 flushes subnormal inputs and results to zero of the same sign on global memory, not
on shared memory. Vector forms apply the operation to each element. A NaN result's payload is
not compared.
"""

from __future__ import annotations

from tests.conformance.reference import fpops
from tests.conformance.reference.bits import signed, unsigned
from tests.conformance.reference.ieee import BF16, F16, F32, F64, NAN, value_of
from tests.conformance.reference.sweep_values import INT_VALUES, hexes
from tests.conformance.sweep import Form, Operand, Sweep, register

_BITS = {"b16": 16, "b32": 32, "u32": 32, "s32": 32, "f32": 32, "f16x2": 32, "bf16x2": 32,
         "f16": 16, "bf16": 16, "b64": 64, "u64": 64, "s64": 64, "f64": 64}
_FORMAT = {"f16": F16, "bf16": BF16, "f32": F32, "f64": F64, "f16x2": F16, "bf16x2": BF16}

#: the operations of atom on each type (ptxas and 9.7.12.5: .and/.or/.xor/.exch/.cas on
#: bit-size types, .inc/.dec on .u32, no .add on .s64, .cas also on .b16)
ATOM_OPS = {
    "b16": ("cas",), "b32": ("and", "or", "xor", "exch", "cas"),
    "b64": ("and", "or", "xor", "exch", "cas"), "u32": ("add", "inc", "dec", "min", "max"),
    "s32": ("add", "min", "max"), "u64": ("add", "min", "max"), "s64": ("min", "max"),
    "f32": ("add",), "f64": ("add",), "f16": ("add",), "bf16": ("add",), "f16x2": ("add",),
    "bf16x2": ("add",),
}
CAS_XOR = 0x5A5A5A5A5A5A5A5A
_HALVES = ("f16", "bf16", "f16x2", "bf16x2")
#: sem and scope together, so that every .sem and every .scope appears
ATOM_ORDERS = ("relaxed.gpu", "acquire.cta", "release.cluster", "acq_rel.sys")
RED_ORDERS = ("relaxed.gpu", "release.cta", "relaxed.cluster", "release.sys")


def _reg(type_name: str, k: int) -> str:
    return {16: f"%h{k}", 32: f"%r{k}", 64: f"%rd{k}"}[_BITS[type_name]]


def _operand(stem: str, type_name: str) -> str:
    return f"%{stem}{_BITS[type_name]}"


def apply(op: str, type_name: str, old: int, b: int) -> int | None:
    """One element of the operation on the bits ``old`` and ``b``; None for a NaN result."""
    bits = _BITS[type_name]
    mask = (1 << bits) - 1
    old, b = old & mask, b & mask
    if type_name in _FORMAT:
        fmt = _FORMAT[type_name]
        if type_name in ("f16x2", "bf16x2"):
            lo, hi = apply(op, type_name[:-2], old, b), apply(op, type_name[:-2],
                                                                old >> 16, b >> 16)
            return None if lo is None or hi is None else lo | hi << 16
        result = fpops.add(old, b, fmt)
        return None if value_of(result, fmt) is NAN else result
    if op == "add":
        return unsigned(old + b, bits)
    if op in ("min", "max"):
        if type_name[0] == "s":
            x, y = signed(old, bits), signed(b, bits)
        else:
            x, y = old, b
        return unsigned(min(x, y) if op == "min" else max(x, y), bits)
    if op == "inc":
        return 0 if old >= b else old + 1
    if op == "dec":
        return b if old == 0 or old > b else old - 1
    if op == "and":
        return old & b
    if op == "or":
        return old | b
    if op == "xor":
        return old ^ b
    if op == "exch":
        return b
    if op == "cas":
        return ((b ^ CAS_XOR) & mask) if old == b else old
    raise ValueError(op)


def _elements(value: int, type_name: str, count: int) -> list[int]:
    """``count`` elements of a vector built from a 64-bit operand (repeated when the vector
    is wider than 64 bits)."""
    bits = _BITS[type_name]
    per = 64 // bits
    return [(value >> (bits * (k % per))) & ((1 << bits) - 1) for k in range(count)]


def _slot(news: list[int | None], olds: list[int], type_name: str) -> tuple:
    """The slot's eight 32-bit lanes: new elements from byte 0, old ones from byte 16; a lane
    holding a NaN result is not compared."""
    bits = _BITS[type_name]
    raw = bytearray(32)
    unknown = [False] * 8
    for k, value in enumerate(news):
        offset = k * bits // 8
        raw[offset:offset + bits // 8] = (value or 0).to_bytes(bits // 8, "little")
        if value is None:
            for lane in range(offset // 4, (offset + bits // 8 + 3) // 4):
                unknown[lane] = True
    for k, value in enumerate(olds):
        offset = 16 + k * bits // 8
        raw[offset:offset + bits // 8] = value.to_bytes(bits // 8, "little")
    lanes = [int.from_bytes(raw[4 * k:4 * k + 4], "little") for k in range(8)]
    return tuple(None if unknown[k] else lanes[k] for k in range(8))


def _vector(type_name: str, first: int, count: int) -> str:
    return "{" + ", ".join(_reg(type_name, first + k) for k in range(count)) + "}"


def _unpack(stem: str, type_name: str, first: int) -> str:
    """Split the 64-bit operand into elements first.. (a no-op for 64-bit types)."""
    bits = _BITS[type_name]
    if bits == 64:
        return f"mov.b64 {_reg(type_name, first)}, %{stem}64;"
    return f"mov.b64 {_vector(type_name, first, 64 // bits)}, %{stem}64;"


def atomic_form(opcode: str, type_name: str, op: str, *, order: str = "", space: str = "global",
                hint: bool = False, count: int = 1, ftz: bool = False) -> Form:
    """One atom or red on the thread's slot (global slot: the output itself; shared slot:
    %rd20), new value to bytes 0..15 and, for atom, old value to 16..31. Registers: a's
    elements from 1, b's from 10, the old values from 24 (%rd20-%rd23 hold addresses)."""
    bits = _BITS[type_name]
    width = bits // 8
    noftz = ".noftz" if type_name in _HALVES else ""
    policy = ", %rd23" if hint else ""
    cache = ".L2::cache_hint" if hint else ""
    prefix = f".{order}" if order else ""
    where = "[{o}]" if space in ("global", "") else "[%rd20]"
    state = f".{space}" if space else ""
    lines = []
    # the slot's initial value: a's elements; b's elements in registers 10..
    lines.append(_unpack("a", type_name, 1))
    lines.append(_unpack("b", type_name, 10))
    store_space = "shared" if "shared" in space else "global"
    per = 64 // bits
    for k in range(count):
        lines.append(f"st.{store_space}.b{bits} {where[:-1]}+{k * width}], "
                     f"{_reg(type_name, 1 + k % per)};")
    if count > 1:
        b = "{" + ", ".join(_reg(type_name, 10 + k % per) for k in range(count)) + "}"
        old = _vector(type_name, 24, count)
        vec = f".v{count}"
        if opcode == "atom":
            lines.append(f"atom{prefix}{state}{vec}.{type_name}.{op}{noftz}{cache} {old}, "
                         f"{where}, {b}{policy};")
        else:
            lines.append(f"red{prefix}{state}{vec}.{type_name}.{op}{noftz}{cache} {where}, "
                         f"{b}{policy};")
    else:
        b = _reg(type_name, 10)
        if opcode == "atom":
            extra = ""
            if op == "cas":
                lines.append(f"xor.b{bits} {_reg(type_name, 11)}, {b}, "
                             f"{CAS_XOR & ((1 << bits) - 1):#x};")
                extra = f", {_reg(type_name, 11)}"
            lines.append(f"atom{prefix}{state}.{op}{noftz}{cache}.{type_name} "
                         f"{_reg(type_name, 24)}, {where}, {b}{extra}{policy};")
        else:
            lines.append(f"red{prefix}{state}.{op}{noftz}{cache}.{type_name} {where}, "
                         f"{b}{policy};")
    if "shared" in space:
        for k in range(count):
            lines.append(f"ld.shared.b{bits} {_reg(type_name, 1 + k)}, [%rd20+{k * width}];")
            lines.append(f"st.global.b{bits} [{{o}}+{k * width}], {_reg(type_name, 1 + k)};")
    if opcode == "atom":
        for k in range(count):
            lines.append(f"st.global.b{bits} [{{o}}+{16 + k * width}], "
                         f"{_reg(type_name, 24 + k)};")

    def ref(th, flush=ftz):
        olds = _elements(th.a, type_name, count)
        bs = _elements(th.b, type_name, count)
        if flush:
            olds_in = [fpops.flush(x, F32) for x in olds]
            bs = [fpops.flush(x, F32) for x in bs]
            news = [apply(op, type_name, x, y) for x, y in zip(olds_in, bs, strict=True)]
            news = [None if v is None else fpops.flush(v, F32) for v in news]
        else:
            news = [apply(op, type_name, x, y) for x, y in zip(olds, bs, strict=True)]
        return _slot(news, olds if opcode == "atom" else [], type_name)

    return Form("x32", "\n".join(lines), ref)


def _forms(opcode: str, type_name: str, vectors: tuple[int, ...] = ()) -> list[Form]:
    """Every operation, then the first one with every space, order and the cache hint, and
    the vector widths."""
    ops = ATOM_OPS[type_name]
    if opcode == "red":
        ops = tuple(o for o in ops if o not in ("cas", "exch"))
    forms = [atomic_form(opcode, type_name, op) for op in ops]
    first = ops[0]
    for space in ("", "shared", "shared::cta"):
        forms.append(atomic_form(opcode, type_name, first, space=space))
    for order in (ATOM_ORDERS if opcode == "atom" else RED_ORDERS):
        forms.append(atomic_form(opcode, type_name, first, order=order))
    hinted = [o for o in ops if o != "cas"]  # cas takes no cache hint (9.7.12.5 syntax)
    if hinted:
        forms.append(atomic_form(opcode, type_name, hinted[0], hint=True))
    for count in vectors:
        forms.append(atomic_form(opcode, type_name, "add", count=count))
    return forms


_SETUP = ("createpolicy.fractional.L2::evict_last.b64 %rd23, 1.0;\n"
          "mov.u64 %rd20, sbuf;\nmul.wide.u32 %rd1, %gt, 32;\nadd.s64 %rd20, %rd20, %rd1;")


def _sweep(opcode: str, name: str, summary: str, values, types, vectors=None,
           target: str = "sm_90a") -> Sweep:
    sweep = Sweep("atomics", name, summary,
                  [Operand("a", "u64", values), Operand("b", "u64", values)],
                  locals=".shared .align 32 .b8 sbuf[4096];", setup=_SETUP, target=target)
    for type_name in types:
        if opcode == "red" and not [o for o in ATOM_OPS[type_name] if o not in ("cas", "exch")]:
            continue
        sweep.forms += _forms(opcode, type_name, (vectors or {}).get(type_name, ()))
    return sweep


_INT_TYPES = ("b16", "b32", "b64", "u32", "s32", "u64", "s64")
for _opcode in ("atom", "red"):
    register(_sweep(_opcode, f"gen_{_opcode}_int",
                    f"{_opcode} on every integer type with every operation, space, .sem, "
                    f".scope and .L2::cache_hint (PTX ISA "
                    f"{'9.7.12.5' if _opcode == 'atom' else '9.7.12.6'}).",
                    INT_VALUES, _INT_TYPES))


def _packed(values: list[int], bits: int) -> tuple[str, ...]:
    """64-bit operands holding 64/bits values each: value k, k + 3, k + 6, k + 9."""
    n = len(values)
    per = 64 // bits
    return hexes(sum(values[(k + 3 * j) % n] << (bits * j) for j in range(per))
                 for k in range(n))


_F16 = [0x0000, 0x8000, 0x3C00, 0xBC00, 0x3E00, 0x6800, 0x3C01, 0x0001, 0x8200, 0x7BFF,
        0x7C00, 0xFC00, 0x7E00]
_BF16 = [0x0000, 0x8000, 0x3F80, 0xBF80, 0x3FC0, 0x4380, 0x3F81, 0x0001, 0x8040, 0x7F7F,
         0x7F80, 0xFF80, 0x7FC0]
_F32 = [0x00000000, 0x80000000, 0x3F800000, 0xBF800000, 0x3FC00000, 0x40400000, 0x4B800000,
        0x3A83126F, 0x3F800001, 0x33800000, 0x7F7FFFFF, 0xFF7FFFFF, 0x7F800000, 0xFF800000,
        0x7FC00000]
_F64 = [0x0, 0x8000000000000000, 0x3FF0000000000000, 0xBFF0000000000000, 0x3FF8000000000000,
        0x4340000000000000, 0x3FF0000000000001, 0x3CA0000000000000, 0x0000000000000001,
        0x7FEFFFFFFFFFFFFF, 0x7FF0000000000000, 0xFFF0000000000000, 0x7FF8000000000000]

for _opcode in ("atom", "red"):
    _sec = "9.7.12.5" if _opcode == "atom" else "9.7.12.6"
    register(_sweep(_opcode, f"gen_{_opcode}_half",
                    f"{_opcode}.add.noftz on .f16, .bf16 and their pairs, scalar and vector, in "
                    f"every space and with every .sem, .scope and .L2::cache_hint (PTX ISA {_sec}"
                    "). Each 64-bit operand holds four halves (the scalar forms read the first).",
                    _packed(_F16, 16), ("f16", "f16x2"),
                    {"f16": (2, 4, 8), "f16x2": (2, 4)}))
    register(_sweep(_opcode, f"gen_{_opcode}_bf16",
                    f"{_opcode}.add.noftz on .bf16 and .bf16x2, scalar and vector, in every "
                    f"space and with every .sem, .scope and .L2::cache_hint (PTX ISA {_sec}).",
                    _packed(_BF16, 16), ("bf16", "bf16x2"),
                    {"bf16": (2, 4, 8), "bf16x2": (2, 4)}))
    register(_sweep(_opcode, f"gen_{_opcode}_f32",
                    f"{_opcode}.add.f32, scalar and .v2/.v4, in every space and with every "
                    f".sem, .scope and .L2::cache_hint (PTX ISA {_sec}); no subnormal operands "
                    "(see gen_{_opcode}_f32_subnormal).", _packed(_F32, 32), ("f32",),
                    {"f32": (2, 4)}))
    register(_sweep(_opcode, f"gen_{_opcode}_f64",
                    f"{_opcode}.add.f64 in every space and with every .sem, .scope and "
                    f".L2::cache_hint (PTX ISA {_sec}).", hexes(_F64), ("f64",)))

_SUBNORMAL = [0x00000001, 0x80000001, 0x007FFFFF, 0x00800000, 0x80800000, 0x3F800000,
              0x00000000, 0x80000000]
for _opcode in ("atom", "red"):
    _sweep_f32 = Sweep(
        "atomics", f"gen_{_opcode}_f32_subnormal",
        f"{_opcode}.add.f32 on subnormal operands and results: flushed to zero of the same "
        "sign on global memory, kept on shared memory (PTX ISA "
        f"{'9.7.12.5' if _opcode == 'atom' else '9.7.12.6'}, \"Current implementation\").",
        [Operand("a", "u64", hexes(_SUBNORMAL)), Operand("b", "u64", hexes(_SUBNORMAL))],
        locals=".shared .align 32 .b8 sbuf[4096];", setup=_SETUP)
    _sweep_f32.forms.append(atomic_form(_opcode, "f32", "add", ftz=True))
    _sweep_f32.forms.append(atomic_form(_opcode, "f32", "add", space="shared"))
    register(_sweep_f32)
