"""References of the bit-manipulation cases, transcribed from the pseudocode of the PTX ISA
sections named at each function (9.7.1 integer, 9.7.8 logic and shift, 9.7.9.7 prmt)."""

from __future__ import annotations

from tests.conformance.reference.bits import array, pyints, signed, unsigned
from tests.conformance.reference.registry import Inputs, reference


def _outputs(values: dict, dtypes: dict) -> dict:
    return {name: array(v, dtypes[name]) for name, v in values.items()}


def _shl(x: int, n: int, bits: int) -> int:
    return unsigned(x << min(n, bits), bits)


def _shr(x: int, n: int, bits: int, is_signed: bool) -> int:
    value = signed(x, bits) if is_signed else unsigned(x, bits)
    return unsigned(value >> min(n, bits), bits)


@reference("bits/shifts")
def shifts(inputs: Inputs) -> dict:
    # "Shift amounts greater than the register width N are clamped to N" (9.7.8.8, 9.7.8.9)
    xs, ns = (pyints(v) for v in inputs.cross("a", "b"))
    out = {k: [] for k in ("o_shl", "o_shr_u", "o_shr_s", "o_shl64", "o_shr64_s", "o_shr64_u",
                           "o_shl16", "o_shr16_s", "o_shr16_u")}
    for x, n in zip(xs, ns, strict=True):
        wide = (x << 32) | x
        out["o_shl"].append(_shl(x, n, 32))
        out["o_shr_u"].append(_shr(x, n, 32, False))
        out["o_shr_s"].append(_shr(x, n, 32, True))
        out["o_shl64"].append(_shl(wide, n, 64))
        out["o_shr64_s"].append(_shr(wide, n, 64, True))
        out["o_shr64_u"].append(_shr(wide, n, 64, False))
        out["o_shl16"].append(_shl(x, n, 16))
        out["o_shr16_s"].append(_shr(x, n, 16, True))
        out["o_shr16_u"].append(_shr(x, n, 16, False))
    dtypes = {k: "<u4" for k in ("o_shl", "o_shr_u", "o_shr_s")}
    dtypes |= {k: "<u8" for k in ("o_shl64", "o_shr64_s", "o_shr64_u")}
    dtypes |= {k: "<u2" for k in ("o_shl16", "o_shr16_s", "o_shr16_u")}
    return _outputs(out, dtypes)


@reference("bits/shf")
def shf(inputs: Inputs) -> dict:
    # 9.7.8.7: n = clamp ? min(c, 32) : c & 0x1f; shf.l: (b << n) | (a >> (32-n));
    # shf.r: (b << (32-n)) | (a >> n), shifts of the 32-bit values (a shift by 32 gives 0)
    a_s, b_s, c_s = (pyints(v) for v in inputs.cross("a", "b", "c"))
    out = {k: [] for k in ("o_l_wrap", "o_l_clamp", "o_r_wrap", "o_r_clamp")}

    def left(a: int, b: int, n: int) -> int:
        return unsigned(_shl(b, n, 32) | _shr(a, 32 - n, 32, False), 32)

    def right(a: int, b: int, n: int) -> int:
        return unsigned(_shl(b, 32 - n, 32) | _shr(a, n, 32, False), 32)

    for a, b, c in zip(a_s, b_s, c_s, strict=True):
        out["o_l_wrap"].append(left(a, b, c & 0x1F))
        out["o_l_clamp"].append(left(a, b, min(c, 32)))
        out["o_r_wrap"].append(right(a, b, c & 0x1F))
        out["o_r_clamp"].append(right(a, b, min(c, 32)))
    return _outputs(out, dict.fromkeys(out, "<u4"))


def bfe(a: int, b: int, c: int, bits: int, is_signed: bool) -> int:
    """9.7.8.10 bfe, as the ISA's pseudocode states it."""
    msb = bits - 1
    pos, length = b & 0xFF, c & 0xFF
    if not is_signed or length == 0:
        sbit = 0
    else:
        sbit = (a >> min(pos + length - 1, msb)) & 1
    d = 0
    for i in range(bits):
        bit = (a >> (pos + i)) & 1 if (i < length and pos + i <= msb) else sbit
        d |= bit << i
    return d


