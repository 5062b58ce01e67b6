"""PTX types as numpy dtypes, and the register-width rules of the PTX ISA.

Registers are stored as unsigned integer arrays of their declared width (``pred`` as
``bool``), one element per lane, and are never modified in place: every write makes a new
array, so several registers may share one array without harm. An instruction reads a register
through a view of the instruction's type. Where the register and the instruction type differ in
width, the PTX ISA (section 5.2.5 "Operand Size Exceeding Instruction-Type Size") applies:
wider source registers are truncated to the low bits; narrower ones are sign- or zero-extended
by the type's signedness; a wider destination register is sign-extended for signed types and
zero-extended otherwise.

``bf16`` values are carried as their ``uint16`` bit patterns and computed in float32.

``.b128`` (PTX ISA 5.2.1 "Fundamental Types", PTX ISA 8.3) has no numpy integer type: its
registers hold 16-byte values (:data:`B128`, ``numpy.void``), little-endian like memory, so
the low 64 bits are the first 8 bytes. Only moves, loads and stores take them; the width rules
above apply to them too (a ``.b128`` register read as ``.b64`` gives its low 64 bits).
"""

from __future__ import annotations

import numpy as np

__all__ = ["NP_TYPE", "UINT_OF_SIZE", "SINT_OF_SIZE", "B128", "width_of", "storage_dtype",
           "bits_dtype", "is_float", "is_signed", "bf16_to_f32", "f32_to_bf16", "to_type",
           "from_type", "immediate_value", "flip_bits"]

#: The 16-byte values of ``.b128`` registers.
B128 = np.dtype("V16")

NP_TYPE: dict[str, np.dtype] = {
    "pred": np.dtype(np.bool_),
    "b8": np.dtype(np.uint8), "u8": np.dtype(np.uint8), "s8": np.dtype(np.int8),
    "b16": np.dtype(np.uint16), "u16": np.dtype(np.uint16), "s16": np.dtype(np.int16),
    "f16": np.dtype(np.float16), "bf16": np.dtype(np.uint16),
    "b32": np.dtype(np.uint32), "u32": np.dtype(np.uint32), "s32": np.dtype(np.int32),
    "f32": np.dtype(np.float32), "f16x2": np.dtype(np.uint32), "bf16x2": np.dtype(np.uint32),
    "tf32": np.dtype(np.float32),
    "b64": np.dtype(np.uint64), "u64": np.dtype(np.uint64), "s64": np.dtype(np.int64),
    "f64": np.dtype(np.float64),
    "b128": B128,
}

UINT_OF_SIZE = {1: np.dtype(np.uint8), 2: np.dtype(np.uint16), 4: np.dtype(np.uint32),
                8: np.dtype(np.uint64)}
SINT_OF_SIZE = {1: np.dtype(np.int8), 2: np.dtype(np.int16), 4: np.dtype(np.int32),
                8: np.dtype(np.int64)}


def width_of(ptx_type: str) -> int:
    """Bytes of a PTX type (``pred`` counts as 1)."""
    return NP_TYPE[ptx_type].itemsize


def storage_dtype(reg_type: str) -> np.dtype:
    """The dtype a register of declared type ``reg_type`` is stored as."""
    if reg_type == "pred":
        return NP_TYPE["pred"]
    return bits_dtype(width_of(reg_type))


def bits_dtype(size: int) -> np.dtype:
    """The raw-bits dtype of ``size`` bytes: an unsigned integer, or :data:`B128`."""
    return B128 if size == 16 else UINT_OF_SIZE[size]


def _low64(values: np.ndarray) -> np.ndarray:
    """The low 64 bits of 16-byte values, as uint64."""
    values = np.ascontiguousarray(values)
    return values.reshape(-1).view(np.uint64)[0::2].reshape(values.shape)


def _widen128(values: np.ndarray, signed: bool) -> np.ndarray:
    """16-byte values of integers of at most 64 bits, sign-extended when ``signed``."""
    wide = np.asarray(values).astype(np.int64 if signed else np.uint64)
    pair = np.zeros(wide.shape + (2,), dtype=np.uint64)
    pair[..., 0] = wide.astype(np.uint64)
    if signed:
        pair[..., 1] = np.where(wide < 0, np.uint64(0xFFFFFFFFFFFFFFFF), np.uint64(0))
    return pair.view(B128).reshape(wide.shape)


def flip_bits(reg: np.ndarray, lane: int, bits: int) -> None:
    """XOR ``bits`` into element ``lane`` of a register array in place (fault injection):
    bit 0 of a predicate; the low ``8 * itemsize`` bits of any other register."""
    if reg.dtype == np.bool_:
        reg[lane] = reg[lane] ^ bool(bits & 1)
        return
    raw = reg.reshape(-1).view(np.uint8).reshape(reg.shape[0], reg.itemsize)
    flip = (bits & ((1 << 8 * reg.itemsize) - 1)).to_bytes(reg.itemsize, "little")
    raw[lane] ^= np.frombuffer(flip, dtype=np.uint8)


def is_float(ptx_type: str) -> bool:
    return ptx_type[0] == "f" or ptx_type.startswith("bf") or ptx_type == "tf32"


def is_signed(ptx_type: str) -> bool:
    return ptx_type[0] == "s"


def bf16_to_f32(bits: np.ndarray) -> np.ndarray:
    """bf16 bit patterns (uint16) to float32 values."""
    return (np.asarray(bits).astype(np.uint32) << np.uint32(16)).view(np.float32)


