"""Two's-complement helpers shared by the integer references (plain Python integers)."""

from __future__ import annotations

import numpy as np

__all__ = ["wrap", "signed", "unsigned", "saturate", "array", "pyints"]


def unsigned(value: int, bits: int) -> int:
    """``value`` modulo 2**bits: the bit pattern of an N-bit register."""
    return value & ((1 << bits) - 1)


def signed(value: int, bits: int) -> int:
    """The N-bit pattern ``value`` read as a two's-complement number."""
    value = unsigned(value, bits)
    return value - (1 << bits) if value >> (bits - 1) else value


wrap = signed


def saturate(value: int, bits: int, is_signed: bool = True) -> int:
    """``value`` clamped to the range of an N-bit integer."""
    if is_signed:
        return max(-(1 << (bits - 1)), min((1 << (bits - 1)) - 1, value))
    return max(0, min((1 << bits) - 1, value))


def pyints(values: np.ndarray) -> list[int]:
    return [int(v) for v in values]


def array(values, dtype: str) -> np.ndarray:
    """Python integers (any sign) as an array of ``dtype``'s bit patterns."""
    dt = np.dtype(dtype)
    bits = dt.itemsize * 8
    unsigned_dtype = np.dtype(f"<u{dt.itemsize}")
    return np.array([unsigned(int(v), bits) for v in values], dtype=unsigned_dtype).view(dt)