def bfi(a: int, b: int, c: int, d: int, bits: int) -> int:
    """9.7.8.11 bfi: insert the low ``len`` bits of a into b at ``pos``."""
    msb = bits - 1
    pos, length = c & 0xFF, d & 0xFF
    f = b
    i = 0
    while i < length and pos + i <= msb:
        f = (f & ~(1 << (pos + i))) | (((a >> i) & 1) << (pos + i))
        i += 1
    return f


@reference("bits/bfe_bfi")
def bfe_bfi(inputs: Inputs) -> dict:
    xs, ps, ls = (pyints(v) for v in inputs.cross("a", "b", "c"))
    out = {k: [] for k in ("o_bfe_u", "o_bfe_u64", "o_bfi", "o_bfi64")}
    for x, p, n in zip(xs, ps, ls, strict=True):
        wide = (x << 32) | x
        out["o_bfe_u"].append(bfe(x, p, n, 32, False))
        out["o_bfe_u64"].append(bfe(wide, p, n, 64, False))
        out["o_bfi"].append(bfi(x, 0x5A5A5A5A, p, n, 32))
        out["o_bfi64"].append(bfi(wide, 0x5A5A5A5A5A5A5A5A, p, n, 64))
    dtypes = {"o_bfe_u": "<u4", "o_bfe_u64": "<u8", "o_bfi": "<u4", "o_bfi64": "<u8"}
    return _outputs(out, dtypes)


@reference("bits/bfe_s32")
def bfe_s32(inputs: Inputs) -> dict:
    xs, ps, ls = (pyints(v) for v in inputs.cross("a", "b", "c"))
    values = [bfe(x, p, n, 32, True) for x, p, n in zip(xs, ps, ls, strict=True)]
    return {"o_bfe_s": array(values, "<u4")}


@reference("bits/bfe_s64")
def bfe_s64(inputs: Inputs) -> dict:
    xs, ps, ls = (pyints(v) for v in inputs.cross("a", "b", "c"))
    values = [bfe((x << 32) | x, p, n, 64, True) for x, p, n in zip(xs, ps, ls, strict=True)]
    return {"o_bfe_s64": array(values, "<u8")}


def bfind(a: int, bits: int, is_signed: bool, shiftamt: bool) -> int:
    """9.7.1.18 bfind: the most significant non-sign bit; 0xffffffff when there is none."""
    msb = bits - 1
    if is_signed and (a >> msb) & 1:
        a = ~a & ((1 << bits) - 1)
    d = 0xFFFFFFFF
    for i in range(msb, -1, -1):
        if (a >> i) & 1:
            d = i
            break
    if shiftamt and d != 0xFFFFFFFF:
        d = msb - d
    return d


def _brev(a: int, bits: int) -> int:
    return int(format(a, f"0{bits}b")[::-1], 2)


def _clz(a: int, bits: int) -> int:
    return bits - a.bit_length()


@reference("bits/count")
def count(inputs: Inputs) -> dict:
    xs, ys = (pyints(v) for v in inputs.cross("a", "b"))
    keys = ("o_popc", "o_clz", "o_bfind_u", "o_bfind_s", "o_bfind_sa_u", "o_bfind_sa_s",
            "o_brev", "o_popc64", "o_clz64", "o_bfind_u64", "o_bfind_s64", "o_brev64")
    out = {k: [] for k in keys}
    for x, y in zip(xs, ys, strict=True):
        wide = (y << 32) | x
        out["o_popc"].append(bin(x).count("1"))
        out["o_clz"].append(_clz(x, 32))
        out["o_bfind_u"].append(bfind(x, 32, False, False))
        out["o_bfind_s"].append(bfind(x, 32, True, False))
        out["o_bfind_sa_u"].append(bfind(x, 32, False, True))
        out["o_bfind_sa_s"].append(bfind(x, 32, True, True))
        out["o_brev"].append(_brev(x, 32))
        out["o_popc64"].append(bin(wide).count("1"))
        out["o_clz64"].append(_clz(wide, 64))
        out["o_bfind_u64"].append(bfind(wide, 64, False, False))
        out["o_bfind_s64"].append(bfind(wide, 64, True, False))
        out["o_brev64"].append(_brev(wide, 64))
    dtypes = dict.fromkeys(keys, "<u4") | {"o_brev64": "<u8"}
    return _outputs(out, dtypes)


