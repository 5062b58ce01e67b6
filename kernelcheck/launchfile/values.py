"""Typed values of a launch file: PTX scalar types to little-endian bytes and back.

A launch file writes numbers as JSON numbers or strings; this module turns them into the bytes
a kernel sees and turns bytes read back into numbers for people. The encodings are those of
the PTX ISA's fundamental types (PTX ISA 5.2.1 "Fundamental Types"): two's-complement integers,
IEEE 754 binary16/32/64 for ``.f16``/``.f32``/``.f64``, and ``.bf16`` as the upper half of a
binary32 (PTX ISA 5.2.1, "Alternate Floating-Point Data Formats").

Strings give what JSON cannot: ``"0x..."`` is the raw bit pattern of any type, and
``"nan"``, ``"inf"``, ``"-inf"`` and ``"-0.0"`` are the special floating-point values.
"""

from __future__ import annotations

import math
import struct

import numpy as np

__all__ = [
    "INTEGER_TYPES",
    "FLOAT_TYPES",
    "SCALAR_TYPES",
    "type_width",
    "numpy_dtype",
    "encode_value",
    "encode_values",
    "decode_values",
    "format_value",
    "bf16_bits_from_float",
    "LaunchValueError",
]

#: Integer types and their (size in bytes, signed).
INTEGER_TYPES: dict[str, tuple[int, bool]] = {
    "u8": (1, False), "s8": (1, True), "b8": (1, False),
    "u16": (2, False), "s16": (2, True), "b16": (2, False),
    "u32": (4, False), "s32": (4, True), "b32": (4, False),
    "u64": (8, False), "s64": (8, True), "b64": (8, False),
}
#: Floating-point types and their size in bytes.
FLOAT_TYPES: dict[str, int] = {"f16": 2, "bf16": 2, "f32": 4, "f64": 8}
#: Every type a launch file may name for values, parameters and buffers.
SCALAR_TYPES = frozenset(INTEGER_TYPES) | frozenset(FLOAT_TYPES)

_FLOAT_FORMATS = {"f16": "<e", "f32": "<f", "f64": "<d"}
_SPECIAL_FLOATS = {"nan": math.nan, "+nan": math.nan, "-nan": -math.nan, "inf": math.inf,
                   "+inf": math.inf, "-inf": -math.inf, "infinity": math.inf,
                   "-infinity": -math.inf}


class LaunchValueError(ValueError):
    """A value that does not fit its type; the message says which value and which type."""


def type_width(type_name: str) -> int:
    """Size in bytes of a launch-file scalar type (``u32`` -> 4)."""
    if type_name in INTEGER_TYPES:
        return INTEGER_TYPES[type_name][0]
    if type_name in FLOAT_TYPES:
        return FLOAT_TYPES[type_name]
    raise LaunchValueError(f"unknown type {type_name!r} (expected one of {_type_list()})")


def numpy_dtype(type_name: str) -> np.dtype:
    """The numpy dtype holding values of ``type_name``; ``bf16`` is held as its ``uint16`` bits.

    >>> numpy_dtype("s16")
    dtype('int16')
    """
    if type_name in INTEGER_TYPES:
        size, signed = INTEGER_TYPES[type_name]
        return np.dtype(f"<{'i' if signed else 'u'}{size}")
    if type_name == "bf16":
        return np.dtype("<u2")
    if type_name in _FLOAT_FORMATS:
        return np.dtype(_FLOAT_FORMATS[type_name])
    raise LaunchValueError(f"unknown type {type_name!r} (expected one of {_type_list()})")


def bf16_bits_from_float(value: float) -> int:
    """The bf16 bit pattern nearest to ``value`` (round to nearest even, via binary32).

    The value is first rounded to binary32 (as numpy does), then to bf16; a launch file that
    needs an exact pattern writes it in hex.

    >>> hex(bf16_bits_from_float(1.0)), hex(bf16_bits_from_float(-2.5))
    ('0x3f80', '0xc020')
    """
    bits = struct.unpack("<I", struct.pack("<f", np.float32(value)))[0]
    if math.isnan(value):
        return (bits >> 16) | 0x0040
    rounding = 0x7FFF + ((bits >> 16) & 1)
    return ((bits + rounding) >> 16) & 0xFFFF


