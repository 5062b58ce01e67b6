"""Correctly rounded float arithmetic of every PTX float type: add, sub, mul, div, fma,
sqrt, rcp (the IEEE forms), abs, neg, min, max (PTX ISA 9.7.3 and 9.7.4).

Each operation is computed as an exact pair ``(s, err)`` of float64 values (the float64 result
rounded to nearest and its exact error: TwoSum, Dekker's product, the remainder of a quotient
or a square root) and rounded *once* to the instruction's type in its rounding mode
(:mod:`kernelcheck.emu.narrow`): ``.rn`` ties to even, ``.rz``/``.rm``/``.rp`` are directed,
for f64 too. ``fma`` rounds once (Boldo and Melquiond's emulation: the exact product, an
exact sum with ``c``, and the low parts rounded to odd; the directed modes take the sign of
the exact residual). The f64 elements where a float64 intermediate could overflow or
underflow (an operand, the product or the result near the ends of the range) are computed
exactly in integers by :mod:`kernelcheck.emu.exactfloat` instead; the narrower types never
come near the ends of the float64 range. An exact zero sum is -0 under ``.rm`` and +0
otherwise (IEEE 754 6.3).

Modifiers (ISA 9.7.3.1-9.7.3.12, 9.7.4.1-9.7.4.10):

* ``.ftz`` flushes subnormal inputs and results of f32 and f16 to zero of the same sign.
* ``.sat`` clamps the result to [0.0, 1.0], NaN to +0.0.
* ``.relu`` (f16, bf16 ``fma``) makes negative results +0.0 and NaN the canonical NaN.
* NaN results of f32, f16 and bf16 arithmetic are the canonical NaN (0x7fffffff, 0x7fff),
  as NVIDIA GPUs produce; f64 NaN results are quiet NaNs of numpy.
* ``min``/``max`` return the non-NaN operand when one is NaN, the canonical NaN when both are
  (or with ``.NaN`` when either is); -0.0 is below +0.0.
"""

from __future__ import annotations

import numpy as np

from kernelcheck.emu.exactfloat import exact
from kernelcheck.emu.narrow import (
    CANONICAL_NAN,
    directed,
    round_float,
    to_bf16,
    to_odd,
    two_prod,
    two_sum,
)
from kernelcheck.emu.values import bf16_to_f32

__all__ = ["ELEMENT", "decode", "encode", "round_exact", "exact_op", "rounded", "finish",
           "minmax", "sign_op"]

_F64 = np.float64
#: The element type of each float type (packed pairs compute per half).
ELEMENT = {"f16": "f16", "f16x2": "f16", "bf16": "bf16", "bf16x2": "bf16", "f32": "f32",
           "f64": "f64"}
_TINY = {"f16": 2.0**-14, "f32": 2.0**-126, "f64": 2.0**-1022, "bf16": 2.0**-126}
_DTYPE = {"f16": np.float16, "f32": np.float32, "f64": np.float64}


def _parts(v, t):
    """Element bit patterns of a register value: one part, or (low, high) halves."""
    if t in ("f16x2", "bf16x2"):
        v = np.asarray(v).astype(np.uint32)
        return [(v & np.uint32(0xFFFF)).astype(np.uint16), (v >> np.uint32(16)).astype(
            np.uint16)]
    return [np.asarray(v)]


def decode(v, t):
    """Exact float64 values of the elements of a register value of float type ``t``."""
    u = ELEMENT[t]
    out = []
    for p in _parts(v, t):
        p = np.asarray(p)
        if u == "f16" and p.dtype == np.float16:
            out.append(p.astype(_F64))
        elif u == "f16":
            out.append(p.astype(np.uint16).view(np.float16).astype(_F64))
        elif u == "bf16":
            out.append(bf16_to_f32(np.asarray(p).astype(np.uint16)).astype(_F64))
        else:
            out.append(np.asarray(p).astype(_F64))
    return out


def encode(values, t):
    """A register value of type ``t`` from exact (representable) float64 element values;
    NaN elements become the canonical NaN of f16/bf16/f32."""
    u = ELEMENT[t]
    bits = []
    for x in values:
        x = np.asarray(x, _F64)
        nan = np.isnan(x)
        if u == "f64":
            bits.append(x)
            continue
        if u == "bf16":
            b = to_bf16(x)
        else:
            with np.errstate(all="ignore"):
                b = x.astype(_DTYPE[u]).view(np.uint16 if u == "f16" else np.uint32)
        if np.any(nan):
            b = np.where(nan, CANONICAL_NAN[u], b).astype(b.dtype)
        bits.append(b)
    if t in ("f16x2", "bf16x2"):
        lo, hi = (np.asarray(b).astype(np.uint32) for b in bits)
        return (hi << np.uint32(16)) | lo
    if u == "f32":
        return np.asarray(bits[0]).view(np.float32)
    if u == "f16":
        return np.asarray(bits[0]).view(np.float16)
    return bits[0]