def prmt(a: int, b: int, c: int, mode: str | None) -> int:
    """9.7.9.7 prmt. The modes' byte selections are the ISA's table, written as formulas:
    f4e d.i = tmp[sel + i]; b4e d.i = tmp[sel - i]; rc8 d.i = tmp[sel]; ecl d.i =
    tmp[max(i, sel)]; ecr d.i = tmp[min(i, sel)]; rc16 d.i = tmp[2 * (sel & 1) + (i & 1)],
    with indexes modulo 8 and sel = c[1:0]."""
    tmp = (b << 32) | a
    byte = [(tmp >> (8 * k)) & 0xFF for k in range(8)]
    d = 0
    if mode is None:
        for i in range(4):
            sel = (c >> (4 * i)) & 0xF
            value = byte[sel & 7]
            if sel & 8:  # replicate the sign (msb) of the byte over all 8 bits
                value = 0xFF if value & 0x80 else 0x00
            d |= value << (8 * i)
        return d
    sel = c & 3
    pick = {
        "f4e": lambda i: (sel + i) & 7,
        "b4e": lambda i: (sel - i) & 7,
        "rc8": lambda i: sel,
        "ecl": lambda i: max(i, sel),
        "ecr": lambda i: min(i, sel),
        "rc16": lambda i: 2 * (sel & 1) + (i & 1),
    }[mode]
    for i in range(4):
        d |= byte[pick(i)] << (8 * i)
    return d


@reference("bits/prmt")
def prmt_case(inputs: Inputs) -> dict:
    a_s, b_s, c_s = (pyints(v) for v in inputs.cross("a", "b", "c"))
    modes = {"o_generic": None, "o_f4e": "f4e", "o_b4e": "b4e", "o_rc8": "rc8", "o_ecl": "ecl",
             "o_ecr": "ecr", "o_rc16": "rc16"}
    out = {k: [prmt(a, b, c, m) for a, b, c in zip(a_s, b_s, c_s, strict=True)]
           for k, m in modes.items()}
    return _outputs(out, dict.fromkeys(out, "<u4"))


@reference("bits/lop3")
def lop3(inputs: Inputs) -> dict:
    a_s, b_s, c_s = (pyints(v) for v in inputs.cross("a", "b", "c"))
    out = {}
    for lut in (0x00, 0xFF, 0x96, 0xE8, 0xCA, 0xF0, 0xCC, 0xAA, 0x80, 0xFE, 0x1E, 0x6A, 0x01,
                0x7F):
        values = []
        for a, b, c in zip(a_s, b_s, c_s, strict=True):
            d = 0
            for i in range(32):
                index = (((a >> i) & 1) << 2) | (((b >> i) & 1) << 1) | ((c >> i) & 1)
                d |= ((lut >> index) & 1) << i
            values.append(d)
        out[f"o_lop3_{lut:02x}"] = values
    return _outputs(out, dict.fromkeys(out, "<u4"))


