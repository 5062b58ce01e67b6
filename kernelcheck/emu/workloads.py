"""How to run each fixture kernel: its buffers, their valid contents, and what it computes.

For every kernel of fixtures/src (CUDA, Triton, numba), keyed by PTX entry name:

* ``buffers(p, grid, block)``: for each pointer argument, the element type, the element range
  it may touch relative to the pointer (``lo``, ``hi``; ``lo`` < 0 for negative offsets) as a
  function of the scalar arguments, and how to fill it (random values, zeros, or valid index
  contents for gather/scatter/histogram/CSR kernels);
* ``reference(inputs, p, grid, block)``: a numpy model of the outputs from the initial buffer
  contents, valid when the buffers do not overlap (the idempotent placements).

Pointers are named as in fixtures/expected.toml ``param_names``; a field of a struct passed by
value is ``(param, byte_offset)``. :func:`setup` places buffers for an instance (either at the
addresses the instance names, or disjoint fresh allocations) and :func:`param_values` packs
the argument list. Fault-injection campaigns reuse this table.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = ["Buffer", "Workload", "WORKLOADS", "get_workload"]

F32, F64, F16 = np.float32, np.float64, np.float16
I32, U32, U8 = np.int32, np.uint32, np.uint8


@dataclass(frozen=True, slots=True)
class Buffer:
    """A pointer argument: element dtype, touched element range [lo, hi), initial contents."""

    pointer: str | tuple[str, int]
    dtype: type
    lo: int
    hi: int
    fill: object = "rand"  # "rand", "zeros", or callable(rng, count) -> array
    output: bool = False
    #: Sparse buffers (index arithmetic that wraps): element ranges touched, instead of lo/hi.
    segments: tuple[tuple[int, int], ...] | None = None


@dataclass(frozen=True, slots=True)
class Workload:
    """The per-kernel recipe (see the module docstring)."""

    kernel: str
    buffers: Callable
    reference: Callable | None
    rtol: float = 1e-5
    atol: float = 1e-5
    block_required: tuple[int, int, int] | None = None
    shared_bytes: int = 0


WORKLOADS: dict[str, Workload] = {}


def _w(name, buffers, reference=None, **kw):
    WORKLOADS[name] = Workload(name, buffers, reference, **kw)


def get_workload(kernel: str) -> Workload:
    """The workload of a fixture kernel (numba entries matched by their readable prefix)."""
    if kernel in WORKLOADS:
        return WORKLOADS[kernel]
    for key, wl in WORKLOADS.items():
        if key.startswith("numba:") and key[6:] in kernel:
            return wl
    raise KeyError(f"no workload for kernel {kernel}")


def _threads(g, b):
    return g[0] * b[0]


def _cnt(p, g, b, key="n"):
    return max(0, min(p[key], _threads(g, b)))


def _rand_index(limit):
    return lambda rng, count: rng.integers(0, max(limit, 1), size=count).astype(I32)


# ---------------------------------------------------------------- atomics.cu
def _seq_inc(counter0, limit, count):
    olds, c = [], int(counter0)
    for _ in range(count):
        olds.append(c)
        c = 0 if c >= limit else c + 1
    return np.array(olds, dtype=U32), c


_w("atomic_add_all",
   lambda p, g, b: [Buffer("sum", F32, 0, 1, output=True), Buffer("in", F32, 0, p["n"])],
   lambda x, p, g, b: {"sum": x["sum"] + np.sum(x["in"][:_cnt(p, g, b)], dtype=F64)},
   rtol=1e-4, atol=1e-4)
_w("atomic_sub_budget",
   lambda p, g, b: [Buffer("budget", U32, 0, 1, output=True)],
   lambda x, p, g, b: {"budget": (x["budget"] - U32(p["cost"]) * U32(_cnt(p, g, b)))
                       .astype(U32)})
_w("atomic_inc_ticket",
   lambda p, g, b: [Buffer("counter", U32, 0, 1, "zeros", True),
                    Buffer("tickets", U32, 0, p["n"], output=True)],
   lambda x, p, g, b: (lambda olds_c: {
       "counter": np.array([olds_c[1]], dtype=U32),
       "tickets": np.concatenate([olds_c[0], x["tickets"][_cnt(p, g, b):]])})(
       _seq_inc(x["counter"][0], p["limit"], _cnt(p, g, b))))
_w("cas_add_f64",
   lambda p, g, b: [Buffer("acc", F64, 0, 1, output=True), Buffer("in", F64, 0, p["n"])],
   lambda x, p, g, b: {"acc": x["acc"] + np.sum(x["in"][:_cnt(p, g, b)])}, rtol=1e-9)
_w("atomic_max_const", lambda p, g, b: [Buffer("m", I32, 0, 1, output=True)],
   lambda x, p, g, b: {"m": np.maximum(x["m"], 7)})
_w("atomic_max_param", lambda p, g, b: [Buffer("m", I32, 0, 1, output=True)],
   lambda x, p, g, b: {"m": np.maximum(x["m"], p["v"]) if _cnt(p, g, b) else x["m"]})
_w("atomic_min_param", lambda p, g, b: [Buffer("m", U32, 0, 1, output=True)],
   lambda x, p, g, b: {"m": np.minimum(x["m"], U32(p["v"])) if _cnt(p, g, b) else x["m"]})


def _or_bits(x, p, g, b):
    flags = x["flags"].copy()
    for i in range(_cnt(p, g, b)):
        flags[i >> 5] |= U32(1 << (i & 31))
    return {"flags": flags}


_w("atomic_or_bitmask", lambda p, g, b: [Buffer("flags", U32, 0, (p["n"] + 31) // 32,
                                                output=True)], _or_bits)


def _and_clear(x, p, g, b):
    m = x["mask"].copy()
    k = _cnt(p, g, b)
    m[:k] &= U32(~(1 << (p["bit"] & 31)) & 0xFFFFFFFF)
    return {"mask": m}


_w("atomic_and_clear", lambda p, g, b: [Buffer("mask", U32, 0, p["n"], output=True)],
   _and_clear)
_w("atomic_exch_flag", lambda p, g, b: [Buffer("flag", I32, 0, 1, output=True)],
   lambda x, p, g, b: {"flag": np.array([p["v"]], dtype=I32)})
_w("atomic_max_from_array",
   lambda p, g, b: [Buffer("m", I32, 0, 1, output=True), Buffer("in", I32, 0, p["n"])],
   lambda x, p, g, b: {"m": np.maximum(x["m"], x["in"][:_cnt(p, g, b)].max(initial=-2**31))})
_w("atomic_exch_from_memory",
   lambda p, g, b: [Buffer("slot", I32, 0, 1, output=True), Buffer("in", I32, 0, p["n"])],
   lambda x, p, g, b: {"slot": x["in"][_cnt(p, g, b) - 1:_cnt(p, g, b)]
                       if _cnt(p, g, b) else x["slot"]})


# ---------------------------------------------------------------- elementwise, templates
def _map(out, ins, dtype, fn, n="n", **kw):
    def buffers(p, g, b):
        return [Buffer(out, dtype, 0, p[n], output=True)] + [Buffer(i, dtype, 0, p[n])
                                                            for i in ins]

    def ref(x, p, g, b):
        k = _cnt(p, g, b, n)
        r = x[out].copy()
        r[:k] = fn(*[x[i][:k] for i in ins], p=p, k=k)
        return {out: r}
    return buffers, ref


def _reg_map(name, out, ins, dtype, fn, **kw):
    buffers, ref = _map(out, ins, dtype, fn, n=kw.pop("n", "n"))
    _w(name, buffers, ref, **kw)


_reg_map("vec_add", "out", ["a", "b"], F32, lambda a, b, p, k: a + b)
_reg_map("saxpy", "out", ["x", "y"], F32, lambda x, y, p, k: F32(p["a"]) * x + y)
_reg_map("relu_f32", "out", ["in"], F32, lambda a, p, k: np.fmax(a, F32(0)))
_reg_map("fill_f32", "out", [], F32, lambda p, k: F32(p["v"]))
_reg_map("write_thread_ids", "out", [], I32, lambda p, k: np.arange(k, dtype=I32))
_reg_map("_Z5axpbyIfEvPT_PKS0_S3_S0_S0_i", "out", ["x", "y"], F32,
         lambda x, y, p, k: F32(p["a"]) * x + F32(p["b"]) * y)
_reg_map("_Z5axpbyIdEvPT_PKS0_S3_S0_S0_i", "out", ["x", "y"], F64,
         lambda x, y, p, k: p["a"] * x + p["b"] * y, rtol=1e-12)
_reg_map("_ZN2kc6detail6copy_nIiEEvPT_PKS2_i", "dst", ["src"], I32, lambda s, p, k: s)
_reg_map("offset_size_t", "out", ["in"], F32, lambda a, p, k: a + F32(p["s"]))
_reg_map("memset_u8", "dst", [], U8, lambda p, k: U8(p["v"]))
_reg_map("copy_bytes", "dst", ["src"], U8, lambda s, p, k: s)
_reg_map("noinline_store_scaled", "out", ["in"], F32, lambda a, p, k: F32(p["s"]) * a)
_reg_map("inline_poly", "out", ["in"], F32, lambda a, p, k: np.clip(
    ((F32(0.5) * a + F32(1)) * a - F32(2)) * a + F32(3), 0, 1))


def _inplace(name, ptr, dtype, fn, **kw):
    _w(name, lambda p, g, b: [Buffer(ptr, dtype, 0, p["n"], output=True)],
       lambda x, p, g, b: {ptr: np.concatenate([fn(x[ptr][:_cnt(p, g, b)], p),
                                                x[ptr][_cnt(p, g, b):]])}, **kw)


_inplace("inplace_add_one", "a", F32, lambda a, p: a + F32(1))
_inplace("inplace_scale", "a", F32, lambda a, p: a * F32(p["s"]))
_inplace("_ZN2kc19scale_shift_inplaceEPfffi", "a", F32,
         lambda a, p: a * F32(p["s"]) + F32(p["t"]))
# inline_asm.cu: a[i] + 1 in inline PTX blocks with shadowing scoped registers.
_inplace("asm_shadow_rmw", "a", U32, lambda a, p: a + U32(1))
_inplace("asm_guarded_increment", "a", U32, lambda a, p: a + U32(1))
_reg_map("asm_shadow_disjoint", "out", ["in"], U32, lambda a, p, k: a + U32(1))


def _two_in_place(name, y, x, dtype, fn, **kw):
    _w(name, lambda p, g, b: [Buffer(y, dtype, 0, p["n"], output=True),
                              Buffer(x, dtype, 0, p["n"])],
       lambda xs, p, g, b: {y: np.concatenate([fn(xs[y][:_cnt(p, g, b)],
                                                  xs[x][:_cnt(p, g, b)], p),
                                               xs[y][_cnt(p, g, b):]])}, **kw)


_two_in_place("daxpy_inplace", "y", "x", F64, lambda y, x, p: p["a"] * x + y, rtol=1e-12)
_two_in_place("noinline_accumulate", "acc", "in", F32, lambda y, x, p: y + x)


def _add_block_offsets(x, p, g, b):
    d = x["data"].copy()
    k = _cnt(p, g, b)
    d[:k] += x["offsets"][np.arange(k) // b[0]]
    return {"data": d}


_w("add_block_offsets", lambda p, g, b: [Buffer("data", F32, 0, p["n"], output=True),
                                         Buffer("offsets", F32, 0, g[0])], _add_block_offsets)


def _f64_to_f32(x, p, g, b):
    r = x["out"].copy()
    k = _cnt(p, g, b)
    r[:k] = x["in"][:k].astype(F32)
    return {"out": r}


_w("f64_to_f32", lambda p, g, b: [Buffer("out", F32, 0, p["n"], output=True),
                                  Buffer("in", F64, 0, p["n"])], _f64_to_f32)


# ---------------------------------------------------------------- gridstride.cu
def _gridstride(name, out, ins, dtype, fn, **kw):
    def ref(x, p, g, b):
        r = x[out].copy()
        n = p["n"]
        r[:n] = fn(*[x[i][:n] for i in ins], p=p)
        return {out: r}
    _w(name, lambda p, g, b: [Buffer(out, dtype, 0, p["n"], output=True)] +
       [Buffer(i, dtype, 0, p["n"]) for i in ins], ref, **kw)


_gridstride("scale_gridstride", "out", ["in"], F32, lambda a, p: F32(p["s"]) * a)
_gridstride("copy_gridstride_i64", "out", ["in"], F64, lambda a, p: a)


def _saxpy_gs(x, p, g, b):
    y = x["y"].copy()
    n = p["n"]
    y[:n] = F32(p["a"]) * x["x"][:n] + y[:n]
    return {"y": y}


_w("saxpy_gridstride_inplace", lambda p, g, b: [Buffer("y", F32, 0, p["n"], output=True),
                                                Buffer("x", F32, 0, p["n"])], _saxpy_gs)


# ---------------------------------------------------------------- gather_scatter.cu
_w("gather_f32",
   lambda p, g, b: [Buffer("out", F32, 0, p["n"], output=True),
                    Buffer("in", F32, 0, max(p["n"], 1)),
                    Buffer("idx", I32, 0, p["n"], _rand_index(max(p["n"], 1)))],
   lambda x, p, g, b: {"out": np.concatenate([x["in"][x["idx"][:_cnt(p, g, b)]],
                                              x["out"][_cnt(p, g, b):]])})


def _scatter(x, p, g, b):
    out = x["out"].copy()
    k = _cnt(p, g, b)
    out[x["idx"][:k]] = x["in"][:k]
    return {"out": out}


_w("scatter_f32",
   lambda p, g, b: [Buffer("out", F32, 0, max(p["n"], 1), output=True),
                    Buffer("in", F32, 0, p["n"]),
                    Buffer("idx", I32, 0, p["n"],
                           lambda rng, c: rng.permutation(c).astype(I32))], _scatter)

_SPMV_PER_ROW = 4


def _rowptr(rng, count):
    lengths = rng.integers(0, 2 * _SPMV_PER_ROW, size=max(count - 1, 0))
    return np.concatenate([[0], np.cumsum(lengths)]).astype(I32)


def _spmv_buffers(p, g, b):
    nnz = 2 * _SPMV_PER_ROW * p["nrows"]
    return [Buffer("y", F32, 0, p["nrows"], output=True),
            Buffer("rowptr", I32, 0, p["nrows"] + 1, _rowptr),
            Buffer("col", I32, 0, nnz, _rand_index(p["nrows"])),
            Buffer("vals", F32, 0, nnz), Buffer("x", F32, 0, p["nrows"])]


def _spmv(x, p, g, b):
    y = x["y"].copy()
    rp = x["rowptr"]
    for r in range(_cnt(p, g, b, "nrows")):
        acc = F32(0)
        for j in range(rp[r], rp[r + 1]):
            acc = F32(acc + x["vals"][j] * x["x"][x["col"][j]])
        y[r] = acc
    return {"y": y}


_w("spmv_csr", _spmv_buffers, _spmv, rtol=1e-4, atol=1e-5)


# ---------------------------------------------------------------- histogram_scan.cu
def _hist(grid_stride):
    def ref(x, p, g, b):
        k = p["n"] if grid_stride else _cnt(p, g, b)
        return {"hist": x["hist"] + np.bincount(x["data"][:k], minlength=256).astype(U32)}
    return ref


_w("histogram256_global", lambda p, g, b: [Buffer("hist", U32, 0, 256, output=True),
                                           Buffer("data", U8, 0, p["n"])], _hist(False))
_w("histogram256_shared", lambda p, g, b: [Buffer("hist", U32, 0, 256, output=True),
                                           Buffer("data", U8, 0, p["n"])], _hist(True))


def _scan(x, p, g, b):
    n, bs = p["n"], b[0]
    vals = np.zeros(g[0] * bs, dtype=F32)
    k = min(n, g[0] * bs)
    vals[:k] = x["in"][:k]
    scans = np.cumsum(vals.reshape(g[0], bs), axis=1, dtype=F64).astype(F32)
    out = x["out"].copy()
    out[:k] = scans.reshape(-1)[:k]
    return {"out": out, "block_sums": scans[:, -1].copy()}


_w("scan_block_inclusive",
   lambda p, g, b: [Buffer("out", F32, 0, p["n"], output=True), Buffer("in", F32, 0, p["n"]),
                    Buffer("block_sums", F32, 0, g[0], output=True)], _scan,
   rtol=1e-4, atol=1e-4, block_required=(256, 1, 1))


# ---------------------------------------------------------------- indexing2d3d.cu
def _covered_2d(p, g, b, w, h):
    return min(w, g[0] * b[0]), min(h, g[1] * b[1])


def _add2d(x, p, g, b):
    out = x["out"].copy()
    W, H = _covered_2d(p, g, b, p["w"], p["h"])
    for y in range(H):
        k = y * p["pitch"]
        out[k:k + W] = x["a"][k:k + W] + x["b"][k:k + W]
    return {"out": out}


def _pitched(p, g, b):
    return ((p["h"] - 1) * p["pitch"] + p["w"]) if p["w"] > 0 and p["h"] > 0 else 0


_w("add2d_pitched", lambda p, g, b: [Buffer("out", F32, 0, _pitched(p, g, b), output=True),
                                     Buffer("a", F32, 0, _pitched(p, g, b)),
                                     Buffer("b", F32, 0, _pitched(p, g, b))], _add2d)


def _scale3d(x, p, g, b):
    nx, ny, nz = p["nx"], p["ny"], p["nz"]
    out = x["out"].copy().reshape(-1)
    X, Y, Z = (min(nx, g[0] * b[0]), min(ny, g[1] * b[1]), min(nz, g[2] * b[2]))
    o = out[:nx * ny * nz].reshape(nz, ny, nx)
    i = x["in"][:nx * ny * nz].reshape(nz, ny, nx)
    o[:Z, :Y, :X] = F32(p["s"]) * i[:Z, :Y, :X]
    return {"out": out}


_w("scale3d", lambda p, g, b: [Buffer("out", F32, 0, p["nx"] * p["ny"] * p["nz"], output=True),
                               Buffer("in", F32, 0, p["nx"] * p["ny"] * p["nz"])], _scale3d)


def _row0_col0(x, p, g, b):
    m = x["m"].copy()
    for i in range(1, min(p["n"], 1 + _threads(g, b))):
        m[i * p["ld"]] = x["m"][i]
    return {"m": m}


_w("copy_row0_to_col0",
   lambda p, g, b: [Buffer("m", F32, min(0, (p["n"] - 1) * p["ld"]),
                           max(p["n"], (p["n"] - 1) * p["ld"] + 1, 1), output=True)],
   lambda x, p, g, b: _row0_col0(x, p, g, b) if p["ld"] >= 0 else None)


def _transpose(x, p, g, b, tile=None):
    w, h = p["w"], p["h"]
    out = x["out"].copy()
    if tile:
        X, Y = min(w, g[0] * tile), min(h, g[1] * tile)
    else:
        X, Y = _covered_2d(p, g, b, w, h)
    src = x["in"][:w * h].reshape(h, w)
    o = out[:w * h].reshape(w, h)
    o[:X, :Y] = src[:Y, :X].T
    return {"out": out}


_w("transpose_naive", lambda p, g, b: [Buffer("out", F32, 0, p["w"] * p["h"], output=True),
                                       Buffer("in", F32, 0, p["w"] * p["h"])], _transpose)
_w("transpose_tiled", lambda p, g, b: [Buffer("out", F32, 0, p["w"] * p["h"], output=True),
                                       Buffer("in", F32, 0, p["w"] * p["h"])],
   lambda x, p, g, b: _transpose(x, p, g, b, tile=32), block_required=(32, 8, 1))


# ---------------------------------------------------------------- inplace.cu, misc.cu
def _shift_scale(x, p, g, b, stride=1, scale=2.0):
    a = x["a"].copy()
    base = x["_offset"]["a"]
    for i in range(_cnt(p, g, b)):
        a[base + stride * i + p["off"]] = F32(scale) * x["a"][base + stride * i]
    return {"a": a}


_w("shift_scale", lambda p, g, b: [Buffer("a", F32, min(0, p["off"]),
                                          max(p["n"], p["n"] + p["off"]), output=True)],
   _shift_scale)
_w("strided_pair_copy",
   lambda p, g, b: [Buffer("a", F32, min(0, p["off"]),
                           max(2 * p["n"] - 1, 2 * (p["n"] - 1) + p["off"] + 1), output=True)],
   lambda x, p, g, b: _shift_scale(x, p, g, b, stride=2, scale=3.0))


def _interleave(x, p, g, b):
    a = x["a"].copy()
    k = _cnt(p, g, b)
    a[1:2 * k:2] = F32(0.5) * x["a"][0:2 * k:2] + F32(1)
    return {"a": a}


_w("interleave_odd_from_even",
   lambda p, g, b: [Buffer("a", F32, 0, 2 * p["n"], output=True)], _interleave)


def _masked(x, p, g, b):
    out = x["out"].copy()
    k = _cnt(p, g, b)
    sel = x["mask"][:k] != 0
    out[:k] = np.where(sel, F32(2) * x["in"][:k], out[:k])
    return {"out": out}


_w("early_return_masked",
   lambda p, g, b: [Buffer("out", F32, 0, p["n"], output=True), Buffer("in", F32, 0, p["n"]),
                    Buffer("mask", I32, 0, p["n"], _rand_index(2))], _masked)

_COUNT = 1000


def _loop_bound(x, p, g, b):
    m = int(x["count"][0])
    out = x["out"].copy()
    out[:m] = x["in"][:m] + F32(1)
    return {"out": out}


def _loop_bound_buffers(p, g, b):
    m = p.get("m", _COUNT)

    def count(rng, c):
        return np.array([m], I32)
    return [Buffer("out", F32, 0, m, output=True), Buffer("in", F32, 0, m),
            Buffer("count", I32, 0, 1, count)]


_w("loop_bound_from_memory", _loop_bound_buffers, _loop_bound)


def _rotate_segments(p, g, b):
    n = min(p["n"], _threads(g, b))
    segs = []
    for off in (p["src_off"], p["dst_off"]):
        off &= 0xFFFFFFFF
        end = off + n
        if end > 1 << 32:
            segs += [(off, 1 << 32), (0, end - (1 << 32))]
        elif n:
            segs.append((off, end))
    return tuple(segs)


def _rotate_buffer(p, g, b):
    segs = _rotate_segments(p, g, b)
    hi = max((e for _, e in segs), default=1)
    if hi <= 1 << 24:
        return [Buffer("a", F32, 0, hi, output=True)]
    return [Buffer("a", F32, 0, hi, output=True, segments=segs)]


def _rotate(x, p, g, b):
    if len(x["a"]) < max((e for _, e in _rotate_segments(p, g, b)), default=0):
        return None  # a sparse buffer: no dense reference
    a = x["a"].copy()
    for i in range(min(p["n"], _threads(g, b))):
        a[(p["dst_off"] + i) & 0xFFFFFFFF] = x["a"][(p["src_off"] + i) & 0xFFFFFFFF]
    return {"a": a}


_w("rotate_copy_u32", _rotate_buffer, _rotate)
_w("empty_kernel", lambda p, g, b: [], lambda x, p, g, b: {})


# ---------------------------------------------------------------- reduction.cu
def _block_sums(vals, g, bs):
    v = np.zeros(g[0] * bs, dtype=F32)
    v[:min(len(vals), len(v))] = vals[:len(v)]
    return v.reshape(g[0], bs).sum(axis=1, dtype=F64).astype(F32)


_w("reduce_sum_block", lambda p, g, b: [Buffer("out", F32, 0, g[0], output=True),
                                        Buffer("in", F32, 0, p["n"])],
   lambda x, p, g, b: {"out": _block_sums(x["in"][:p["n"]], g, b[0])}, rtol=1e-4, atol=1e-4,
   block_required=(256, 1, 1))
_w("dot_partial", lambda p, g, b: [Buffer("partial", F32, 0, g[0], output=True),
                                   Buffer("a", F32, 0, p["n"]), Buffer("b", F32, 0, p["n"])],
   lambda x, p, g, b: {"partial": _block_sums(x["a"][:p["n"]] * x["b"][:p["n"]], g, b[0])},
   rtol=1e-4, atol=1e-4, block_required=(256, 1, 1))


def _warp_sums(x, p, g, b):
    T = _threads(g, b)
    v = np.zeros(T, dtype=F32)
    k = min(p["n"], T)
    v[:k] = x["in"][:k]
    return v.reshape(-1, 32).sum(axis=1, dtype=F64).astype(F32)


_w("warp_reduce_to_array", lambda p, g, b: [Buffer("out", F32, 0, _threads(g, b) // 32,
                                                   output=True),
                                            Buffer("in", F32, 0, p["n"])],
   lambda x, p, g, b: {"out": _warp_sums(x, p, g, b)}, rtol=1e-4, atol=1e-4)
_w("warp_reduce_atomic", lambda p, g, b: [Buffer("total", F32, 0, 1, output=True),
                                          Buffer("in", F32, 0, p["n"])],
   lambda x, p, g, b: {"total": x["total"] + _warp_sums(x, p, g, b).sum(dtype=F64)},
   rtol=1e-4, atol=1e-4)


# ---------------------------------------------------------------- shared_tiles.cu
def _matmul(x, p, g, b, accumulate):
    n = p["n"]
    A = x["A"][:n * n].reshape(n, n).astype(F64)
    B = x["B"][:n * n].reshape(n, n).astype(F64)
    C = x["C"].copy()
    R, K = min(n, g[1] * 16), min(n, g[0] * 16)
    prod = (A @ B).astype(F32)
    c = C[:n * n].reshape(n, n)
    c[:R, :K] = prod[:R, :K] + (c[:R, :K] if accumulate else 0)
    return {"C": C}


for _name, _acc in (("matmul_tiled", False), ("gemm_accumulate_tiled", True)):
    _w(_name, lambda p, g, b: [Buffer("C", F32, 0, p["n"] ** 2, output=True),
                               Buffer("A", F32, 0, p["n"] ** 2),
                               Buffer("B", F32, 0, p["n"] ** 2)],
       lambda x, p, g, b, acc=_acc: _matmul(x, p, g, b, acc), rtol=1e-4, atol=1e-4,
       block_required=(16, 16, 1))


# ---------------------------------------------------------------- stencil.cu
def _stencil3(x, p, g, b):
    out = x["out"].copy()
    n = p["n"]
    hi = min(n - 1, _threads(g, b))
    if hi > 1:
        i = x["in"]
        out[1:hi] = i[0:hi - 1] + i[1:hi] + i[2:hi + 1]
    return {"out": out}


_w("stencil1d_3pt", lambda p, g, b: [Buffer("out", F32, 0, p["n"], output=True),
                                     Buffer("in", F32, 0, p["n"])], _stencil3)


def _jacobi(x, p, g, b):
    d = x["dst"].copy()
    s = x["src"]
    k = _cnt(p, g, b)
    for i in range(k):
        if i == 0 or i == p["n"] - 1:
            d[i] = s[i]
        else:
            d[i] = F32(0.5) * (s[i - 1] + s[i + 1])
    return {"dst": d}


_w("jacobi_pingpong", lambda p, g, b: [Buffer("dst", F32, 0, p["n"], output=True),
                                       Buffer("src", F32, 0, p["n"])], _jacobi)


def _stencil_r3(x, p, g, b):
    N = g[0] * 128
    i = x["in"].astype(F64)
    win = sum(i[k:k + N] for k in range(7))
    return {"out": win.astype(F32)}


_w("stencil1d_shared_r3", lambda p, g, b: [Buffer("out", F32, 0, g[0] * 128, output=True),
                                           Buffer("in", F32, 0, g[0] * 128 + 6)],
   _stencil_r3, rtol=1e-4, atol=1e-4, block_required=(128, 1, 1))


def _stencil2d(x, p, g, b):
    w, h = p["w"], p["h"]
    t = x["in"][:w * h].reshape(h, w).astype(F64)
    X, Y = min(w, g[0] * 16), min(h, g[1] * 16)
    ys, xs = np.mgrid[0:Y, 0:X]
    c = t[ys, xs]
    s = c + t[ys, np.maximum(xs - 1, 0)] + t[ys, np.minimum(xs + 1, w - 1)]
    s = s + t[np.maximum(ys - 1, 0), xs] + t[np.minimum(ys + 1, h - 1), xs]
    out = x["out"].copy()
    out[:w * h].reshape(h, w)[:Y, :X] = (0.2 * s).astype(F32)
    return {"out": out}


_w("stencil2d_5pt_halo", lambda p, g, b: [Buffer("out", F32, 0, p["w"] * p["h"], output=True),
                                          Buffer("in", F32, 0, p["w"] * p["h"])],
   _stencil2d, rtol=1e-4, atol=1e-4, block_required=(16, 16, 1))


# ---------------------------------------------------------------- structs_calls.cu
def _field(p, name, offset):
    for off, _size, value in p[name]:
        if off == offset:
            return value
    raise KeyError((name, offset))


def _scale_buf(x, p, g, b):
    dst = x[("dst", 0)].copy()
    k = max(0, min(_field(p, "src", 8), _field(p, "dst", 8), _threads(g, b)))
    dst[:k] = F32(p["s"]) * x[("src", 0)][:k]
    return {("dst", 0): dst}


_w("scale_buf", lambda p, g, b: [Buffer(("dst", 0), F32, 0, _field(p, "dst", 8), output=True),
                                 Buffer(("src", 0), F32, 0, _field(p, "src", 8))], _scale_buf)


def _span(x, p, g, b):
    y = x[("y", 0)].copy()
    k = max(0, min(_field(p, "y", 8), _threads(g, b)))
    y[:k] = y[:k] + F32(p["a"]) * x["x"][:k]
    return {("y", 0): y}


_w("span_axpy_inplace", lambda p, g, b: [Buffer(("y", 0), F32, 0, _field(p, "y", 8),
                                                output=True),
                                         Buffer("x", F32, 0, _field(p, "y", 8))], _span)


# ---------------------------------------------------------------- vector_types.cu
def _scale4(x, p, g, b):
    out = x["out"].copy()
    k = 4 * max(0, min(p["n4"], _threads(g, b)))
    out[:k] = x["in"][:k] * F32(p["s"])
    return {"out": out}


_w("scale_float4", lambda p, g, b: [Buffer("out", F32, 0, 4 * p["n4"], output=True),
                                    Buffer("in", F32, 0, 4 * p["n4"])], _scale4)


def _half(bits):
    return np.array(bits, dtype=np.uint16).view(F16)


def _half_axpy(x, p, g, b):
    out = x["out"].copy()
    k = _cnt(p, g, b)
    a = _half(p["a"])
    out[:k] = (a * x["x"][:k]).astype(F16) + x["y"][:k]
    return {"out": out}


_w("half_axpy", lambda p, g, b: [Buffer("out", F16, 0, p["n"], output=True),
                                 Buffer("x", F16, 0, p["n"]), Buffer("y", F16, 0, p["n"])],
   _half_axpy, rtol=2e-3, atol=2e-3)


def _half2(x, p, g, b):
    d = x["data"].copy()
    k = _cnt(p, g, b)
    s = np.array([p["s"] & 0xFFFF, p["s"] >> 16], dtype=np.uint16).view(F16)
    d[:2 * k] = (d[:2 * k].reshape(-1, 2) * s).astype(F16).reshape(-1)
    return {"data": d}


_w("half2_scale_inplace", lambda p, g, b: [Buffer("data", F16, 0, 2 * p["n"], output=True)],
   _half2, rtol=2e-3, atol=2e-3)


# ---------------------------------------------------------------- asserts.cu
# Valid data: every assertion holds (a failed device assertion aborts the launch).
def _gather_checked(x, p, g, b):
    out = x["out"].copy()
    k = _cnt(p, g, b)
    out[:k] = x["src"][x["idx"][:k]]
    return {"out": out}


_w("gather_checked",
   lambda p, g, b: [Buffer("out", F32, 0, p["n"], output=True),
                    Buffer("src", F32, 0, max(p["m"], 1)),
                    Buffer("idx", I32, 0, p["n"], _rand_index(max(p["m"], 1)))],
   _gather_checked)


def _scale_checked(x, p, g, b):
    out = x["out"].copy()
    k = _cnt(p, g, b) if p["n"] <= _threads(g, b) else 0
    out[:k] = F32(p["s"]) * x["in"][:k]
    return {"out": out}


_w("scale_checked", lambda p, g, b: [Buffer("out", F32, 0, p["n"], output=True),
                                     Buffer("in", F32, 0, p["n"])], _scale_checked)
_w("increment_checked",
   lambda p, g, b: [Buffer("x", F32, 0, p["n"],
                           lambda rng, count: rng.uniform(0, 1, size=count), output=True)],
   lambda x, p, g, b: {"x": np.concatenate([x["x"][:_cnt(p, g, b)] + F32(1),
                                            x["x"][_cnt(p, g, b):]])})


# ---------------------------------------------------------------- launch_args.cu
_w("store_past_pointer_difference",
   # The store goes through ``out + (in - out)``: it lands in ``in`` one element on; ``out``
   # itself is never touched (one element keeps it an allocation of its own). The result
   # depends on the order of threads, so there is no reference.
   lambda p, g, b: [Buffer("out", F32, 0, 1), Buffer("in", F32, 0, max(p["n"] + 1, 1),
                                                     output=True)],
   lambda x, p, g, b: None)


def _copy_if_flag(x, p, g, b):
    out = x["out"].copy()
    if p["do_write"]:
        k = _cnt(p, g, b)
        out[:k] = x["in"][:k]
    return {"out": out}


_w("copy_if_flag", lambda p, g, b: [Buffer("out", F32, 0, p["n"], output=True),
                                    Buffer("in", F32, 0, p["n"])], _copy_if_flag)


def _copy_to_selected(x, p, g, b):
    key = "a" if p["which"] else "b"
    chosen = x[key].copy()
    k = _cnt(p, g, b)
    chosen[:k] = x["in"][:k]
    return {key: chosen}


_w("copy_to_selected", lambda p, g, b: [Buffer("a", F32, 0, p["n"], output=True),
                                        Buffer("b", F32, 0, p["n"], output=True),
                                        Buffer("in", F32, 0, p["n"])], _copy_to_selected)


def _gather_shifted(x, p, g, b):
    out = x["out"].copy()
    k = max(0, min(p["n"] >> p["s"], _threads(g, b)))
    out[:k] = x["in"][0:k << p["s"]:1 << p["s"]]
    return {"out": out}


_w("gather_shifted", lambda p, g, b: [Buffer("out", F32, 0, p["n"] >> p["s"], output=True),
                                      Buffer("in", F32, 0, max(p["n"], 1))], _gather_shifted)


def _row_tails(x, p, g, b):
    out, n = x["out"].copy(), p["n"]
    for r in range(max(0, min(p["rows"], _threads(g, b)))):
        s = F32(0)
        for c in range(1, n):
            s = F32(s + x["m"][r * n + c])
        out[r * n] = s
    return {"out": out}


_w("row_tails_to_heads",
   lambda p, g, b: [Buffer("out", F32, 0, max((p["rows"] - 1) * p["n"] + 1, 1), output=True),
                    Buffer("m", F32, 0, max(p["rows"] * p["n"], 1))], _row_tails)

_COUNTED = 600


def _odd_from_even(x, p, g, b):
    m = int(x["count"][0])
    out = x["out"].copy()
    out[1:2 * m:2] = x["in"][0:2 * m:2]
    return {"out": out}


_w("odd_from_even_counted",
   lambda p, g, b: [Buffer("out", F32, 0, 2 * _COUNTED, output=True),
                    Buffer("in", F32, 0, 2 * _COUNTED),
                    Buffer("count", I32, 0, 1, lambda rng, c: np.array([_COUNTED], I32))],
   _odd_from_even)
_w("exchange_loaded_value",
   lambda p, g, b: [Buffer("flag", I32, 0, 1, output=True), Buffer("src", I32, 0, 1)],
   lambda x, p, g, b: {"flag": x["src"].copy()})
_gridstride("copy_gridstride_rolled", "out", ["in"], F64, lambda a, p: a)


def _sine_inputs(rng, count):
    # Half the inputs are large, so the argument reduction matters (and the reference
    # tolerance with it).
    x = rng.uniform(-1, 1, size=count)
    x[::2] *= 1e6
    return x.astype(F64)


_w("sine_f64", lambda p, g, b: [Buffer("out", F64, 0, p["n"], output=True),
                                Buffer("in", F64, 0, p["n"], _sine_inputs)],
   lambda x, p, g, b: {"out": np.concatenate([np.sin(x["in"][:_cnt(p, g, b)]),
                                              x["out"][_cnt(p, g, b):]])},
   rtol=1e-8, atol=1e-9)
_w("bytes_from_words", lambda p, g, b: [Buffer("out", U8, 0, p["n"], output=True),
                                        Buffer("in", U32, 0, p["n"])],
   lambda x, p, g, b: {"out": np.concatenate([
       (x["in"][:_cnt(p, g, b)] >> 3).astype(U8), x["out"][_cnt(p, g, b):]])})


def _top_byte(x, p, g, b):
    w = x["w"].copy()
    k = _cnt(p, g, b)
    old = x["w"][:k].astype(np.uint64)
    w[:k] = ((old & 0x00FFFFFF) | (((old >> 1) & 0xFF) << 24)).astype(U32)
    return {"w": w}


_w("top_byte_inplace", lambda p, g, b: [Buffer("w", U32, 0, p["n"], output=True)], _top_byte)


# ---------------------------------------------------------------- tensor_lists.cu
#: Tables of TensorListMeta<L> (fixtures/src/tensor_lists.cu): L -> tensors per list.
_TL_TENSORS = {2: 8, 4: 6}
_TL_CHUNK = 512


def _at(p, name, offset, size, signed=False):
    """A field of the by-value struct ``name``; fields an instance leaves out are zero."""
    for off, sz, value in p[name]:
        if off == offset and sz == size:
            value = int(value) & ((1 << 8 * size) - 1)
            if signed and value >> (8 * size - 1):
                value -= 1 << 8 * size
            return value
    return 0


def _tl_chunks(p, g, lists):
    """Per tensor, the element ranges [lo, hi) the blocks of the grid take: block b works on
    tensor block_to_tensor[b], elements [512c, min(numel, 512c + 512)), c = block_to_chunk[b]."""
    tensors = _TL_TENSORS[lists]
    numel_at = 8 * lists * tensors
    to_tensor = numel_at + 8 * tensors
    out: dict[int, list] = {}
    for b in range(g[0]):
        t = _at(p, "meta", to_tensor + b, 1)
        c = _at(p, "meta", to_tensor + 32 + 4 * b, 4, signed=True)
        lo = c * _TL_CHUNK
        hi = min(_at(p, "meta", numel_at + 8 * t, 8, signed=True), lo + _TL_CHUNK)
        if hi > lo:
            out.setdefault(t, []).append((lo, hi))
    return out


def _tl_buffers(lists, outputs):
    """Buffers of a foreach kernel over ``lists`` lists; ``outputs`` the lists written."""
    def buffers(p, g, b):
        tensors = _TL_TENSORS[lists]
        out = []
        for t, ranges in sorted(_tl_chunks(p, g, lists).items()):
            lo, hi = min(r[0] for r in ranges), max(r[1] for r in ranges)
            for k in range(lists):
                out.append(Buffer(("meta", 8 * (k * tensors + t)), F32, lo, hi,
                                  output=k in outputs))
        return out
    return buffers


def _tl_apply(lists, fn):
    """Reference of a foreach kernel: ``fn(views)`` updates the chunk views of one block."""
    def reference(x, p, g, b):
        tensors = _TL_TENSORS[lists]
        new = {}
        for t, ranges in _tl_chunks(p, g, lists).items():
            keys = [("meta", 8 * (k * tensors + t)) for k in range(lists)]
            for key in keys:
                new.setdefault(key, x[key].copy())
            shift = x["_offset"][keys[0]]
            for lo, hi in ranges:
                fn([new[key][lo + shift:hi + shift] if key in new else None for key in keys],
                   [x[key][lo + shift:hi + shift] for key in keys], p)
        return new
    return reference


def _negate(out, inp, p):
    out[1][:] = -inp[0]


def _add_in_place(out, inp, p):
    out[0][:] = inp[0] + F32(p["alpha"]) * inp[1]


_w("_Z14apply_to_listsI14TensorListMetaILi2EE13NegateFunctorJEEvT_T0_DpT1_",
   _tl_buffers(2, (1,)), _tl_apply(2, _negate))
_w("_Z14apply_to_listsI14TensorListMetaILi2EE17AddInPlaceFunctorJfEEvT_T0_DpT1_",
   _tl_buffers(2, (0,)), _tl_apply(2, _add_in_place), rtol=1e-5, atol=1e-5)
def _adamw(out, inp, p):
    f = {k: F64(np.float32(p[k])) for k in ("lr", "beta1", "beta2", "eps", "weight_decay",
                                             "bias1", "bias2")}
    param, grad, m, v = (x.astype(F64) for x in inp)
    param = param - f["lr"] * f["weight_decay"] * param
    m = f["beta1"] * m + (1 - f["beta1"]) * grad
    v = f["beta2"] * v + (1 - f["beta2"]) * grad * grad
    with np.errstate(invalid="ignore"):
        param = param - f["lr"] * (m / f["bias1"]) / (np.sqrt(v / f["bias2"]) + f["eps"])
    out[0][:], out[2][:], out[3][:] = param, m, v


_w("_Z14apply_to_listsI14TensorListMetaILi4EE12AdamWFunctorJfffffffEEvT_T0_DpT1_",
   _tl_buffers(4, (0, 2, 3)), _tl_apply(4, _adamw), rtol=1e-4, atol=1e-5)


def _gemm_extent(p, g, b):
    rows = max(0, min(p["m"], g[1] * b[1]))
    cols = max(0, min(p["n"], g[0] * b[0]))
    return rows, cols, max(p["k"], 0)


def _gemm_buffers(p, g, b):
    rows, cols, k = _gemm_extent(p, g, b)
    if not rows or not cols:
        return []
    out = []
    for z in range(min(g[2], 4)):
        if k:
            out.append(Buffer(("ptrs", 8 * z), F32, 0, (rows - 1) * p["lda"] + k))
            out.append(Buffer(("ptrs", 32 + 8 * z), F32, 0, (k - 1) * p["ldb"] + cols))
        out.append(Buffer(("ptrs", 64 + 8 * z), F32, 0, (rows - 1) * p["ldc"] + cols,
                          output=True))
    return out


def _gemm_reference(x, p, g, b):
    rows, cols, k = _gemm_extent(p, g, b)
    new = {}
    for z in range(min(g[2], 4) if rows and cols else 0):
        c = x[("ptrs", 64 + 8 * z)].astype(F64)
        for r in range(rows):
            for j in range(cols):
                acc = 0.0
                for q in range(k):
                    acc += float(x[("ptrs", 8 * z)][r * p["lda"] + q]) * float(
                        x[("ptrs", 32 + 8 * z)][q * p["ldb"] + j])
                c[r * p["ldc"] + j] = acc
        new[("ptrs", 64 + 8 * z)] = c
    return new


_w("gemm_batched_pointers", _gemm_buffers, _gemm_reference, rtol=1e-4, atol=1e-4)


def _copy_tasks_buffers(p, g, b):
    out = []
    for y in range(min(g[1], 4)):
        n = max(0, min(_at(p, "tasks", 24 * y + 16, 4, signed=True), g[0] * b[0]))
        if n:
            out.append(Buffer(("tasks", 24 * y + 8), F32, 0, n, output=True))
            out.append(Buffer(("tasks", 24 * y), F32, 0, n))
    return out


def _copy_tasks(x, p, g, b):
    return {buf.pointer: x[(buf.pointer[0], buf.pointer[1] - 8)]
            for buf in _copy_tasks_buffers(p, g, b) if buf.output}


_w("copy_tasks", _copy_tasks_buffers, _copy_tasks)


def _axpy_count(p, g, b):
    return max(0, min(_at(p, "args", 28, 4, signed=True), _threads(g, b)))


def _axpy_struct(x, p, g, b):
    a = np.array([_at(p, "args", 24, 4)], dtype=U32).view(F32)[0]
    return {("args", 16): a * x[("args", 0)] + x[("args", 8)]}


_w("axpy_struct_args",
   lambda p, g, b: [Buffer(("args", 16), F32, 0, _axpy_count(p, g, b), output=True),
                    Buffer(("args", 0), F32, 0, _axpy_count(p, g, b)),
                    Buffer(("args", 8), F32, 0, _axpy_count(p, g, b))], _axpy_struct)


# ---------------------------------------------------------------- Triton
def _tri(p, g):
    return max(0, min(p["n"], g[0] * 256))


def _tri_add(x, p, g, b):
    out = x["out_ptr"].copy()
    k = _tri(p, g)
    out[:k] = x["x_ptr"][:k] + x["y_ptr"][:k]
    return {"out_ptr": out}


_w("add_kernel", lambda p, g, b: [Buffer("out_ptr", F32, 0, p["n"], output=True),
                                  Buffer("x_ptr", F32, 0, p["n"]),
                                  Buffer("y_ptr", F32, 0, p["n"])], _tri_add)
_w("relu_inplace_kernel", lambda p, g, b: [Buffer("x_ptr", F32, 0, p["n"], output=True)],
   lambda x, p, g, b: {"x_ptr": np.concatenate([np.maximum(x["x_ptr"][:_tri(p, g)], F32(0)),
                                                x["x_ptr"][_tri(p, g):]])})
_w("fill_kernel", lambda p, g, b: [Buffer("out_ptr", F32, 0, p["n"], output=True)],
   lambda x, p, g, b: {"out_ptr": np.concatenate([np.full(_tri(p, g), F32(p["value"])),
                                                  x["out_ptr"][_tri(p, g):]])})
_w("sum_atomic_kernel", lambda p, g, b: [Buffer("sum_ptr", F32, 0, 1, output=True),
                                         Buffer("x_ptr", F32, 0, p["n"])],
   lambda x, p, g, b: {"sum_ptr": x["sum_ptr"] + x["x_ptr"][:_tri(p, g)].sum(dtype=F64)},
   rtol=1e-4, atol=1e-4, shared_bytes=16)


# ---------------------------------------------------------------- numba
def _numba_scale(x, p, g, b):
    out = x["out_data"].copy()
    k = max(0, min(p["out_nitems"], _threads(g, b)))
    out[:k] = x["a_data"][:k] * F32(p["s"])
    return {"out_data": out}


_w("numba:scale_numba", lambda p, g, b: [Buffer("out_data", F32, 0, p["out_nitems"],
                                                output=True),
                                         Buffer("a_data", F32, 0, p["a_nitems"])],
   _numba_scale)
_w("numba:increment_numba", lambda p, g, b: [Buffer("a_data", F32, 0, p["a_nitems"],
                                                    output=True)],
   lambda x, p, g, b: {"a_data": np.concatenate([
       x["a_data"][:max(0, min(p["a_nitems"], _threads(g, b)))] + F32(1),
       x["a_data"][max(0, min(p["a_nitems"], _threads(g, b))):]])})


def _numba_hist(x, p, g, b):
    k = max(0, min(p["bins_nitems"], _threads(g, b)))
    return {"counts_data": x["counts_data"] + np.bincount(
        x["bins_data"][:k], minlength=p["counts_nitems"]).astype(I32)}


_w("numba:histogram_numba",
   lambda p, g, b: [Buffer("counts_data", I32, 0, p["counts_nitems"], output=True),
                    Buffer("bins_data", I32, 0, p["bins_nitems"],
                           _rand_index(p["counts_nitems"]))], _numba_hist)


# ---------------------------------------------------------------- inline_asm_libs.cu
def _full_u32(rng, count):
    return rng.integers(0, 1 << 32, size=count, dtype=np.uint64).astype(U32)


_reg_map("asm_ldg_scale_cs", "out", ["in"], F32, lambda a, p, k: F32(p["s"]) * a)
_reg_map("asm_cutlass_guarded_epilogue", "D", ["C"], F32,
         lambda c, p, k: F32(p["alpha"]) * c + F32(p["beta"]), rtol=1e-6, atol=1e-6)


def _vec4_xor(x, p, g, b):
    out = x["out"].copy()
    k = 4 * _cnt(p, g, b, "n4")
    out[:k] = x["in"][:k] ^ U32(p["key"] & 0xFFFFFFFF)
    return {"out": out}


_w("asm_vec4_xor", lambda p, g, b: [Buffer("out", U32, 0, 4 * p["n4"], output=True),
                                    Buffer("in", U32, 0, 4 * p["n4"], _full_u32)], _vec4_xor)


def _red_accumulate(x, p, g, b):
    k = _cnt(p, g, b)
    lanes = np.arange(k) & 31
    add = np.bincount(lanes, weights=x["in"][:k].astype(F64), minlength=32)
    return {"sum": x["sum"] + add, "count": x["count"] + U32(k)}


_w("asm_red_accumulate",
   lambda p, g, b: [Buffer("sum", F32, 0, 32, output=True),
                    Buffer("count", U32, 0, 1, output=True), Buffer("in", F32, 0, p["n"])],
   _red_accumulate, rtol=1e-4, atol=1e-4)
_w("asm_cas_fmax",
   lambda p, g, b: [Buffer("result", F32, 0, 1, output=True), Buffer("in", F32, 0, p["n"])],
   lambda x, p, g, b: {"result": np.maximum(x["result"],
                                            x["in"][:_cnt(p, g, b)].max(initial=-np.inf))})


def _bias_tile(x, p, g, b):
    out = x["out"].copy()
    k = _cnt(p, g, b, "n4")
    bias = np.repeat(x["bias"][:g[0]], 4 * b[0])[:4 * k]
    out[:4 * k] = x["in"][:4 * k] + bias
    return {"out": out}


_w("asm_cp_async_bias_tile",
   lambda p, g, b: [Buffer("out", U32, 0, 4 * p["n4"], output=True),
                    Buffer("in", U32, 0, 4 * p["n4"], _full_u32),
                    Buffer("bias", U32, 0, g[0], _full_u32)],
   _bias_tile, block_required=(64, 1, 1))


def _mma(x, p, g, b):
    d = x["D"].copy()
    w = max(0, min(p["tiles"], g[0]))
    a = x["A"][:256 * w].astype(F64).reshape(w, 16, 16)
    bt = x["B"][:128 * w].astype(F64).reshape(w, 8, 16)
    d[:128 * w] = np.einsum("wmk,wnk->wmn", a, bt).reshape(-1)
    return {"D": d}


_w("asm_mma_m16n8k16",
   lambda p, g, b: [Buffer("D", F32, 0, 128 * p["tiles"], output=True),
                    Buffer("A", F16, 0, 256 * p["tiles"]), Buffer("B", F16, 0, 128 * p["tiles"])],
   _mma, rtol=1e-3, atol=1e-3, block_required=(32, 1, 1))


def _warp_sum(x, p, g, b):
    out = x["out"].copy()
    k = _cnt(p, g, b)
    vals = np.zeros(-(-k // 32) * 32, dtype=F64)
    vals[:k] = x["in"][:k]
    out[:len(vals) // 32] = vals.reshape(-1, 32).sum(axis=1)
    return {"out": out}


_w("asm_warp_sum_bfly",
   lambda p, g, b: [Buffer("out", F32, 0, (max(p["n"], 0) + 31) // 32, output=True),
                    Buffer("in", F32, 0, p["n"])], _warp_sum, rtol=1e-4, atol=1e-4)


def _prmt_pairs(x, p, g, b):
    a = x["a"].copy()
    k = _cnt(p, g, b)
    a[1:2 * k:2] = x["a"][0:2 * k:2].byteswap()
    return {"a": a}


_w("asm_prmt_pairs_inplace",
   lambda p, g, b: [Buffer("a", U32, 0, 2 * p["n"], _full_u32, output=True)], _prmt_pairs)


def _lop3(xv, yv, p, k):
    xv, yv = xv.astype(np.uint64), yv.astype(np.uint64)
    perm = (xv & 0xFF) | (yv & 0xFF) << 8 | (xv >> 8 & 0xFF) << 16 | (yv >> 8 & 0xFF) << 24
    field = xv >> 4 & 0xFFF
    return ((perm & yv) | (perm & field) | (yv & field)).astype(U32)


_w("asm_lop3_bfe_prmt",
   lambda p, g, b: [Buffer("out", U32, 0, p["n"], output=True),
                    Buffer("x", U32, 0, p["n"], _full_u32), Buffer("y", U32, 0, p["n"], _full_u32)],
   _map("out", ["x", "y"], U32, _lop3)[1])


def _f16x2(x, p, g, b):
    out = x["out"].copy()
    k = _cnt(p, g, b)
    h = x["in"][:2 * k].astype(F16).view(np.uint16).astype(U32)
    out[:k] = h[0::2] | h[1::2] << U32(16)
    return {"out": out}


_w("asm_cvt_f16x2_pack", lambda p, g, b: [Buffer("out", U32, 0, p["n"], output=True),
                                          Buffer("in", F32, 0, 2 * p["n"])], _f16x2)


def _scratch(x, p, g, b):
    k = _cnt(p, g, b)
    out, scratch = x["out"].copy(), x["scratch"].copy()
    twice = x["in"][:k] + x["in"][:k]
    scratch[:k] = twice
    out[:k] = twice + x["in"][:k]
    return {"out": out, "scratch": scratch}


_w("asm_scratch_write_first",
   lambda p, g, b: [Buffer("out", F32, 0, p["n"], output=True),
                    Buffer("scratch", F32, 0, p["n"], output=True), Buffer("in", F32, 0, p["n"])],
   _scratch)


def _vec_rmw(x, p, g, b):
    a = x["a"].copy()
    k = 4 * _cnt(p, g, b, "n4")
    a[:k] += U32(1)
    return {"a": a}


_w("asm_shadow_vec_rmw",
   lambda p, g, b: [Buffer("a", U32, 0, 4 * p["n4"], output=True)], _vec_rmw)


def _shift_copy(x, p, g, b):
    a = x["a"].copy()
    base = x["_offset"]["a"]
    for i in range(_cnt(p, g, b)):
        a[base + i + p["off"]] = x["a"][base + i]
    return {"a": a}


_w("asm_shift_copy_inplace",
   lambda p, g, b: [Buffer("a", U32, min(0, p["off"]), max(p["n"], p["n"] + p["off"]),
                           output=True)], _shift_copy)


def _fill_or_double(x, p, g, b):
    a = x["a"].copy()
    k = _cnt(p, g, b)
    a[:k] = F32(p["v"]) if p["mode"] else a[:k] + a[:k]
    return {"a": a}


_w("asm_fill_or_double", lambda p, g, b: [Buffer("a", F32, 0, p["n"], output=True)],
   _fill_or_double)


def _row_sum(x, p, g, b):
    out = x["out"].copy()
    k, m = _cnt(p, g, b), max(p["m"], 0)
    out[:k] = x["in"][:k * m].astype(F64).reshape(k, m).sum(axis=1) if m else 0
    return {"out": out}


_w("asm_row_sum_loop",
   lambda p, g, b: [Buffer("out", F32, 0, p["n"], output=True),
                    Buffer("in", F32, 0, p["n"] * max(p["m"], 0))], _row_sum,
   rtol=1e-4, atol=1e-4)


# ---------------------------------------------------------------- the SASS fixture set
# fixtures/src/sass/*.cu (expectations in fixtures/sass/expected.toml): the oracle runs
# their PTX (fixtures/sass/<arch>/*.ptx) on the instances of that file.
def _trunc_div(i, d):
    """C's ``i / d`` and ``i % d`` (truncation towards zero), elementwise."""
    q = np.sign(i) * np.sign(d) * (np.abs(i) // abs(d))
    return q, i - q * d


def _index_span(indices):
    return (int(indices.min()), int(indices.max()) + 1) if len(indices) else (0, 0)


def _sub_nested(x, p, g, b):
    k, n = _cnt(p, g, b), p["n"]
    out = x["out"].copy()
    v = F32(p["s"]) * x["in"][:k]
    out[:k], out[n:n + k] = v, -v
    return {"out": out}


_w("sub_read_then_write",
   lambda p, g, b: [Buffer("in", F32, 0, p["n"], output=True)],
   lambda x, p, g, b: {"in": np.concatenate([x["in"][:_cnt(p, g, b)] * 2 + F32(1),
                                             x["in"][_cnt(p, g, b):]])})
_w("sub_nested",
   lambda p, g, b: [Buffer("out", F32, 0, p["n"] + _cnt(p, g, b), output=True),
                    Buffer("in", F32, 0, p["n"])], _sub_nested)
_w("sub_row_sums",
   lambda p, g, b: [Buffer("out", F32, 0, p["rows"], output=True),
                    Buffer("in", F32, 0, p["rows"] * p["m"])],
   lambda x, p, g, b: {"out": np.concatenate([
       x["in"][:_cnt(p, g, b, "rows") * p["m"]].reshape(-1, p["m"]).sum(axis=1, dtype=F32)
       if p["m"] > 0 else np.zeros(_cnt(p, g, b, "rows"), F32),
       x["out"][_cnt(p, g, b, "rows"):]])}, rtol=1e-4, atol=1e-4)


def _div_u32_out(p, g, b):
    k, d = _cnt(p, g, b), p["d"] & 0xFFFFFFFF
    if d == 0:  # i / 0 is 0xffffffff on the GPU (and in the emulator)
        return Buffer("out", F32, 0, 0, output=True,
                      segments=((0xFFFFFFFF, 0x100000000),) if k else ())
    return Buffer("out", F32, 0, (k - 1) // d + 1 if k else 0, output=True)


_w("div_u32_index",
   lambda p, g, b: [_div_u32_out(p, g, b), Buffer("in", F32, 0, p["n"])])
_w("rem_u32_index",
   lambda p, g, b: [Buffer("out", F32, 0, p["n"], output=True),
                    Buffer("in", F32, 0, min(p["d"], _cnt(p, g, b)))],
   lambda x, p, g, b: {"out": np.concatenate([
       x["in"][np.arange(_cnt(p, g, b)) % p["d"]], x["out"][_cnt(p, g, b):]])})


def _divrem_in(p, g, b):
    q, r = _trunc_div(np.arange(_cnt(p, g, b)), p["d"])
    lo, hi = _index_span(np.concatenate([q, r]))
    return Buffer("in", F32, lo, hi)


def _divrem(x, p, g, b):
    k = _cnt(p, g, b)
    q, r = _trunc_div(np.arange(k), p["d"])
    lo = _index_span(np.concatenate([q, r]))[0]
    out = x["out"].copy()
    out[:k] = x["in"][q - lo] + x["in"][r - lo]
    return {"out": out}


_w("divrem_s32_index",
   lambda p, g, b: [Buffer("out", F32, 0, p["n"], output=True), _divrem_in(p, g, b)],
   _divrem)


def _head_index(p, g, b):
    q, r = _trunc_div(np.arange(_cnt(p, g, b)), p["hd"])
    return q * p["stride"] + r


_w("head_split",
   lambda p, g, b: [Buffer("out", F32, *_index_span(_head_index(p, g, b)), output=True),
                    Buffer("in", F32, 0, p["n"])])
_w("bulk_copy_tiles",
   lambda p, g, b: [Buffer("out", F32, 0, 1024 * max(0, min(p["tiles"], g[0])),
                           output=True),
                    Buffer("in", F32, 0, 1024 * max(0, min(p["tiles"], g[0])))])
_w("wgmma_tile",
   lambda p, g, b: [Buffer("c", F32, 0, 128 * 32 * g[0], output=True),
                    Buffer("a", np.uint16, 0, 1024 * g[0]), Buffer("b", np.uint16, 0, 1024)])
_w("setmaxnreg_split",
   lambda p, g, b: [Buffer("out", F32, 0, p["n"], output=True), Buffer("in", F32, 0, p["n"])])
_w("stmatrix_tile",
   lambda p, g, b: [Buffer("out", F32, 0, p["n"], output=True), Buffer("in", F32, 0, p["n"])])
_w("uniform_switch",
   lambda p, g, b: [Buffer("out", F32, 0, p["n"], output=True), Buffer("in", F32, 0, p["n"])])


def _big_lists_tensors(p, g, b):
    """Per tensor the blocks of ``copy_lists`` pick, the elements [0, hi) they copy."""
    extents: dict[int, int] = {}
    for block in range(g[0]):
        t = _at(p, "lists", 5120 + block, 1)
        hi = max(0, min(_at(p, "lists", 4096 + 4 * t, 4, signed=True), b[0]))
        extents[t] = max(extents.get(t, 0), hi)
    return extents


def _big_lists_buffers(p, g, b):
    out = []
    for t, hi in sorted(_big_lists_tensors(p, g, b).items()):
        out.append(Buffer(("lists", 8 * t), F32, 0, hi))
        out.append(Buffer(("lists", 2048 + 8 * t), F32, 0, hi, output=True))
    return out


def _big_lists_copy(x, p, g, b):
    new = {}
    for t, hi in _big_lists_tensors(p, g, b).items():
        src, dst = ("lists", 8 * t), ("lists", 2048 + 8 * t)
        new[dst] = x[dst].copy()
        new[dst][:hi] = x[src][:hi]
    return new


def _scale_after_table(x, p, g, b):
    k = max(0, min(p["n"], _threads(g, b)))
    scales = np.array([_at(p, "table", 4 * (i % 1100), 4) for i in range(k)],
                      dtype=np.uint32).view(F32)
    out = x["out"].copy()
    out[:k] = x["in"][:k] * scales
    return {"out": out}


_w("copy_lists", _big_lists_buffers, _big_lists_copy)
_w("scale_after_table",
   lambda p, g, b: [Buffer("out", F32, 0, max(0, min(p["n"], _threads(g, b))), output=True),
                    Buffer("in", F32, 0, max(0, min(p["n"], _threads(g, b))))],
   _scale_after_table)


def _thread_switch(x, p, g, b):
    k = max(0, min(p["n"], _threads(g, b)))
    i = np.arange(k)
    c = i % 16
    out = x["out"].copy()
    out[:k] = x["in"][:k] * (c + 2).astype(F32) + x["in"][i + c + 1]
    return {"out": out}


_w("thread_switch",
   lambda p, g, b: [Buffer("out", F32, 0, max(0, min(p["n"], _threads(g, b))), output=True),
                    Buffer("in", F32, 0, max(0, min(p["n"], _threads(g, b))) + 16)],
   _thread_switch)


def _spill_sum(x, p, g, b):
    n = max(0, p["n"])
    stride = _threads(g, b)
    j = np.arange(n)
    k = (j // stride) % 6
    first = j - k * stride

    def at(name, offset):
        other = first + offset * stride
        valid = other < n
        values = np.zeros(n, dtype=F32)
        values[valid] = x[name][other[valid]]
        return values

    a, bb, c, d, e, f = (x[name][:n] for name in ("a", "b", "c", "d", "e", "f"))
    out = x["out"].copy()
    out[:n] = a * bb + c * d - e * f + at("a", (k + 1) % 6) * at("f", (k + 3) % 6)
    return {"out": out}


_w("spill_sum",
   lambda p, g, b: [Buffer("out", F32, 0, max(0, p["n"]), output=True)]
   + [Buffer(name, F32, 0, max(0, p["n"])) for name in ("a", "b", "c", "d", "e", "f")],
   _spill_sum, rtol=1e-4, atol=1e-5)
