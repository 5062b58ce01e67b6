"""The shim's C LaunchCheck evaluator, called from Python (for tests and benchmarks).

Loading ``libkernelcheck_preload.so`` with :mod:`ctypes` (``RTLD_LOCAL``) does not interpose
anything in this process: its ``dlsym`` and driver hooks stay private to the handle.
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from functools import cache

__all__ = ["VERDICTS", "RULES", "native_evaluate", "native_eval_ns", "entrypoints",
           "remap"]

VERDICTS = ("idempotent", "not_idempotent", "not_proven")
#: Rule names, in the order of ``enum kc_rule`` in check.h.
RULES = ("no_clobber", "disjoint", "no_threads", "non_idempotent_atomic", "overlap",
         "unmodelled", "unknown_range", "no_analysis", "unknown_function", "no_layout",
         "internal")


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
    lib.kc_entrypoint_name.restype = ctypes.c_char_p
    lib.kc_entrypoint_remap.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_ulonglong]
    return lib


def _dims(dims: Sequence[int]):
    d = list(dims) + [1] * (3 - len(dims))
    return (ctypes.c_uint32 * 3)(*d)


def native_evaluate(check_bytes: bytes, params: bytes, grid: Sequence[int],
                    block: Sequence[int], allocations=None) -> tuple[str, str]:
    """Evaluate the binary form of a LaunchCheck in C: ``(verdict, rule)``.

    Examples
    --------
    >>> from kernelcheck.launch.check import LaunchCheck
    >>> native_evaluate(LaunchCheck("e", 0, (), (), ()).to_bytes(), b"", (1,), (1,))
    ('idempotent', 'no_clobber')
    """
    rule = ctypes.c_int(0)
    allocs = None
    n = 0
    if allocations is not None:
        flat = [int(x) for pair in allocations for x in pair]
        allocs = (ctypes.c_uint64 * max(1, len(flat)))(*flat)
        n = len(flat) // 2
    v = _lib().kc_test_eval(check_bytes, len(check_bytes), params, len(params), _dims(grid),
                            _dims(block), allocs, n, ctypes.byref(rule))
    if v < 0:
        raise ValueError("the LaunchCheck binary form does not decode")
    return VERDICTS[v], RULES[rule.value]


def native_eval_ns(check_bytes: bytes, params: bytes, grid: Sequence[int],
                   block: Sequence[int], iterations: int = 100_000) -> float:
    """Mean nanoseconds of one C evaluation, over ``iterations`` in a C loop."""
    return _lib().kc_bench_eval(check_bytes, len(check_bytes), params, len(params),
                                _dims(grid), _dims(block), iterations)


def entrypoints() -> tuple[str, ...]:
    """The exported names of every interposed driver entry point (from entrypoints.h)."""
    lib = _lib()
    return tuple(lib.kc_entrypoint_name(k).decode() for k in range(lib.kc_entrypoint_count()))


def remap(symbol: str, version: int, flags: int = 0) -> str | None:
    """The interposed variant a ``cuGetProcAddress(symbol, version, flags)`` is given."""
    k = _lib().kc_entrypoint_remap(symbol.encode(), version, flags)
    return None if k < 0 else entrypoints()[k]