@reference("bits/logic")
def logic(inputs: Inputs) -> dict:
    xs, ys = (pyints(v) for v in inputs.cross("a", "b"))
    keys = ("o_and", "o_or", "o_xor", "o_not", "o_cnot", "o_and16", "o_or64", "o_xor64",
            "o_preds", "o_cnot16", "o_not64")
    out = {k: [] for k in keys}
    for x, y in zip(xs, ys, strict=True):
        out["o_and"].append(x & y)
        out["o_or"].append(x | y)
        out["o_xor"].append(x ^ y)
        out["o_not"].append(~x)
        out["o_cnot"].append(1 if x == 0 else 0)
        out["o_and16"].append(x & y & 0xFFFF)
        out["o_cnot16"].append(1 if x & 0xFFFF == 0 else 0)
        wide_a, wide_b = (y << 32) | x, (x << 32) | y
        out["o_or64"].append(wide_a | wide_b)
        out["o_xor64"].append(wide_a ^ wide_b)
        out["o_not64"].append(~wide_a)
        p, q = x != 0, y != 0
        out["o_preds"].append((p and q) | (p or q) << 1 | (p != q) << 2 | (not p) << 3
                              | ((not p) and q) << 4)
    dtypes = dict.fromkeys(keys, "<u4") | {"o_and16": "<u2", "o_cnot16": "<u2",
                                           "o_or64": "<u8", "o_xor64": "<u8", "o_not64": "<u8"}
    return _outputs(out, dtypes)


def bmsk(a: int, b: int, clamp: bool) -> int:
    """9.7.8.12 bmsk, line by line from the ISA's pseudocode."""
    a1 = a & 0x1F
    mask0 = unsigned(~0 << a1, 32)
    b1 = b & 0x1F
    total = a1 + b1
    mask1 = unsigned(~0 << total, 32) if total < 32 else 0
    sum_overflow = total >= 32
    position_overflow = width_overflow = False
    if clamp:
        if a >= 32:
            position_overflow = True
            mask0 = 0
        if b >= 32:
            width_overflow = True
    if sum_overflow or position_overflow or width_overflow:
        mask1 = 0
    elif b1 == 0:
        mask1 = 0xFFFFFFFF
    return mask0 & unsigned(~mask1, 32)


@reference("bits/bmsk")
def bmsk_case(inputs: Inputs) -> dict:
    a_s, b_s = (pyints(v) for v in inputs.cross("a", "b"))
    out = {"o_clamp": [bmsk(a, b, True) for a, b in zip(a_s, b_s, strict=True)],
           "o_wrap": [bmsk(a, b, False) for a, b in zip(a_s, b_s, strict=True)]}
    return _outputs(out, dict.fromkeys(out, "<u4"))


def szext(a: int, b: int, clamp: bool, is_signed: bool) -> int:
    """9.7.1.23 szext, from the ISA's pseudocode."""
    b1 = b & 0x1F
    too_large = b >= 32 and clamp
    mask = 0 if too_large else unsigned(~0 << b1, 32)
    sign_pos = (b1 - 1) & 0x1F
    sign_bit = False if (b1 == 0 or too_large or not is_signed) else (a >> sign_pos) & 1
    return (a & unsigned(~mask, 32)) | (mask if sign_bit else 0)


@reference("bits/szext")
def szext_case(inputs: Inputs) -> dict:
    a_s, b_s = (pyints(v) for v in inputs.cross("a", "b"))
    pairs = list(zip(a_s, b_s, strict=True))
    out = {"o_clamp_s": [szext(a, b, True, True) for a, b in pairs],
           "o_wrap_s": [szext(a, b, False, True) for a, b in pairs],
           "o_clamp_u": [szext(a, b, True, False) for a, b in pairs],
           "o_wrap_u": [szext(a, b, False, False) for a, b in pairs]}
    return _outputs(out, dict.fromkeys(out, "<u4"))


def fns(mask: int, base: int, offset: int) -> int:
    """9.7.1.22 fns, from the ISA's pseudocode."""
    d = 0xFFFFFFFF
    if offset == 0:
        if 0 <= base < 32 and (mask >> base) & 1:
            d = base
        return d
    pos = base
    count = abs(offset) - 1
    inc = 1 if offset > 0 else -1
    while 0 <= pos < 32:
        if (mask >> pos) & 1:
            if count == 0:
                return pos
            count -= 1
        pos += inc
    return d


@reference("bits/fns")
def fns_case(inputs: Inputs) -> dict:
    ms, bs, cs = (pyints(v) for v in inputs.cross("a", "b", "c"))
    return {"o_fns": array([fns(m, b, c) for m, b, c in zip(ms, bs, cs, strict=True)], "<u4")}


