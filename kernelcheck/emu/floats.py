"""Floating-point helpers of the approximate instructions and conversions: rounding of a
float64 value to a narrower type, flush-to-zero, saturation, NaN-aware min/max.

The IEEE operations themselves (add, sub, mul, div, fma, sqrt, rcp, min, max) round once from
the exact result in :mod:`kernelcheck.emu.fparith`; these helpers serve the ``.approx``
instructions (computed in float64, more accurate than the ISA requires) and ``cvt``.

* :func:`round_to` rounds float64 values to float32/float16 with ``.rn``/``.rz``/``.rm``/
  ``.rp`` (PTX ISA 9.7.3 "Rounding modifiers"); exact when the float64 value is exact.
* ``.ftz`` flushes subnormal values to zero of the same sign.
* ``.sat`` clamps to [0.0, 1.0]; NaN becomes 0.0.
"""

from __future__ import annotations

import numpy as np

from kernelcheck.emu.values import bf16_to_f32, f32_to_bf16

__all__ = ["round_to", "flush", "saturate", "fmin", "fmax", "to_compute", "from_compute"]

_TINY = {np.dtype(np.float32): np.float32(1.1754944e-38),
         np.dtype(np.float64): np.float64(2.2250738585072014e-308),
         np.dtype(np.float16): np.float16(6.104e-05)}


def to_compute(values, ptx_type: str):
    """Values of a PTX float type as the numpy float dtype they are computed in."""
    if ptx_type == "bf16":
        return bf16_to_f32(values)
    return values


def from_compute(values, ptx_type: str):
    """Inverse of :func:`to_compute` (bf16 results are rounded to nearest even)."""
    if ptx_type == "bf16":
        return f32_to_bf16(values)
    return values


def round_to(exact: np.ndarray, dtype: np.dtype, mode: str) -> np.ndarray:
    """Round float64 values to ``dtype`` with PTX rounding ``mode`` (rn, rz, rm, rp)."""
    dtype = np.dtype(dtype)
    nearest = np.asarray(exact).astype(dtype)
    if mode in ("rn", "") or dtype == np.float64:
        return nearest
    back = nearest.astype(np.float64)
    exact = np.asarray(exact, dtype=np.float64)
    inf = np.array(np.inf, dtype=dtype)
    if mode == "rz":
        step = np.abs(back) > np.abs(exact)
        toward = np.array(0, dtype=dtype)
    elif mode == "rm":
        step = back > exact
        toward = -inf
    elif mode == "rp":
        step = back < exact
        toward = inf
    else:
        raise ValueError(mode)
    step &= np.isfinite(exact)
    if np.any(step):
        nearest = np.where(step, np.nextafter(nearest, toward), nearest)
    if mode == "rz":
        # Overflow to infinity under rz goes to the largest finite value instead.
        big = np.isinf(nearest) & np.isfinite(exact)
        if np.any(big):
            nearest = np.where(big, np.copysign(np.finfo(dtype).max, exact).astype(dtype),
                               nearest)
    return nearest


def flush(values: np.ndarray) -> np.ndarray:
    """Flush subnormal values to signed zero (``.ftz``)."""
    values = np.asarray(values)
    tiny = _TINY.get(values.dtype)
    if tiny is None:
        return values
    sub = (np.abs(values) < tiny) & (values != 0)
    if np.any(sub):
        return np.where(sub, np.copysign(np.zeros((), values.dtype), values), values)
    return values


def saturate(values: np.ndarray) -> np.ndarray:
    """Clamp to [0, 1] with NaN to 0 (``.sat``)."""
    values = np.asarray(values)
    out = np.clip(values, 0, 1)
    return np.where(np.isnan(values), np.zeros((), values.dtype), out).astype(values.dtype)


def fmin(a, b, nan_propagate: bool = False):
    """PTX ``min.f*``: the non-NaN operand when one is NaN (``fmin``), unless ``.NaN``."""
    return np.minimum(a, b) if nan_propagate else np.fmin(a, b)


def fmax(a, b, nan_propagate: bool = False):
    """PTX ``max.f*``: the non-NaN operand when one is NaN (``fmax``), unless ``.NaN``."""
    return np.maximum(a, b) if nan_propagate else np.fmax(a, b)
