"""The device the self-test checks against, through ``cuda.bindings.driver``.

:class:`TestDevice` is a thin layer over the driver API: it initialises the primary context
of device 0, loads PTX text or cubin images, allocates, copies and launches with a packed
parameter buffer, and synchronizes after every launch so that an error names its launch.
The same code runs on a GPU and on kernelcheck's stand-in ``libcuda.so.1`` (which answers
``cuDeviceGetName`` with "kernelcheck stand-in ..."): :attr:`TestDevice.standin` tells them
apart, for the sections that need real hardware.

Every status other than ``CUDA_SUCCESS`` becomes a :class:`DeviceCallError` naming the call
and the status. On a GPU, launch errors such as ``CUDA_ERROR_ILLEGAL_ADDRESS`` are sticky:
the context is unusable afterwards (:meth:`TestDevice.context_lost` probes it).

:class:`DeviceImage` places an instance's allocations on the device, each between two runs
of guard bytes, uploads the same initial bytes before every run and reads everything back.
"""

from __future__ import annotations

import ctypes
import hashlib
from collections.abc import Sequence

from kernelcheck.errors import KernelcheckError

__all__ = ["DeviceCallError", "TestDevice", "DeviceImage", "GUARD_BYTES",
           "ptx_isa_min_driver"]

#: Bytes of known contents on each side of every allocation of an instance.
GUARD_BYTES = 256
_STANDIN_NAME = "kernelcheck stand-in"
#: PTX ISA version -> the first CUDA driver that JIT-compiles it (PTX ISA release notes:
#: ISA 8.x came with CUDA 12.x, 8.5 with 12.5 and 12.6, 8.8 with 12.9; 9.x with 13.x).
_ISA_DRIVER = {(8, 0): 12000, (8, 1): 12010, (8, 2): 12020, (8, 3): 12030, (8, 4): 12040,
               (8, 5): 12050, (8, 6): 12070, (8, 7): 12080, (8, 8): 12090}


def ptx_isa_min_driver(version: str) -> int:
    """The oldest driver version (1000 * major + 10 * minor) that loads PTX ``.version``.

    >>> ptx_isa_min_driver("8.8"), ptx_isa_min_driver("9.0"), ptx_isa_min_driver("9.5")
    (12090, 13000, 13050)
    """
    major, _, minor = version.partition(".")
    key = (int(major), int(minor or 0))
    if key in _ISA_DRIVER:
        return _ISA_DRIVER[key]
    if key[0] >= 9:
        return 13000 + 10 * key[1] + 1000 * (key[0] - 9)
    return 11000


class DeviceCallError(KernelcheckError):
    """A driver call failed: ``call``, the status ``code`` and its ``name``."""

    def __init__(self, call: str, code: int, name: str) -> None:
        super().__init__(f"{call}: {name} ({code})")
        self.call = call
        self.code = code
        self.name = name


