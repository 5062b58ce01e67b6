"""The operand values the generated sweeps cross: the edges of each type.

Integers: 0, 1, the largest and smallest values of every width read signed and unsigned, and
a pattern whose halves differ. Floats: both zeros, +-1, 1.5, the smallest and largest
subnormals, the smallest normal, the largest finite value, both infinities and a NaN.
"""

from __future__ import annotations

__all__ = ["INT_VALUES", "F16_VALUES", "BF16_VALUES", "F32_VALUES", "F64_VALUES",
           "half_pairs", "hexes"]


def hexes(values) -> tuple[str, ...]:
    return tuple(f"{v:#x}" for v in values)


INT_VALUES = hexes([0x0, 0x1, 0x7FFF, 0x8000, 0xFFFF, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF,
                    0x7FFFFFFFFFFFFFFF, 0x8000000000000000, 0xFFFFFFFFFFFFFFFF, 0x180018001])
F16_VALUES = hexes([0x0000, 0x8000, 0x3C00, 0xBC00, 0x3E00, 0x0001, 0x83FF, 0x0400, 0x7BFF,
                    0x7C00, 0xFC00, 0x7E00])
BF16_VALUES = hexes([0x0000, 0x8000, 0x3F80, 0xBF80, 0x3FC0, 0x0001, 0x807F, 0x0080, 0x7F7F,
                     0x7F80, 0xFF80, 0x7FC0])
F32_VALUES = hexes([0x00000000, 0x80000000, 0x3F800000, 0xBF800000, 0x3FC00000, 0x00000001,
                    0x807FFFFF, 0x00800000, 0x7F7FFFFF, 0x7F800000, 0xFF800000, 0x7FC00000])
F64_VALUES = hexes([0x0, 0x8000000000000000, 0x3FF0000000000000, 0xBFF0000000000000,
                    0x3FF8000000000000, 0x0000000000000001, 0x800FFFFFFFFFFFFF,
                    0x0010000000000000, 0x7FEFFFFFFFFFFFFF, 0x7FF0000000000000,
                    0xFFF0000000000000, 0x7FF8000000000000])


def half_pairs(values: tuple[str, ...]) -> tuple[str, ...]:
    """Two 16-bit values per 32-bit word: value k in the lower half, value k + 5 in the upper,
    so that crossing the words crosses the lower halves and the upper halves alike."""
    n = len(values)
    return hexes(int(values[k], 16) | int(values[(k + 5) % n], 16) << 16 for k in range(n))
