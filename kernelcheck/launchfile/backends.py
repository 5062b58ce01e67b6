"""Run a launch file on a backend: kernelcheck's CPU emulator, or a GPU through the driver API.

Both backends take the same :class:`~kernelcheck.launchfile.program.PtxProgram` and
:class:`~kernelcheck.launchfile.spec.LaunchSpec` and return the bytes of every output buffer,
so their results can be compared byte for byte (:func:`kernelcheck.launchfile.compare.diff`).

The GPU backend uses only ``cuda.bindings.driver`` (cuInit, cuModuleLoadData,
cuModuleGetFunction, cuMemAlloc, cuMemcpyHtoD, cuLaunchKernel, cuMemcpyDtoH): the PTX text is
JIT-compiled by the driver, never by kernelcheck. On a machine without a GPU it runs on the
stand-in ``libcuda.so.1`` (:mod:`kernelcheck.standin`), which is the emulator again.
"""

from __future__ import annotations

import re

import numpy as np

from kernelcheck.errors import KernelcheckError, UnsupportedFeature
from kernelcheck.launchfile.params import param_buffer, param_values
from kernelcheck.launchfile.program import PtxProgram
from kernelcheck.launchfile.spec import LaunchSpec

__all__ = ["BACKENDS", "LaunchFailed", "GpuUnavailable", "run_on_emulator", "run_on_gpu",
           "run_launch"]

#: Backend names as the command line spells them.
BACKENDS = ("emulator", "gpu")

_WHERE = re.compile(r"^(?P<function>[^:\s]+): instruction (?P<index>\d+)\b")
_LINE = re.compile(r"PTX line (?P<line>\d+)")


class LaunchFailed(KernelcheckError):
    """The kernel ran and failed: a memory fault, ``trap``, or a step limit reached."""


class GpuUnavailable(KernelcheckError):
    """No CUDA driver or device, or a driver call failed; the message names the call."""


def run_launch(program: PtxProgram, spec: LaunchSpec, backend: str = "emulator",
               *, step_limit: int | None = None) -> dict[str, bytes]:
    """Run ``spec`` on ``backend`` and return the output buffers by name."""
    if backend == "emulator":
        return run_on_emulator(program, spec, step_limit=step_limit)
    if backend == "gpu":
        return run_on_gpu(program, spec)
    raise KernelcheckError(f"unknown backend {backend!r} (expected one of "
                           f"{', '.join(BACKENDS)})")


def run_on_emulator(program: PtxProgram, spec: LaunchSpec, *, step_limit: int | None = None
                    ) -> dict[str, bytes]:
    """Run the launch on :class:`kernelcheck.emu.Emulator`.

    Raises
    ------
    UnsupportedFeature
        Something the emulator does not model, located at ``file:line:column``.
    LaunchFailed
        A memory fault, a ``trap``, or ``step_limit`` steps reached before the end.
    """
    from kernelcheck.emu import Emulator, LaunchError, MemoryFault

    emu = Emulator()
    addresses = {}
    for buffer in spec.buffers:
        addresses[buffer.name] = emu.alloc(len(buffer.data))
        emu.copy_htod(addresses[buffer.name], np.frombuffer(buffer.data, dtype=np.uint8))
    values = param_values(spec, program.kernel, addresses)
    try:
        loaded = emu.load_module(program.module)
        result = emu.launch(loaded, program.kernel.name, grid=spec.grid, block=spec.block,
                            params=param_buffer(program.kernel, values),
                            shared_bytes=spec.shared_bytes, step_limit=step_limit)
    except UnsupportedFeature as error:
        raise _located(program, error) from error
    except (MemoryFault, LaunchError) as error:
        raise LaunchFailed(f"{program.filename}: kernel {program.kernel.name} failed on the "
                           f"emulator: {error}") from error
    if not result.completed:
        raise LaunchFailed(f"{program.filename}: kernel {program.kernel.name} did not finish "
                           f"within {step_limit} steps")
    sizes = {b.name: len(b.data) for b in spec.buffers}
    return {o.buffer: emu.copy_dtoh(addresses[o.buffer], sizes[o.buffer]).tobytes()
            for o in spec.outputs}