class TestDevice:
    """Device 0 through ``cuda.bindings.driver`` (see the module docs).

    Raises
    ------
    DeviceCallError
        The driver cannot be initialised, or has no device.
    """

    __test__ = False  # not a pytest test class

    def __init__(self) -> None:
        from cuda.bindings import driver
        self._drv = driver
        self._call("cuInit", driver.cuInit(0))
        self._dev = self._call("cuDeviceGet", driver.cuDeviceGet(0))
        ctx = self._call("cuDevicePrimaryCtxRetain", driver.cuDevicePrimaryCtxRetain(self._dev))
        self._call("cuCtxSetCurrent", driver.cuCtxSetCurrent(ctx))
        raw = self._call("cuDeviceGetName", driver.cuDeviceGetName(256, self._dev))
        self.name = bytes(raw).split(b"\0", 1)[0].decode(errors="replace").strip()
        attr = driver.CUdevice_attribute
        self.compute_capability = (
            int(self._call("cuDeviceGetAttribute", driver.cuDeviceGetAttribute(
                attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, self._dev))),
            int(self._call("cuDeviceGetAttribute", driver.cuDeviceGetAttribute(
                attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, self._dev))))
        self.driver_version = int(self._call("cuDriverGetVersion", driver.cuDriverGetVersion()))
        self._modules: dict[str, object] = {}
        self._functions: dict[tuple[int, str], object] = {}

    # ------------------------------------------------------------------ facts
    @property
    def standin(self) -> bool:
        """Whether this is kernelcheck's stand-in driver (the CPU emulator), not a GPU."""
        return self.name.startswith(_STANDIN_NAME)

    @property
    def arch(self) -> str:
        """``sm_XY`` of the device."""
        return f"sm_{self.compute_capability[0]}{self.compute_capability[1]}"

    def describe(self) -> dict:
        """The device as the report records it."""
        major, minor = divmod(self.driver_version // 10, 100)
        kind = "stand-in driver (CPU emulator), no GPU" if self.standin else "GPU"
        return {"name": self.name, "arch": self.arch, "standin": self.standin,
                "driver_version": self.driver_version,
                "description": f"{self.name} ({self.arch}, {kind}; driver API "
                               f"{major}.{minor})"}

    # ------------------------------------------------------------------ errors
    def _call(self, what: str, result):
        status, *values = result if isinstance(result, tuple) else (result,)
        code = int(status)
        if code:
            _, name = self._drv.cuGetErrorName(status)
            text = name.decode() if isinstance(name, bytes) else str(name)
            raise DeviceCallError(what, code, text)
        if not values:
            return None
        return values[0] if len(values) == 1 else tuple(values)

    def context_lost(self) -> bool:
        """Whether the context is unusable (a sticky error): a synchronize and a one-byte
        allocation are tried."""
        try:
            self.synchronize()
            self.free(self.alloc(1))
        except DeviceCallError:
            return True
        return False

    # ------------------------------------------------------------------ memory
    def alloc(self, nbytes: int) -> int:
        return int(self._call("cuMemAlloc", self._drv.cuMemAlloc(max(1, nbytes))))

    def free(self, address: int) -> None:
        self._call("cuMemFree", self._drv.cuMemFree(address))

    def copy_htod(self, address: int, data: bytes) -> None:
        raw = bytes(data)
        if raw:
            self._call("cuMemcpyHtoD", self._drv.cuMemcpyHtoD(address, raw, len(raw)))

    def copy_dtoh(self, address: int, nbytes: int) -> bytes:
        buf = bytearray(nbytes)
        if nbytes:
            self._call("cuMemcpyDtoH", self._drv.cuMemcpyDtoH(buf, address, nbytes))
        return bytes(buf)

    def synchronize(self) -> None:
        self._call("cuCtxSynchronize", self._drv.cuCtxSynchronize())

    # ------------------------------------------------------------------ modules
    def load_ptx(self, text: str) -> object:
        """The module of PTX ``text`` (loaded once per distinct text)."""
        return self._load(text.encode() + b"\0")

    def load_image(self, image: bytes) -> object:
        """The module of a cubin or fatbin image."""
        return self._load(bytes(image))

    def _load(self, image: bytes) -> object:
        key = hashlib.sha256(image).hexdigest()
        module = self._modules.get(key)
        if module is None:
            module = self._call("cuModuleLoadData", self._drv.cuModuleLoadData(image))
            self._modules[key] = module
        return module

    def function(self, module: object, name: str) -> object:
        key = (id(module), name)
        fn = self._functions.get(key)
        if fn is None:
            fn = self._call(f"cuModuleGetFunction {name}",
                            self._drv.cuModuleGetFunction(module, name.encode()))
            self._functions[key] = fn
        return fn

    # ------------------------------------------------------------------ launches
    def launch(self, function: object, grid: Sequence[int], block: Sequence[int],
               params: bytes, offsets: Sequence[int], shared_bytes: int = 0,
               name: str = "kernel") -> None:
        """Launch with the packed parameter buffer ``params`` (parameter ``k`` at byte
        ``offsets[k]``) and synchronize.

        Raises
        ------
        DeviceCallError
            The launch or its execution failed.
        """
        raw = bytes(params)
        buf = ctypes.create_string_buffer(raw, max(1, len(raw)))
        base = ctypes.addressof(buf)
        pointers = (ctypes.c_void_p * max(1, len(offsets)))(*(base + o for o in offsets))
        g = tuple(grid) + (1,) * (3 - len(grid))
        b = tuple(block) + (1,) * (3 - len(block))
        self._call(f"cuLaunchKernel {name}", self._drv.cuLaunchKernel(
            function, *g, *b, shared_bytes, 0, ctypes.addressof(pointers) if offsets else 0,
            0))
        self._call(f"{name}: cuCtxSynchronize", self._drv.cuCtxSynchronize())


class DeviceImage:
    """An instance's allocations on the device, each with guard bytes on both sides.

    Parameters
    ----------
    device : TestDevice
    regions : sequence of (address, bytes)
        The allocations as the instance was placed (emulator addresses) and their initial
        contents.
    guard : int
        Guard bytes on each side.
    """

    def __init__(self, device: TestDevice, regions: Sequence[tuple[int, bytes]],
                 guard: int = GUARD_BYTES) -> None:
        self.device = device
        self.guard = guard
        self.regions = tuple((int(a), bytes(d)) for a, d in regions)
        self.bases: list[int] = []
        for _, data in self.regions:
            self.bases.append(device.alloc(len(data) + 2 * guard))
        self._guards = [self._guard_bytes(k) for k in range(len(self.regions))]

    def _guard_bytes(self, k: int) -> bytes:
        # A pattern that differs per region and per byte, so that a stray write of a common
        # value (0, 0xff, a copy of a neighbour) still changes it.
        seed = hashlib.sha256(b"kernelcheck guard %d" % k).digest()
        return (seed * (self.guard // len(seed) + 1))[:self.guard]

    def device_address(self, address: int) -> int:
        """Where emulator ``address`` lies on the device (inside, or one past, a region)."""
        for (lo, data), base in zip(self.regions, self.bases, strict=True):
            if lo <= address <= lo + len(data):
                return base + self.guard + (address - lo)
        raise KeyError(f"address {address:#x} is in no allocation of the instance")

    def allocations(self) -> tuple[tuple[int, int], ...]:
        """The instance's allocations at their device addresses, ``(base, size)``."""
        return tuple((base + self.guard, len(data))
                     for (_, data), base in zip(self.regions, self.bases, strict=True))

    def upload(self, contents: Sequence[bytes] | None = None) -> None:
        """Write the guards and the initial contents (or ``contents``, one per region)."""
        for k, ((_, data), base) in enumerate(zip(self.regions, self.bases, strict=True)):
            body = data if contents is None else contents[k]
            self.device.copy_htod(base, self._guards[k] + body + self._guards[k])

    def read(self) -> tuple[bytes, ...]:
        """Every region with its guards, as the device holds them now."""
        return tuple(self.device.copy_dtoh(base, len(data) + 2 * self.guard)
                     for (_, data), base in zip(self.regions, self.bases, strict=True))

    def contents(self, snapshot: Sequence[bytes]) -> tuple[bytes, ...]:
        """The regions of a :meth:`read` snapshot without their guards."""
        return tuple(s[self.guard:len(s) - self.guard] for s in snapshot)

    def guards_changed(self, snapshot: Sequence[bytes]) -> list[int]:
        """Indexes of the regions whose guard bytes changed in ``snapshot``."""
        bad = []
        for k, s in enumerate(snapshot):
            g = self._guards[k]
            if s[:self.guard] != g or s[len(s) - self.guard:] != g:
                bad.append(k)
        return bad

    def release(self) -> None:
        for base in self.bases:
            try:
                self.device.free(base)
            except DeviceCallError:
                pass
        self.bases = []
