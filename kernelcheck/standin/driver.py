"""Driver operations of the stand-in ``libcuda.so.1``, executed on the CPU emulator.

The C side calls these functions with the GIL held, passing host pointers and device
addresses as integers. Each returns a ``CUresult`` (an int) or a tuple whose first item is
the ``CUresult``. No exception leaves this module: an exception is turned into the status the
real driver would give (an invalid access into ``CUDA_ERROR_ILLEGAL_ADDRESS``, anything else
during a launch into ``CUDA_ERROR_LAUNCH_FAILED``), with one line on stderr saying why.

One process has one emulated device: a module-level :class:`~kernelcheck.emu.Emulator`.
Cubin images load (so interception of their loading can be tested) but their kernels cannot
run: the emulator executes PTX, and launching a kernel from a cubin returns
``CUDA_ERROR_NOT_SUPPORTED``.

Test-only fault switch: ``KERNELCHECK_STANDIN_FAIL_LAUNCH=N[:STEPS]`` makes the ``N``-th launch
of the process (1-based) stop after ``STEPS`` instruction steps per batch (default 16), its
writes so far visible, and return ``CUDA_ERROR_LAUNCH_FAILED``, as a launch killed part way.
With ``N[:STEPS]:sync`` the launch returns success and the error is reported by the next
``cuStreamSynchronize`` or ``cuCtxSynchronize``, as an asynchronous fault is on a GPU.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading

import numpy as np

CUDA_SUCCESS = 0
CUDA_ERROR_INVALID_VALUE = 1
CUDA_ERROR_OUT_OF_MEMORY = 2
CUDA_ERROR_INVALID_IMAGE = 200
CUDA_ERROR_INVALID_PTX = 218
CUDA_ERROR_NOT_FOUND = 500
CUDA_ERROR_ILLEGAL_ADDRESS = 700
CUDA_ERROR_LAUNCH_FAILED = 719
CUDA_ERROR_NOT_SUPPORTED = 801

__all__ = ["module_load", "module_get_function", "mem_alloc", "mem_free", "memcpy_htod",
           "memcpy_dtoh", "memcpy_dtod", "memcpy_any", "memset", "pointer_info", "launch",
           "emulator"]

_lock = threading.Lock()
_emulator = None
_modules: dict[int, object] = {}       # module id -> Program, or the kernel names of a cubin
_functions: dict[int, tuple[object, str]] = {}
_launches = 0
_pending_error = CUDA_SUCCESS           # a deferred injected fault, reported at synchronize


def _fail_steps() -> int | None:
    """Steps before the injected failure of this launch, or ``None`` (the fault switch)."""
    spec = os.environ.get("KERNELCHECK_STANDIN_FAIL_LAUNCH", "")
    if not spec:
        return None
    number, _, steps = spec.partition(":")
    steps = steps.partition(":")[0]
    return int(steps or 16) if int(number) == _launches else None


def _fail_at_sync() -> bool:
    return os.environ.get("KERNELCHECK_STANDIN_FAIL_LAUNCH", "").endswith(":sync")


def synchronize() -> int:
    """Wait for the device: the deferred injected fault, if any, is reported once."""
    global _pending_error
    status, _pending_error = _pending_error, CUDA_SUCCESS
    return status


def emulator():
    """The process's emulated device (created on first use)."""
    global _emulator
    if _emulator is None:
        from kernelcheck.emu import Emulator
        _emulator = Emulator()
    return _emulator


def _warn(what: str, error: BaseException) -> None:
    print(f"kernelcheck stand-in driver: {what}: {type(error).__name__}: {error}",
          file=sys.stderr)


def module_load(image: int, size: int) -> tuple[int, int]:
    """Load the module image of ``size`` bytes at host address ``image``."""
    data = ctypes.string_at(image, size)
    try:
        if data[:4] == b"\x7fELF":
            from kernelcheck.binary import CubinFile
            program = ("cubin", CubinFile(data).kernel_names())
        elif data[:4] == b"\x50\xed\x55\xba":
            program = ("fatbin", ())
        else:
            program = emulator().load_module(data.decode("utf-8", "replace"))
    except Exception as error:  # noqa: BLE001  (a bad image is a status, not a crash)
        _warn("module load failed", error)
        return CUDA_ERROR_INVALID_PTX if data[:4] != b"\x7fELF" else CUDA_ERROR_INVALID_IMAGE, 0
    with _lock:
        module_id = len(_modules) + 1
        _modules[module_id] = program
    return CUDA_SUCCESS, module_id


def module_get_function(module_id: int, name: str) -> tuple[int, ...]:
    """The function ``name`` of a module: (status, id, n_params, offset0, size0, ...)."""
    program = _modules.get(module_id)
    if program is None:
        return (CUDA_ERROR_NOT_FOUND,)
    if isinstance(program, tuple):
        return (CUDA_ERROR_NOT_SUPPORTED,)
    function = next((f for f in program.module.functions
                     if f.name == name and f.is_kernel and f.body is not None), None)
    if function is None:
        return (CUDA_ERROR_NOT_FOUND,)
    with _lock:
        function_id = len(_functions) + 1
        _functions[function_id] = (program, name)
    layout = [x for p in function.params for x in (p.offset, p.size)]
    return (CUDA_SUCCESS, function_id, len(function.params), *layout)


