"""A :class:`~kernelcheck.recovery.device.Device` on a CUDA driver, through cuda-python.

:class:`CudaDevice` implements the operations the recovery engine needs with
``cuda.bindings.driver``: allocations (``cuMemAlloc``/``cuMemFree``, tracked here, since the
engine needs the allocation table), copies (``cuMemcpyHtoD``/``DtoH``, ``cuMemsetD8``),
modules (the IR printed back to PTX, ``cuModuleLoadData``, ``cuModuleGetFunction``), launches
(``cuLaunchKernel`` with one pointer per parameter into the packed parameter buffer) and
``cuCtxSynchronize``. Every status other than ``CUDA_SUCCESS`` becomes a
:class:`~kernelcheck.recovery.device.DeviceError`, which is the engine's detection path:

=========================================  ==================
CUresult                                   ``kind``
=========================================  ==================
``CUDA_ERROR_ILLEGAL_ADDRESS`` (700),      ``memory_fault``
``CUDA_ERROR_MISALIGNED_ADDRESS`` (716)
``CUDA_ERROR_ILLEGAL_INSTRUCTION`` (715),  ``trap``
``CUDA_ERROR_ASSERT`` (710)
``CUDA_ERROR_LAUNCH_TIMEOUT`` (702)        ``timeout``
anything else during a launch or sync      ``launch_failure``
=========================================  ==================

Launch errors of an asynchronous driver may surface only at synchronization; with
``sync_each_launch=True`` (the default) the device synchronizes after every launch so that a
fault is pinned to its launch.

Not covered: on a real GPU the errors above are *sticky* (the context is unusable
afterwards), so a recovery that restores bytes into the same context needs a fresh context
and a re-upload first; this class does not rebuild contexts. It offers no
``set_write_guard``: write-address checking on a GPU is the PTX rewrite of
:mod:`kernelcheck.recovery.store_guard`.
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from dataclasses import dataclass, field

from kernelcheck.ir.nodes import Module
from kernelcheck.recovery.device import DeviceError

__all__ = ["CudaDevice", "CudaModule"]

_KINDS = {700: "memory_fault", 716: "memory_fault", 715: "trap", 710: "trap",
          702: "timeout"}


@dataclass(slots=True)
class CudaModule:
    """A loaded module: its IR, the driver's ``CUmodule`` and the functions looked up."""

    ir: Module
    handle: object
    functions: dict = field(default_factory=dict)


class CudaDevice:
    """The recovery engine's device on the current CUDA driver (see the module docs).

    Parameters
    ----------
    ordinal : int
        The device to use; its primary context is made current.
    sync_each_launch : bool
        Synchronize after every launch, so a launch error names its launch.

    Raises
    ------
    DeviceError
        ``launch_failure`` when the driver cannot be initialised.
    """

    def __init__(self, ordinal: int = 0, *, sync_each_launch: bool = True) -> None:
        from cuda.bindings import driver
        self._drv = driver
        self.sync_each_launch = sync_each_launch
        self.launches = 0
        self._allocs: dict[int, int] = {}
        self._call("cuInit", driver.cuInit(0))
        dev = self._call("cuDeviceGet", driver.cuDeviceGet(ordinal))
        self._ctx = self._call("cuDevicePrimaryCtxRetain", driver.cuDevicePrimaryCtxRetain(dev))
        self._call("cuCtxSetCurrent", driver.cuCtxSetCurrent(self._ctx))

    # ------------------------------------------------------------------ errors
    def _call(self, what: str, result, launch: int | None = None):
        status, *values = result if isinstance(result, tuple) else (result,)
        code = int(status)
        if code:
            _, name = self._drv.cuGetErrorName(status)
            text = name.decode() if isinstance(name, bytes) else str(name)
            raise DeviceError(f"{what}: {text} ({code})", _KINDS.get(code, "launch_failure"),
                              launch)
        if not values:
            return None
        return values[0] if len(values) == 1 else tuple(values)

    # ------------------------------------------------------------------ memory
    def alloc(self, nbytes: int) -> int:
        """Allocate ``nbytes`` of device memory; returns its address."""
        ptr = int(self._call("cuMemAlloc", self._drv.cuMemAlloc(max(1, nbytes))))
        self._allocs[ptr] = int(nbytes)
        return ptr

    def free(self, address: int) -> None:
        """Free the allocation at ``address``."""
        self._call("cuMemFree", self._drv.cuMemFree(address))
        self._allocs.pop(int(address), None)

    def copy_htod(self, address: int, data) -> None:
        """Copy host bytes to device memory at ``address``."""
        raw = bytes(data)
        if raw:
            self._call("cuMemcpyHtoD", self._drv.cuMemcpyHtoD(address, raw, len(raw)))

    def copy_dtoh(self, address: int, nbytes: int) -> bytes:
        """A host copy of ``nbytes`` at ``address``."""
        buf = bytearray(nbytes)
        if nbytes:
            self._call("cuMemcpyDtoH", self._drv.cuMemcpyDtoH(buf, address, nbytes))
        return bytes(buf)

    def memset(self, address: int, value: int, nbytes: int) -> None:
        """Set ``nbytes`` at ``address`` to the byte ``value``."""
        self._call("cuMemsetD8", self._drv.cuMemsetD8(address, value & 0xFF, nbytes))

    def allocations(self) -> tuple[tuple[int, int], ...]:
        """The live allocations made through this device, ``(base, size)`` by base."""
        return tuple(sorted(self._allocs.items()))

    # ------------------------------------------------------------------ modules and launches
    def load_module(self, module: Module) -> CudaModule:
        """Load the module's PTX (printed from its IR) with ``cuModuleLoadData``."""
        from kernelcheck.ptx.printer import print_ptx
        text = print_ptx(module).encode() + b"\0"
        handle = self._call("cuModuleLoadData", self._drv.cuModuleLoadData(text))
        return CudaModule(module, handle)

    def _function(self, handle: CudaModule, kernel: str):
        fn = handle.functions.get(kernel)
        if fn is None:
            fn = self._call("cuModuleGetFunction",
                            self._drv.cuModuleGetFunction(handle.handle, kernel.encode()))
            handle.functions[kernel] = fn
        return fn

    def launch(self, handle: CudaModule, kernel: str, grid: Sequence[int],
               block: Sequence[int], params: bytes, shared_bytes: int = 0) -> None:
        """Launch ``kernel`` with the packed parameter buffer ``params``.

        Raises
        ------
        DeviceError
            The launch (or, with ``sync_each_launch``, its execution) failed.
        """
        index = self.launches
        self.launches += 1
        fn = self._function(handle, kernel)
        ir = next(f for f in handle.ir.kernels if f.name == kernel)
        raw = bytes(params)
        buf = ctypes.create_string_buffer(raw, max(1, len(raw)))
        base = ctypes.addressof(buf)
        pointers = (ctypes.c_void_p * max(1, len(ir.params)))(
            *(base + p.offset for p in ir.params))
        g = tuple(grid) + (1,) * (3 - len(grid))
        b = tuple(block) + (1,) * (3 - len(block))
        self._call(f"cuLaunchKernel {kernel}",
                   self._drv.cuLaunchKernel(fn, *g, *b, shared_bytes, 0,
                                            ctypes.addressof(pointers), 0), index)
        if self.sync_each_launch:
            self._call(f"{kernel}: cuCtxSynchronize", self._drv.cuCtxSynchronize(), index)

    def synchronize(self) -> None:
        """``cuCtxSynchronize``; a held error does not name its launch."""
        self._call("cuCtxSynchronize", self._drv.cuCtxSynchronize())