def f32_to_bf16(values: np.ndarray) -> np.ndarray:
    """float32 values to bf16 bit patterns, rounding to nearest even (NaN stays NaN)."""
    v = np.asarray(values, dtype=np.float32)
    bits = v.view(np.uint32)
    rounding = np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1))
    out = ((bits + rounding) >> np.uint32(16)).astype(np.uint16)
    nan = np.isnan(v)
    if np.any(nan):
        out = np.where(nan, ((bits >> np.uint32(16)) | np.uint32(0x40)).astype(np.uint16), out)
    return out


def to_type(stored: np.ndarray, ptx_type: str):
    """View a stored register array (unsigned, any width) as ``ptx_type``."""
    want = NP_TYPE[ptx_type]
    have = stored.dtype
    if have == want:
        return stored
    if have == B128:
        if want == np.bool_:
            return _low64(stored) != 0
        return to_type(_low64(stored), ptx_type)
    if want == B128:  # .b128 is not signed: zero-extended
        return _widen128(stored, False)
    if want == np.bool_:
        return stored != 0
    if have == np.bool_:
        return stored.astype(want)
    if have.itemsize == want.itemsize:
        return stored.view(want)
    if have.itemsize > want.itemsize:
        return stored.astype(UINT_OF_SIZE[want.itemsize]).view(want)
    if is_signed(ptx_type):
        return stored.view(SINT_OF_SIZE[have.itemsize]).astype(want)
    if want.kind == "f":
        return stored.astype(UINT_OF_SIZE[want.itemsize]).view(want)
    return stored.astype(want)


def from_type(value, ptx_type: str, storage: np.dtype, lanes: int) -> np.ndarray:
    """Convert a value of ``ptx_type`` to a register's storage dtype, as an array of ``lanes``."""
    arr = np.asarray(value)
    if arr.dtype != NP_TYPE[ptx_type] and ptx_type != "pred":
        arr = arr.astype(NP_TYPE[ptx_type])
    if arr.ndim == 0:
        arr = np.full(lanes, arr, dtype=arr.dtype)
    if arr.dtype == B128 or storage == B128:
        if arr.dtype == storage:
            return arr
        if arr.dtype == B128:  # a narrower register keeps the low bits
            return from_type(_low64(arr), "u64", storage, lanes)
        if arr.dtype.kind == "f":
            arr = arr.view(UINT_OF_SIZE[arr.itemsize])
        return _widen128(arr, is_signed(ptx_type))
    if storage == np.bool_:
        return arr.astype(np.bool_) if arr.dtype != np.bool_ else arr
    if arr.dtype == np.bool_:
        return arr.astype(storage)
    size = arr.dtype.itemsize
    if size == storage.itemsize:
        return arr.view(storage)
    if size > storage.itemsize:
        return arr.view(UINT_OF_SIZE[size]).astype(storage)
    if is_signed(ptx_type):
        return arr.astype(SINT_OF_SIZE[storage.itemsize]).view(storage)
    return arr.view(UINT_OF_SIZE[size]).astype(storage)


def immediate_value(value, kind: str, ptx_type: str):
    """A 0-d numpy value of ``ptx_type`` for an immediate operand.

    Integer immediates are taken modulo 2**width (so ``-1`` is all ones); hexadecimal float
    forms (``0f...``/``0d...``) are bit patterns converted to the instruction's float type.
    """
    dtype = NP_TYPE[ptx_type]
    if ptx_type == "pred":
        return np.bool_(bool(value))
    if dtype == B128:
        if kind not in ("int",):
            raise ValueError(f"a {kind} immediate is not a .b128 value")
        raw = (int(value) & ((1 << 128) - 1)).to_bytes(16, "little")
        return np.frombuffer(raw, dtype=B128).reshape(())
    if kind == "f32":
        f = np.array(value, dtype=np.uint32).view(np.float32)
        return _float_to(f, ptx_type)
    if kind == "f64":
        f = np.array(value, dtype=np.uint64).view(np.float64)
        return _float_to(f, ptx_type)
    if kind == "float":
        return _float_to(np.array(value, dtype=np.float64), ptx_type)
    if is_float(ptx_type) and ptx_type not in ("f16x2", "bf16x2"):
        if ptx_type == "bf16":
            return np.array(int(value) & 0xFFFF, dtype=np.uint16)
        bits = int(value) & ((1 << (8 * dtype.itemsize)) - 1)
        return np.array(bits, dtype=UINT_OF_SIZE[dtype.itemsize]).view(dtype)
    bits = int(value) & ((1 << (8 * dtype.itemsize)) - 1)
    return np.array(bits, dtype=UINT_OF_SIZE[dtype.itemsize]).view(dtype)


def _float_to(f: np.ndarray, ptx_type: str):
    if ptx_type == "bf16":
        return f32_to_bf16(f.astype(np.float32))
    dtype = NP_TYPE[ptx_type]
    if dtype.kind == "f":
        return f.astype(dtype)
    # A float literal used with an integer/bit type: its bit pattern at that width.
    if dtype.itemsize == 4:
        return f.astype(np.float32).view(np.uint32).view(dtype)
    if dtype.itemsize == 8:
        return f.astype(np.float64).view(np.uint64).view(dtype)
    if dtype.itemsize == 2:
        return f.astype(np.float16).view(np.uint16).view(dtype)
    raise ValueError(f"float immediate for type {ptx_type}")
