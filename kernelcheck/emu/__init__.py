"""CPU emulator of PTX kernels: the dynamic idempotency oracle and fault-injection target.

``Emulator`` holds device memory and runs kernels of the Kernel IR thread-parallel with numpy;
``trace=True`` on a launch yields the exact global bytes read and written and the oracle
verdict (:mod:`kernelcheck.emu.trace`).
"""

from kernelcheck.emu import (  # noqa: F401  (the op modules register their forms)
    alu,
    asynccopy,
    convert,
    fpu,
    matrix,
    memops,
    video,
    warp,
    wmma,
)
from kernelcheck.emu.dispatch import dispatch_entries
from kernelcheck.emu.emulator import Emulator, LaunchResult, Program, pack_params
from kernelcheck.emu.executor import BitFlip, LaunchError
from kernelcheck.emu.memory import DeviceMemory, MemoryFault
from kernelcheck.emu.trace import AtomicRecord, ByteRanges, InstanceTrace

__all__ = [
    "dispatch_entries",
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