def round_exact(s, err, u: str, mode: str):
    """The value ``s + err`` rounded once to element type ``u`` in ``mode``, as float64."""
    if u == "f64":
        return directed(s, err, mode)
    odd = to_odd(s, err)
    if u == "bf16":
        return bf16_to_f32(to_bf16(odd, mode)).astype(_F64)
    return round_float(odd, _DTYPE[u], mode).astype(_F64)


def _quotient(a, b):
    with np.errstate(all="ignore"):
        q = a / b
        p, pe = two_prod(q, b)
        r = (a - p) - pe
        err = np.sign(r) * np.sign(b)
    return q, np.where(np.isfinite(q) & np.isfinite(err), err, 0.0)


def _sqrt(a):
    with np.errstate(all="ignore"):
        q = np.sqrt(a)
        p, pe = two_prod(q, q)
        r = (a - p) - pe
    return q, np.where(np.isfinite(q) & np.isfinite(r), np.sign(r), 0.0)


def _exact_sign(*terms):
    """The sign (-1, 0, 1) of the exact sum of float64 ``terms`` (none overflowing): Shewchuk's
    Grow-Expansion turns them into a nonoverlapping expansion of the same exact sum, whose
    largest nonzero component carries its sign."""
    expansion = [np.asarray(terms[0], _F64)]
    for term in terms[1:]:
        q = np.asarray(term, _F64)
        grown = []
        for component in expansion:
            q, h = two_sum(q, component)
            grown.append(h)
        grown.append(q)
        expansion = grown
    sign = np.zeros(np.shape(expansion[-1]))
    for component in reversed(expansion):
        sign = np.where(sign == 0, np.sign(component), sign)
    return sign


def _fma(a, b, c):
    """f64 fma: ``s`` is ``a*b + c`` rounded once to nearest (Boldo and Melquiond: the exact
    product ``ph + pl``, the exact sum ``th + tl`` of ``c`` and ``ph``, ``tl + pl`` rounded to
    odd, then one rounding of the sum); ``err`` has the sign of the exact ``a*b + c - s``,
    all the directed modes need. Exact while no intermediate overflows or underflows
    (:func:`_hard` sends the other elements to :mod:`kernelcheck.emu.exactfloat`)."""
    ph, pl = two_prod(a, b)
    th, tl = two_sum(c, ph)
    u, ue = two_sum(tl, pl)
    with np.errstate(all="ignore"):
        s = th + to_odd(u, ue)
    return s, _exact_sign(ph, pl, c, -s)


def _fma_narrow(a, b, c):
    """fma of values of at most 24 significand bits: their product is exact in float64."""
    with np.errstate(all="ignore"):
        return two_sum(a * b, c)


def exact_op(name: str, element: str = "f64"):
    """``f(*float64 values) -> (s, err)`` of an IEEE operation."""
    if name == "add":
        return two_sum
    if name == "sub":
        return lambda a, b: two_sum(a, -b)
    if name == "mul":
        return two_prod
    if name == "div":
        return _quotient
    if name == "rcp":
        return lambda a: _quotient(np.ones_like(a), a)
    if name == "sqrt":
        return _sqrt
    if name == "fma":
        return _fma if element == "f64" else _fma_narrow
    raise ValueError(name)


#: Magnitudes past which the float64 error-free transformations may overflow (Dekker's
#: split of an operand, a product) or lose low bits to underflow.
_LARGE = 2.0**995
_SMALL = 2.0**-800


def _hard(name: str, parts, s):
    """Elements of an f64 operation whose float64 computation may not be exact: finite
    operands with an operand, the product or the result near the ends of the range."""
    finite = np.ones(np.shape(s), bool)
    big = np.zeros(np.shape(s), bool)
    tiny = np.zeros(np.shape(s), bool)
    for p in parts:
        a = np.abs(p)
        finite &= np.isfinite(p)
        big |= a >= _LARGE
        tiny |= (a < _SMALL) & (a != 0)
    with np.errstate(all="ignore"):
        if name in ("add", "sub"):
            hard = ~np.isfinite(s)
        elif name == "mul":
            m = np.abs(s)
            hard = big | ~np.isfinite(s) | (m < _SMALL) | (m >= _LARGE)
        elif name == "fma":
            m = np.abs(parts[0] * parts[1])
            r = np.abs(s)
            hard = big | tiny | (m < _SMALL) | ~(m < _LARGE) | (r < _SMALL) | ~np.isfinite(s)
        elif name in ("div", "rcp"):
            divisor = parts[-1]
            q = np.abs(s)
            hard = (divisor != 0) & (big | tiny | ((q < _SMALL) & (q != 0)) | ~(q < _LARGE))
        elif name == "sqrt":
            hard = (parts[0] > 0) & (big | tiny)
        else:
            raise ValueError(name)
    return finite & hard


