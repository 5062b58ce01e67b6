"""The device operations the recovery engine needs, and their implementation on the emulator.

The engine talks to a device through five operations (allocate, copy, load a module, launch,
synchronize) and reads its allocation table, so that a cuda-python implementation can stand
beside :class:`EmulatorDevice` without touching the engine. Every failure of the device is a
:class:`DeviceError` with a ``kind``: ``memory_fault``, ``write_guard`` (a store outside the
launch's write footprint, stopped before it landed), ``trap``, ``timeout`` or
``launch_failure``.

A device may also offer ``set_write_guard(ranges)``: the byte ranges the next launches may
write (``None``: unchecked). :class:`EmulatorDevice` checks every global store and atomic
against them (:meth:`kernelcheck.emu.memory.DeviceMemory.set_write_guard`).

A device may also offer ``launch_oracle()``: the exact global bytes the last launch read,
wrote and clobbered (:class:`LaunchOracle`), or ``None`` when it cannot say. Only the
emulator measures them (``EmulatorDevice(trace=True)``); the recovery report uses them for
the *floor* of each launch's saved bytes (:mod:`kernelcheck.recovery.report`).

As on a real GPU, errors may surface late: with ``deferred_errors=True`` a launch error is
held and raised by the next :meth:`EmulatorDevice.synchronize`, without saying which launch
failed (the engine then assumes any launch since the last synchronization may have).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple, Protocol

import numpy as np

from kernelcheck.analysis.intervals import IntervalSet
from kernelcheck.emu.emulator import Emulator, LaunchResult, Program
from kernelcheck.emu.executor import LaunchError
from kernelcheck.emu.memory import MemoryFault, WriteOutsideFootprint
from kernelcheck.errors import KernelcheckError
from kernelcheck.ir.nodes import Module

__all__ = ["DeviceError", "Device", "EmulatorDevice", "LaunchFn", "LaunchOracle"]

#: ``fn(emu, program, kernel, launch_kwargs) -> LaunchResult``: how one launch is executed
#: (a fault model armed on the device replaces the plain launch for one launch).
LaunchFn = Callable[[Emulator, Program, str, dict], LaunchResult]


class DeviceError(KernelcheckError):
    """A launch failed on the device (``kind``: memory_fault, write_guard, trap, timeout,
    launch_failure)."""

    def __init__(self, message: str, kind: str, launch: int | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.launch = launch


class LaunchOracle(NamedTuple):
    """What one launch did to global memory, measured exactly (the emulator's trace):
    ``clobbered`` holds the bytes it both read and wrote, in any order of its threads, a
    non-idempotent atomic counting as a read of its location
    (:class:`kernelcheck.emu.trace.InstanceTrace`)."""

    reads: IntervalSet
    writes: IntervalSet
    clobbered: IntervalSet


class Device(Protocol):
    """What the recovery engine needs from a device."""

    def alloc(self, nbytes: int) -> int: ...

    def copy_htod(self, address: int, data: bytes) -> None: ...

    def copy_dtoh(self, address: int, nbytes: int) -> bytes: ...

    def allocations(self) -> tuple[tuple[int, int], ...]: ...

    def load_module(self, module: Module) -> object: ...

    def launch(self, handle: object, kernel: str, grid: Sequence[int], block: Sequence[int],
               params: bytes, shared_bytes: int = 0) -> None: ...

    def synchronize(self) -> None: ...


def _plain_launch(emu: Emulator, program: Program, kernel: str, kw: dict) -> LaunchResult:
    return emu.launch(program, kernel, **kw)


class EmulatorDevice:
    """A :class:`Device` backed by the CPU emulator.

    Parameters
    ----------
    emu : Emulator, optional
        The emulator (a new one by default).
    deferred_errors : bool
        Hold launch errors until :meth:`synchronize`, as asynchronous launches do.
    step_limit : int, optional
        Instruction steps per batch after which a launch counts as hung (``timeout``).
    trace : bool
        Trace every launch; the oracle's traces are kept in ``traces`` (one per launch).
    """

    def __init__(self, emu: Emulator | None = None, *, deferred_errors: bool = False,
                 step_limit: int | None = None, trace: bool = False) -> None:
        self.emu = emu or Emulator()
        self.deferred_errors = deferred_errors
        self.step_limit = step_limit
        self.trace = trace
        self.traces: list = []
        self.launches = 0
        self._armed: LaunchFn | None = None
        self._pending: DeviceError | None = None
        self._guard: tuple[tuple[int, int], ...] | None = None
        self._last_trace = None

    # ------------------------------------------------------------------ memory
    def alloc(self, nbytes: int) -> int:
        return self.emu.alloc(nbytes)

    def free(self, address: int) -> None:
        self.emu.free(address)

    def copy_htod(self, address: int, data) -> None:
        self.emu.copy_htod(address, np.frombuffer(bytes(data), dtype=np.uint8)
                           if isinstance(data, bytes | bytearray) else data)

    def copy_dtoh(self, address: int, nbytes: int) -> bytes:
        return self.emu.copy_dtoh(address, nbytes).tobytes()

    def allocations(self) -> tuple[tuple[int, int], ...]:
        return tuple((a.base, a.size) for a in self.emu.memory.allocations())

    # ------------------------------------------------------------------ modules and launches
    def load_module(self, module: Module) -> Program:
        return self.emu.load_module(module)

    def set_write_guard(self, ranges) -> None:
        """Stop stores and atomics of later launches outside ``ranges`` (``None``: off)."""
        self._guard = None if ranges is None else tuple((int(a), int(b)) for a, b in ranges)

    def arm(self, launch_fn: LaunchFn) -> None:
        """Execute the next launch with ``launch_fn`` instead of a plain launch (one shot)."""
        self._armed = launch_fn

    def launch(self, handle: Program, kernel: str, grid, block, params: bytes,
               shared_bytes: int = 0) -> None:
        """Run a launch; raises :class:`DeviceError` (at once, or held for synchronize)."""
        fn = self._armed or _plain_launch
        self._armed = None
        index = self.launches
        self.launches += 1
        kw = {"grid": tuple(grid), "block": tuple(block), "params": bytes(params),
              "shared_bytes": shared_bytes, "trace": self.trace,
              "step_limit": self.step_limit}
        error = None
        self._last_trace = None
        self.emu.memory.set_write_guard(self._guard)
        try:
            result = fn(self.emu, handle, kernel, kw)
            if self.trace:
                self.traces.append(result.trace)
                self._last_trace = result.trace
            if not result.completed:
                self._last_trace = None
                error = DeviceError(f"{kernel}: launch timed out (step limit "
                                    f"{self.step_limit})", "timeout", index)
        except WriteOutsideFootprint as err:
            error = DeviceError(f"{kernel}: {err}", "write_guard", index)
        except MemoryFault as err:
            error = DeviceError(f"{kernel}: {err}", "memory_fault", index)
        except LaunchError as err:
            error = DeviceError(f"{kernel}: {err}", "trap", index)
        except DeviceError as err:
            error = err
        finally:
            self.emu.memory.set_write_guard(None)
        if error is None:
            return
        if self.deferred_errors:
            self._pending = self._pending or error
            return
        raise error

    def launch_oracle(self) -> LaunchOracle | None:
        """The exact bytes the last launch read, wrote and clobbered; ``None`` without
        ``trace=True``, or when the last launch did not complete."""
        t = self._last_trace
        if t is None:
            return None
        return LaunchOracle(IntervalSet(t.read_bytes.ranges), IntervalSet(t.written_bytes.ranges),
                            IntervalSet(t.clobbered.ranges))

    def synchronize(self) -> None:
        """Raise the first held launch error, if any (the launch is not named)."""
        error, self._pending = self._pending, None
        if error is not None:
            raise DeviceError(f"error at synchronization: {error}", error.kind, None)