def mem_alloc(nbytes: int) -> tuple[int, int]:
    """Allocate ``nbytes`` of device memory: (status, address)."""
    try:
        return CUDA_SUCCESS, emulator().alloc(max(1, nbytes))
    except MemoryError:
        return CUDA_ERROR_OUT_OF_MEMORY, 0


def mem_free(address: int) -> int:
    """Free the allocation at ``address``."""
    try:
        emulator().free(address)
    except Exception:  # noqa: BLE001
        return CUDA_ERROR_INVALID_VALUE
    return CUDA_SUCCESS


def memcpy_htod(dst: int, src: int, nbytes: int) -> int:
    """Copy ``nbytes`` from host address ``src`` to device address ``dst``."""
    try:
        emulator().copy_htod(dst, np.frombuffer(ctypes.string_at(src, nbytes), np.uint8))
    except Exception as error:  # noqa: BLE001
        _warn("cuMemcpyHtoD", error)
        return CUDA_ERROR_INVALID_VALUE
    return CUDA_SUCCESS


def memcpy_dtoh(dst: int, src: int, nbytes: int) -> int:
    """Copy ``nbytes`` from device address ``src`` to host address ``dst``."""
    try:
        data = emulator().copy_dtoh(src, nbytes).tobytes()
    except Exception as error:  # noqa: BLE001
        _warn("cuMemcpyDtoH", error)
        return CUDA_ERROR_INVALID_VALUE
    ctypes.memmove(dst, data, nbytes)
    return CUDA_SUCCESS


def memcpy_dtod(dst: int, src: int, nbytes: int) -> int:
    """Copy ``nbytes`` between device addresses."""
    try:
        emulator().copy_dtod(dst, src, nbytes)
    except Exception as error:  # noqa: BLE001
        _warn("cuMemcpyDtoD", error)
        return CUDA_ERROR_INVALID_VALUE
    return CUDA_SUCCESS


def memset(dst: int, value: int, count: int, width: int) -> int:
    """Set ``count`` elements of ``width`` bytes (1, 2 or 4) at ``dst`` to ``value``."""
    try:
        if width == 1:
            emulator().memset(dst, value & 0xFF, count)
        else:
            dtype = np.uint16 if width == 2 else np.uint32
            emulator().copy_htod(dst, np.full(count, value, dtype=dtype).view(np.uint8))
    except Exception as error:  # noqa: BLE001
        _warn("cuMemset", error)
        return CUDA_ERROR_INVALID_VALUE
    return CUDA_SUCCESS


def pointer_info(address: int) -> tuple[int, ...]:
    """The device allocation holding ``address``: (status, base, size)."""
    allocation = emulator().memory.find(address)
    if allocation is None:
        return (CUDA_ERROR_INVALID_VALUE, 0, 0)
    return (CUDA_SUCCESS, allocation.base, allocation.size)


def memcpy_any(dst: int, src: int, nbytes: int) -> int:
    """Copy ``nbytes`` between two addresses, each in device memory or on the host.

    With unified addressing (``cuMemcpy``), an address inside an emulated allocation is
    device memory and any other address is host memory of this process.
    """
    memory = emulator().memory
    on_device = memory.find(dst) is not None, memory.find(src) is not None
    if on_device == (True, True):
        return memcpy_dtod(dst, src, nbytes)
    if on_device == (True, False):
        return memcpy_htod(dst, src, nbytes)
    if on_device == (False, True):
        return memcpy_dtoh(dst, src, nbytes)
    ctypes.memmove(dst, src, nbytes)
    return CUDA_SUCCESS


def launch(function_id: int, gx: int, gy: int, gz: int, bx: int, by: int, bz: int,
           shared: int, params: int, size: int) -> int:
    """Run a kernel with the packed parameter buffer of ``size`` bytes at host ``params``."""
    entry = _functions.get(function_id)
    if entry is None:
        return CUDA_ERROR_NOT_FOUND
    program, name = entry
    raw = ctypes.string_at(params, size) if size else b""
    from kernelcheck.emu import MemoryFault
    global _launches, _pending_error
    _launches += 1
    try:
        fail = _fail_steps()
        emulator().launch(program, name, grid=(gx, gy, gz), block=(bx, by, bz), params=raw,
                          shared_bytes=shared, step_limit=fail)
        if fail is not None and _fail_at_sync():
            _pending_error = CUDA_ERROR_LAUNCH_FAILED
            _warn(f"launch of {name}", RuntimeError(
                f"launch {_launches} failed by KERNELCHECK_STANDIN_FAIL_LAUNCH (reported at "
                f"the next synchronize)"))
        elif fail is not None:
            raise RuntimeError(f"launch {_launches} failed by KERNELCHECK_STANDIN_FAIL_LAUNCH")
    except MemoryFault as error:
        _warn(f"launch of {name}", error)
        return CUDA_ERROR_ILLEGAL_ADDRESS
    except Exception as error:  # noqa: BLE001
        _warn(f"launch of {name}", error)
        return CUDA_ERROR_LAUNCH_FAILED
    return CUDA_SUCCESS