def rounded(name: str, parts, u: str, mode: str):
    """The IEEE operation ``name`` of exact float64 element values ``parts`` rounded once to
    element type ``u`` in ``mode``, as float64 values (PTX ISA 9.7.3 "Floating Point
    Instructions": ``.rn``, ``.rz``, ``.rm``, ``.rp``; 9.7.3.6 fma "computes the product of
    a and b to infinite precision and then adds c to this product, again in infinite
    precision. The resulting value is then rounded").

    Signed zeros follow IEEE 754 6.3: an exact zero sum of opposite signs is +0, except under
    ``.rm`` where it is -0; the sum of two zeros of one sign keeps it.
    """
    parts = np.broadcast_arrays(*[np.asarray(p, _F64) for p in parts])
    s, err = exact_op(name, u)(*parts)
    r = round_exact(s, err, u, mode)
    if name in ("add", "sub", "fma") and mode == "rm":
        if name == "fma":
            with np.errstate(all="ignore"):
                x, y = parts[0] * parts[1], parts[2]
        else:
            x, y = parts[0], parts[1] if name == "add" else -parts[1]
        exact_zero = (s == 0) & (err == 0)
        plus_zeros = (x == 0) & (y == 0) & ~np.signbit(x) & ~np.signbit(y)
        r = np.where(exact_zero & ~plus_zeros, -0.0, r)
    if name == "fma":
        # An infinite c with finite a and b is the result (their exact product is finite,
        # however large); with an infinite or NaN a or b the IEEE rules of the product and
        # the sum apply, as numpy computes them.
        a, b, c = parts
        with np.errstate(all="ignore"):
            special = ~(np.isfinite(a) & np.isfinite(b) & np.isfinite(c))
            if np.any(special):
                ieee = np.where(np.isfinite(a) & np.isfinite(b), c, a * b + c)
                r = np.where(special, ieee, r)
    if u == "f64":
        hard = _hard(name, parts, s)
        if np.any(hard):
            shape = np.shape(r)
            flat = np.array(r, _F64).reshape(-1)
            columns = [p.reshape(-1) for p in parts]
            for i in np.flatnonzero(hard):
                flat[i] = exact(name, tuple(float(c[i]) for c in columns), "f64", mode)
            r = flat.reshape(shape)
    return r


def flush_to_zero(x, u: str):
    """Subnormal values of element type ``u`` (given as float64) to zero of their sign."""
    x = np.asarray(x, _F64)
    sub = (np.abs(x) < _TINY[u]) & (x != 0)
    return np.where(sub, np.copysign(0.0, x), x) if np.any(sub) else x


def finish(r, u: str, *, ftz=False, sat=False, relu=False):
    """The modifiers applied to a rounded result (float64 values of element type ``u``)."""
    if ftz:
        r = flush_to_zero(r, u)
    if sat:
        r = np.where(np.isnan(r), 0.0, np.clip(r, 0.0, 1.0))
    if relu:
        r = np.where(r < 0, 0.0, r)
    return r


def minmax(a, b, is_min: bool, nan_mode: bool):
    """PTX min/max of exact float64 values (see the module notes)."""
    na, nb = np.isnan(a), np.isnan(b)
    if is_min:
        r = np.where(a < b, a, b)
        both_zero = (a == 0) & (b == 0)
        r = np.where(both_zero & (np.signbit(a) | np.signbit(b)), -0.0, r)
    else:
        r = np.where(a > b, a, b)
        both_zero = (a == 0) & (b == 0)
        r = np.where(both_zero & ~(np.signbit(a) & np.signbit(b)), 0.0, r)
    r = np.where(na & ~nb, b, np.where(nb & ~na, a, r))
    bad = (na | nb) if nan_mode else (na & nb)
    return np.where(bad, np.nan, r)


def sign_op(bits, t: str, op: str, ftz: bool = False):
    """abs/neg on unsigned bit patterns of type ``t``: the sign bit cleared or flipped, the
    NaN payload kept (ISA 9.7.3.7-8); ``ftz`` first makes subnormals zero of their sign."""
    u = ELEMENT[t]
    width = {"f16": 16, "bf16": 16, "f32": 32, "f64": 64}[u]
    exp_bits = {"f16": 5, "bf16": 8, "f32": 8, "f64": 11}[u]
    if t in ("f16x2", "bf16x2"):
        v = np.asarray(bits).astype(np.uint32)
        halves = [v & np.uint32(0xFFFF), v >> np.uint32(16)]
        out = [sign_op(h.astype(np.uint16), u, op, ftz).astype(np.uint32) for h in halves]
        return out[0] | (out[1] << np.uint32(16))
    dt = {16: np.uint16, 32: np.uint32, 64: np.uint64}[width]
    v = np.asarray(bits).astype(dt)
    sign = dt(1 << (width - 1))
    if ftz:
        mant = (1 << (width - 1 - exp_bits)) - 1
        subnormal = ((v & ~sign) >> dt(width - 1 - exp_bits) == 0) & (v & dt(mant) != 0)
        v = np.where(subnormal, v & sign, v).astype(dt)
    return (v & ~sign if op == "abs" else v ^ sign).astype(dt)