def _lanes(value: int, count: int, bits: int, is_signed: bool) -> list[int]:
    return [(signed if is_signed else unsigned)(value >> (bits * k), bits) for k in range(count)]


def dp4a(a: int, b: int, c: int, a_signed: bool, b_signed: bool) -> int:
    va, vb = _lanes(a, 4, 8, a_signed), _lanes(b, 4, 8, b_signed)
    return c + sum(x * y for x, y in zip(va, vb, strict=True))


def dp2a(a: int, b: int, c: int, a_signed: bool, b_signed: bool, hi: bool) -> int:
    va, vb = _lanes(a, 2, 16, a_signed), _lanes(b, 4, 8, b_signed)
    select = 2 if hi else 0
    return c + va[0] * vb[select] + va[1] * vb[select + 1]


@reference("bits/dot")
def dot(inputs: Inputs) -> dict:
    # 9.7.1.24 dp4a, 9.7.1.25 dp2a: d = c + sum of lane products, lanes sign- or zero-extended
    # by .atype/.btype, c is .s32 when either type is signed (here c = x)
    xs, ys = (pyints(v) for v in inputs.cross("a", "b"))
    out = {k: [] for k in ("o_dp4a_uu", "o_dp4a_ss", "o_dp4a_su", "o_dp4a_us", "o_dp2a_lo_uu",
                           "o_dp2a_hi_ss", "o_dp2a_lo_su", "o_dp2a_hi_us")}
    for x, y in zip(xs, ys, strict=True):
        sx = signed(x, 32)
        out["o_dp4a_uu"].append(dp4a(x, y, x, False, False))
        out["o_dp4a_ss"].append(dp4a(x, y, sx, True, True))
        out["o_dp4a_su"].append(dp4a(x, y, sx, True, False))
        out["o_dp4a_us"].append(dp4a(x, y, sx, False, True))
        out["o_dp2a_lo_uu"].append(dp2a(x, y, x, False, False, False))
        out["o_dp2a_hi_ss"].append(dp2a(x, y, sx, True, True, True))
        out["o_dp2a_lo_su"].append(dp2a(x, y, sx, True, False, False))
        out["o_dp2a_hi_us"].append(dp2a(x, y, sx, False, True, True))
    return _outputs(out, dict.fromkeys(out, "<u4"))


def _logic_sweep(inputs: Inputs, bits: int) -> dict:
    """cases/bits/sweep_b<bits>.ptx: logic, shifts and counts on one register width."""
    xs, ys, ns = (pyints(v) for v in inputs.cross("a", "b", "c"))
    out: dict[str, list[int]] = {}

    def add(name: str, v: int) -> None:
        out.setdefault(name, []).append(v)

    for x, y, n in zip(xs, ys, ns, strict=True):
        x, y = unsigned(x, bits), unsigned(y, bits)
        add("o_and", x & y)
        add("o_or", x | y)
        add("o_xor", x ^ y)
        add("o_not", ~x)
        add("o_cnot", 1 if x == 0 else 0)
        add("o_shl", _shl(x, n, bits))
        add("o_shr_b", _shr(x, n, bits, False))
        add("o_shr_u", _shr(x, n, bits, False))
        add("o_shr_s", _shr(x, n, bits, True))
        if bits >= 32:
            add("o_popc", bin(x).count("1"))
            add("o_clz", _clz(x, bits))
            add("o_brev", _brev(x, bits))
            add("o_bfind_u", bfind(x, bits, False, False))
            add("o_bfind_s", bfind(x, bits, True, False))
    dtypes = {k: f"<u{bits // 8}" for k in out} | {k: "<u4" for k in
                                                   ("o_popc", "o_clz", "o_bfind_u", "o_bfind_s")}
    return _outputs({k: v for k, v in out.items()}, {k: dtypes[k] for k in out})


for _bits in (16, 32, 64):
    reference(f"bits/sweep_b{_bits}")(lambda inputs, _b=_bits: _logic_sweep(inputs, _b))