def encode_value(value: object, type_name: str) -> bytes:
    """One value of ``type_name`` as little-endian bytes.

    ``value`` is a JSON number, a bool, or a string: decimal or ``0x``/``0b`` integer text, a
    ``0x`` bit pattern (for float types too), or ``nan``/``inf``/``-inf``/``-0.0``.
    Integers may be given signed or unsigned (``-1`` and ``0xffffffff`` are the same ``u32``).

    >>> encode_value(-1, "u16").hex(), encode_value("0x3f800000", "f32").hex()
    ('ffff', '0000803f')
    """
    width = type_width(type_name)
    if isinstance(value, bool):
        value = int(value)
    if isinstance(value, str):
        text = value.strip().lower().replace("_", "")
        if text.startswith(("0x", "-0x", "0b", "-0b")):
            return _encode_int(_parse_int(value, text), width, type_name, bits=True)
        if type_name in FLOAT_TYPES:
            if text in _SPECIAL_FLOATS:
                return _encode_float(_SPECIAL_FLOATS[text], type_name)
            try:
                return _encode_float(float(text), type_name)
            except ValueError:
                raise LaunchValueError(f"{value!r} is not a {type_name} value") from None
        return _encode_int(_parse_int(value, text), width, type_name)
    if isinstance(value, int):
        if type_name in FLOAT_TYPES:
            return _encode_float(float(value), type_name)
        return _encode_int(value, width, type_name)
    if isinstance(value, float):
        if type_name in FLOAT_TYPES:
            return _encode_float(value, type_name)
        if value.is_integer():
            return _encode_int(int(value), width, type_name)
        raise LaunchValueError(f"{value!r} is not an integer, but the type is {type_name}")
    raise LaunchValueError(f"{value!r} is not a number (type {type_name})")


def encode_values(values: list, type_name: str) -> bytes:
    """A list of values of one type, concatenated."""
    if not isinstance(values, list):
        raise LaunchValueError(f"values must be a list, not {type(values).__name__}")
    out = bytearray()
    for index, value in enumerate(values):
        try:
            out += encode_value(value, type_name)
        except LaunchValueError as error:
            raise LaunchValueError(f"value [{index}]: {error}") from None
    return bytes(out)


def decode_values(data: bytes, type_name: str) -> list:
    """The values of ``type_name`` held in ``data`` (floats as Python floats, bf16 included).

    >>> decode_values(bytes.fromhex("803f0000"), "bf16")
    [1.0, 0.0]
    """
    width = type_width(type_name)
    usable = len(data) - len(data) % width
    array = np.frombuffer(data[:usable], dtype=numpy_dtype(type_name))
    if type_name == "bf16":
        return (array.astype(np.uint32) << 16).view(np.float32).astype(float).tolist()
    if type_name in FLOAT_TYPES:
        return array.astype(float).tolist()
    return [int(v) for v in array.tolist()]


def format_value(value: int | float, type_name: str) -> str:
    """A value as a person reads it: integers in decimal, floats in the shortest text that
    reads back as the same value of their type (``nan``, ``-0.0``, ``2.0000002``)."""
    if type_name in FLOAT_TYPES:
        if math.isnan(value):
            return "-nan" if math.copysign(1.0, value) < 0 else "nan"
        if type_name == "f16":
            return str(np.float16(value))
        if type_name in ("f32", "bf16"):
            return str(np.float32(value))  # the shortest text that reads back the same
        return repr(float(value))
    return str(int(value))


def _type_list() -> str:
    return ", ".join([*INTEGER_TYPES, *FLOAT_TYPES])


def _parse_int(original: str, text: str) -> int:
    try:
        return int(text, 0)
    except ValueError:
        raise LaunchValueError(f"{original!r} is not an integer") from None


def _encode_int(value: int, width: int, type_name: str, *, bits: bool = False) -> bytes:
    low = -(1 << (8 * width - 1))
    high = (1 << (8 * width)) - 1
    if not low <= value <= high:
        kind = "bit pattern" if bits else "value"
        raise LaunchValueError(f"{kind} {value:#x} does not fit {type_name} ({width} bytes)"
                          if bits else f"{kind} {value} does not fit {type_name}")
    return (value & high).to_bytes(width, "little")


def _encode_float(value: float, type_name: str) -> bytes:
    if type_name == "bf16":
        return bf16_bits_from_float(value).to_bytes(2, "little")
    if type_name == "f16":
        if math.isfinite(value) and abs(value) >= 65520.0:
            raise LaunchValueError(f"{value!r} overflows f16 (largest finite 65504); give the "
                              f"bits as hex for infinity")
        return np.array([value], dtype="<f2").tobytes()
    try:
        return struct.pack(_FLOAT_FORMATS[type_name], value)
    except OverflowError:
        raise LaunchValueError(f"{value!r} overflows {type_name}; give 'inf' or the bits as "
                               f"hex") from None
