"""CPU emulator of PTX kernels: the dynamic idempotency oracle and fault-injection target.

``Emulator`` holds device memory and runs kernels of the Kernel IR thread-parallel with numpy;
``trace=True`` on a launch yields the exact global bytes read and written and the oracle
verdict (:mod:`kernelcheck.emu.trace`).
"""

from kernelcheck.emu import alu, convert, fpu, memops, warp  # noqa: F401  (register the ops)
from kernelcheck.emu.emulator import Emulator, LaunchResult, Program, pack_params
from kernelcheck.emu.executor import BitFlip, LaunchError
from kernelcheck.emu.memory import DeviceMemory, MemoryFault
from kernelcheck.emu.trace import AtomicRecord, ByteRanges, InstanceTrace

__all__ = [
    "Emulator",
    "Program",
    "LaunchResult",
    "pack_params",
    "BitFlip",
    "LaunchError",
    "DeviceMemory",
    "MemoryFault",
    "ByteRanges",
    "AtomicRecord",
    "InstanceTrace",
]
