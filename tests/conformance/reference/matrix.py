"""References of the matrix cases: plain matrix products and the ldmatrix/stmatrix layouts
(PTX ISA 9.7.14.5.14 mma, 9.7.14.5.15 ldmatrix, 9.7.14.5.16 stmatrix). The mma kernels gather
and scatter their fragments themselves with the ISA's layouts, so a reference is the product
D = A B + C of the row-major matrices."""

from __future__ import annotations

import numpy as np

from tests.conformance.reference.registry import Inputs, reference


def _bf16(bits: np.ndarray) -> np.ndarray:
    return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def _product(a: np.ndarray, bt: np.ndarray, c: np.ndarray, k: int) -> np.ndarray:
    a = a.reshape(16, k)
    b = bt.reshape(8, k).T
    return a @ b + c.reshape(16, 8)


@reference("matrix/mma_f16")
def mma_f16(inputs: Inputs) -> dict:
    a = inputs["a"].astype(np.float64)
    bt = inputs["bt"].astype(np.float64)
    # the inputs are small integers: every product and partial sum is exact in f32
    return {"d": _product(a, bt, inputs["c"].astype(np.float64), 16).astype("<f4").ravel()}


@reference("matrix/mma_bf16")
def mma_bf16(inputs: Inputs) -> dict:
    a, bt = _bf16(inputs["a"]), _bf16(inputs["bt"])
    return {"d": _product(a, bt, inputs["c"].astype(np.float64), 16).astype("<f4").ravel()}


@reference("matrix/mma_s8")
def mma_s8(inputs: Inputs) -> dict:
    a = inputs["a"].astype(np.int64)
    bt = inputs["bt"].astype(np.int64)
    d = _product(a, bt, inputs["c"].astype(np.int64), 32)
    # s32 accumulation wraps (no .satfinite here); these values stay far inside the range
    return {"d": d.astype("<i4").ravel()}


def _block(matrix: np.ndarray, m: int) -> np.ndarray:
    """Matrix m of cases/matrix/ldmatrix.ptx: the 8x8 block at rows 8 (m % 2), cols 8 (m / 2)."""
    r, c = 8 * (m % 2), 8 * (m // 2)
    return matrix[r:r + 8, c:c + 8]


def _fragment(block: np.ndarray, lane: int, trans: bool) -> int:
    g, t = lane // 4, lane % 4
    if trans:
        lo, hi = block[2 * t][g], block[2 * t + 1][g]
    else:
        lo, hi = block[g][2 * t], block[g][2 * t + 1]
    return int(lo) | (int(hi) << 16)


@reference("matrix/ldmatrix")
def ldmatrix(inputs: Inputs) -> dict:
    matrix = inputs["src"].astype(np.int64).reshape(16, 16)
    out = []
    for lane in range(32):
        out.append(_fragment(_block(matrix, 0), lane, False))
        out += [_fragment(_block(matrix, m), lane, False) for m in range(2)]
        out += [_fragment(_block(matrix, m), lane, False) for m in range(4)]
        out += [_fragment(_block(matrix, m), lane, True) for m in range(2)]
    return {"out": np.array(out, dtype="<u4")}


@reference("matrix/stmatrix")
def stmatrix(inputs: Inputs) -> dict:
    plain = np.zeros((16, 8), dtype=np.int64)
    trans = np.zeros((16, 8), dtype=np.int64)
    for m in range(2):
        for lane in range(32):
            g, t = lane // 4, lane % 4
            lo, hi = 1000 * m + 2 * lane, 1000 * m + 2 * lane + 1
            plain[8 * m + g][2 * t], plain[8 * m + g][2 * t + 1] = lo, hi
            trans[8 * m + 2 * t][g], trans[8 * m + 2 * t + 1][g] = lo, hi
    return {"out": np.concatenate([plain.ravel(), trans.ravel()]).astype("<u2")}


@reference("matrix/cp_async")
def cp_async(inputs: Inputs) -> dict:
    # cp.async copies cp-size bytes, of which the src-size first come from the source and the
    # rest are zeros (PTX ISA 9.7.9.25)
    src = inputs["src"].tobytes()
    out = b""
    for t in range(inputs.threads):
        row = src[16 * t:16 * t + 16]
        out += row + row[:8] + bytes(8) + row[4:8] * 2 + t.to_bytes(4, "little") * 2
    return {"out": np.frombuffer(out, dtype=np.uint8)}