def _located(program: PtxProgram, error: UnsupportedFeature) -> UnsupportedFeature:
    """The emulator's error with its place as ``file:line:column`` of the PTX file."""
    where = error.where or ""
    match = _WHERE.match(where)
    position = program.position(match["function"], int(match["index"])) if match else None
    if position is None:
        line = _LINE.search(where)
        position = (int(line["line"]), 1) if line else None
    if position is None:
        return UnsupportedFeature(error.what, program.filename)
    return UnsupportedFeature(error.what, f"{program.filename}:{position[0]}:{position[1]}")


# -- the GPU backend -------------------------------------------------------------------------

def run_on_gpu(program: PtxProgram, spec: LaunchSpec, *, device: int = 0) -> dict[str, bytes]:
    """Run the launch on a GPU through ``cuda.bindings.driver``.

    Raises
    ------
    GpuUnavailable
        cuda-bindings or the driver is missing, or a driver call fails (JIT errors included).
    """
    try:
        from cuda.bindings import driver as cu
    except ImportError as error:
        raise GpuUnavailable(f"the GPU backend needs cuda-bindings: {error}") from error
    call = _Caller(cu)
    call("cuInit", 0)
    dev = call("cuDeviceGet", device)
    context = call("cuDevicePrimaryCtxRetain", dev)
    pointers: list = []
    module = None
    try:
        call("cuCtxSetCurrent", context)
        module = call("cuModuleLoadData", program.text.encode() + b"\0")
        function = call("cuModuleGetFunction", module, program.kernel.name.encode())
        if spec.shared_bytes > 48 * 1024:
            call("cuFuncSetAttribute", function, cu.CUfunction_attribute
                 .CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, spec.shared_bytes)
        addresses = {}
        for buffer in spec.buffers:
            pointer = call("cuMemAlloc", len(buffer.data))
            pointers.append(pointer)
            addresses[buffer.name] = int(pointer)
            host = np.frombuffer(buffer.data, dtype=np.uint8).copy()
            call("cuMemcpyHtoD", pointer, host.ctypes.data, host.nbytes)
        values = [np.frombuffer(v, dtype=np.uint8).copy()
                  for v in param_values(spec, program.kernel, addresses)]
        pointer_array = np.array([v.ctypes.data for v in values], dtype=np.uint64)
        call("cuLaunchKernel", function, *spec.grid, *spec.block, spec.shared_bytes, 0,
             pointer_array.ctypes.data if values else 0, 0)
        call("cuCtxSynchronize")
        outputs = {}
        sizes = {b.name: len(b.data) for b in spec.buffers}
        for output in spec.outputs:
            host = np.zeros(sizes[output.buffer], dtype=np.uint8)
            call("cuMemcpyDtoH", host.ctypes.data, addresses[output.buffer], host.nbytes)
            outputs[output.buffer] = host.tobytes()
        return outputs
    finally:
        for pointer in pointers:
            cu.cuMemFree(pointer)
        if module is not None:
            cu.cuModuleUnload(module)
        cu.cuDevicePrimaryCtxRelease(dev)


class _Caller:
    """Calls a driver function and turns a failing status into :class:`GpuUnavailable`."""

    def __init__(self, cu) -> None:
        self.cu = cu

    def __call__(self, name: str, *args):
        try:
            result = getattr(self.cu, name)(*args)
        except RuntimeError as error:  # the bindings raise when libcuda.so.1 is absent
            raise GpuUnavailable(f"no CUDA driver ({name}: {error})") from error
        status = result[0]
        if status != self.cu.CUresult.CUDA_SUCCESS:
            name_status = self.cu.cuGetErrorName(status)
            text = (name_status[1].decode() if name_status[0] == self.cu.CUresult.CUDA_SUCCESS
                    else str(status))
            raise GpuUnavailable(f"{name} failed: {text}")
        if len(result) == 1:
            return None
        return result[1] if len(result) == 2 else result[1:]
