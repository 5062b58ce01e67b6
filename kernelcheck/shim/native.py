"""The shim's C LaunchCheck evaluator, called from Python (for tests and benchmarks).

Loading ``libkernelcheck_preload.so`` with :mod:`ctypes` (``RTLD_LOCAL``) does not interpose
anything in this process: its ``dlsym`` and driver hooks stay private to the handle.
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from functools import cache

__all__ = ["VERDICTS", "RULES", "PATHS", "RANGE_SETS", "native_evaluate", "native_ranges",
           "native_eval_ns", "fast_size",
           "fast_ops", "entrypoints",
           "remap"]

VERDICTS = ("idempotent", "not_idempotent", "not_proven")
#: Rule names, in the order of ``enum kc_rule`` in check.h.
RULES = ("no_clobber", "disjoint", "no_threads", "non_idempotent_atomic", "overlap",
         "unmodelled", "unknown_range", "no_analysis", "unknown_function", "no_layout",
         "internal")
#: Evaluation paths: what the shim runs (the compiled fast path, the general evaluator
#: where it gives up), the general evaluator alone, the fast path alone.
PATHS = ("shim", "general", "fast")


@cache
def _lib() -> ctypes.CDLL:
    from kernelcheck.shim.build import preload_library

    lib = ctypes.CDLL(str(preload_library()), mode=ctypes.RTLD_LOCAL)
    lib.kc_test_eval.restype = ctypes.c_int
    lib.kc_test_eval.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p,
                                 ctypes.c_size_t, ctypes.POINTER(ctypes.c_uint32),
                                 ctypes.POINTER(ctypes.c_uint32),
                                 ctypes.POINTER(ctypes.c_uint64), ctypes.c_int,
                                 ctypes.POINTER(ctypes.c_int)]
    lib.kc_bench_eval.restype = ctypes.c_double
    lib.kc_bench_eval.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p,
                                  ctypes.c_size_t, ctypes.POINTER(ctypes.c_uint32),
                                  ctypes.POINTER(ctypes.c_uint32), ctypes.c_long]
    lib.kc_test_eval_path.restype = ctypes.c_int
    lib.kc_test_eval_path.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p,
                                      ctypes.c_size_t, ctypes.POINTER(ctypes.c_uint32),
                                      ctypes.POINTER(ctypes.c_uint32), ctypes.c_int,
                                      ctypes.POINTER(ctypes.c_int)]
    lib.kc_bench_eval_path.restype = ctypes.c_double
    lib.kc_bench_eval_path.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p,
                                       ctypes.c_size_t, ctypes.POINTER(ctypes.c_uint32),
                                       ctypes.POINTER(ctypes.c_uint32), ctypes.c_int,
                                       ctypes.c_long]
    lib.kc_test_fast_size.restype = ctypes.c_long
    lib.kc_test_fast_size.argtypes = [ctypes.c_char_p, ctypes.c_size_t,
                                      ctypes.POINTER(ctypes.c_uint32)]
    lib.kc_test_fast_describe.restype = ctypes.c_long
    lib.kc_test_fast_describe.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p,
                                          ctypes.c_size_t]
    lib.kc_test_ranges.restype = ctypes.c_int
    lib.kc_test_ranges.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p,
                                   ctypes.c_size_t, ctypes.POINTER(ctypes.c_uint32),
                                   ctypes.POINTER(ctypes.c_uint32),
                                   ctypes.POINTER(ctypes.c_uint64), ctypes.c_int, ctypes.c_int,
                                   ctypes.POINTER(ctypes.c_uint64), ctypes.c_int]
    lib.kc_entrypoint_name.restype = ctypes.c_char_p
    lib.kc_entrypoint_remap.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_ulonglong]
    return lib


def _dims(dims: Sequence[int]):
    d = list(dims) + [1] * (3 - len(dims))
    return (ctypes.c_uint32 * 3)(*d)


def native_evaluate(check_bytes: bytes, params: bytes, grid: Sequence[int],
                    block: Sequence[int], allocations=None,
                    path: str = "shim") -> tuple[str, str] | None:
    """Evaluate the binary form of a LaunchCheck in C: ``(verdict, rule)``.

    ``path`` chooses the evaluator (:data:`PATHS`): ``"shim"`` as the shim runs it,
    ``"general"`` the general evaluator alone, ``"fast"`` the compiled fast path alone,
    which returns ``None`` when it gives up on the instance (or the check has no compiled
    form). With ``allocations`` only ``"shim"`` is available.

    Examples
    --------
    >>> from kernelcheck.launch.check import LaunchCheck
    >>> native_evaluate(LaunchCheck("e", 0, (), (), ()).to_bytes(), b"", (1,), (1,))
    ('idempotent', 'no_clobber')
    """
    rule = ctypes.c_int(0)
    if allocations is not None or path == "shim":
        allocs = None
        n = 0
        if allocations is not None:
            if path != "shim":
                raise ValueError("allocations are evaluated on the shim's path only")
            flat = [int(x) for pair in allocations for x in pair]
            allocs = (ctypes.c_uint64 * max(1, len(flat)))(*flat)
            n = len(flat) // 2
        v = _lib().kc_test_eval(check_bytes, len(check_bytes), params, len(params),
                                _dims(grid), _dims(block), allocs, n, ctypes.byref(rule))
    else:
        v = _lib().kc_test_eval_path(check_bytes, len(check_bytes), params, len(params),
                                     _dims(grid), _dims(block), PATHS.index(path),
                                     ctypes.byref(rule))
    if v == -1:
        raise ValueError("the LaunchCheck binary form does not decode")
    if v == -2:
        return None
    return VERDICTS[v], RULES[rule.value]


#: Byte sets :func:`native_ranges` computes, in the C shim's order (``enum kc_range_set``).
RANGE_SETS = ("clobbered", "writes", "reads")


def native_ranges(check_bytes: bytes, params: bytes, grid: Sequence[int],
                  block: Sequence[int], allocations, which: str = "clobbered",
                  max_ranges: int = 64) -> tuple[tuple[int, int], ...] | None:
    """The byte ranges the C shim's recovery plan starts from (``kc_check_ranges``):
    ``which`` of :data:`RANGE_SETS`, half-open and sorted, more than ``max_ranges`` joined
    into hulls; ``None`` when unknown.
    """
    flat = [int(x) for pair in allocations for x in pair]
    allocs = (ctypes.c_uint64 * max(1, len(flat)))(*flat)
    out = (ctypes.c_uint64 * (2 * max_ranges))()
    n = _lib().kc_test_ranges(check_bytes, len(check_bytes), params, len(params), _dims(grid),
                              _dims(block), allocs, len(flat) // 2, RANGE_SETS.index(which),
                              out, max_ranges)
    if n == -2:
        raise ValueError("the LaunchCheck binary form does not decode")
    if n < 0:
        return None
    return tuple((out[2 * k], out[2 * k + 1]) for k in range(n))


def native_eval_ns(check_bytes: bytes, params: bytes, grid: Sequence[int],
                   block: Sequence[int], iterations: int = 100_000,
                   path: str = "shim") -> float | None:
    """Nanoseconds of one C evaluation by ``path``, in a C loop (the fastest of ten rounds
    of ``iterations // 10``); ``None`` when ``path`` is ``"fast"`` and the fast path gives up
    on the instance."""
    ns = _lib().kc_bench_eval_path(check_bytes, len(check_bytes), params, len(params),
                                   _dims(grid), _dims(block), PATHS.index(path), iterations)
    if ns == -1:
        raise ValueError("the LaunchCheck binary form does not decode")
    return None if ns == -2 else ns


def fast_size(check_bytes: bytes) -> tuple[int, int] | None:
    """``(instructions, preset slots)`` of the check's compiled fast path: what a launch
    runs and the slots known before it; ``None`` when the check has no compiled form."""
    preset = ctypes.c_uint32(0)
    n = _lib().kc_test_fast_size(check_bytes, len(check_bytes), ctypes.byref(preset))
    if n == -1:
        raise ValueError("the LaunchCheck binary form does not decode")
    return None if n == -2 else (n, preset.value)


def fast_ops(check_bytes: bytes) -> tuple[str, ...] | None:
    """The operations of the compiled fast form, one per instruction run per launch;
    ``None`` when the check has no compiled form."""
    cap = 1 << 16
    out = ctypes.create_string_buffer(cap)
    n = _lib().kc_test_fast_describe(check_bytes, len(check_bytes), out, cap)
    if n == -1:
        raise ValueError("the LaunchCheck binary form does not decode")
    if n == -2:
        return None
    return tuple(out.value.decode().split())


def entrypoints() -> tuple[str, ...]:
    """The exported names of every interposed driver entry point (from entrypoints.h)."""
    lib = _lib()
    return tuple(lib.kc_entrypoint_name(k).decode() for k in range(lib.kc_entrypoint_count()))


def remap(symbol: str, version: int, flags: int = 0) -> str | None:
    """The interposed variant a ``cuGetProcAddress(symbol, version, flags)`` is given."""
    k = _lib().kc_entrypoint_remap(symbol.encode(), version, flags)
    return None if k < 0 else entrypoints()[k]
