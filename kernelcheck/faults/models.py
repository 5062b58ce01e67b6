"""Fault models on the emulator: what to corrupt, drawn from a golden run, and how.

Models (``MODELS``):

``single`` / ``double``
    Flip one bit, or two adjacent bits (NVBitFI's FLIP_SINGLE_BIT and FLIP_TWO_BITS), of the
    destination register of one dynamic instruction drawn uniformly from an instruction group
    (:mod:`kernelcheck.faults.groups`), right after it executes. A vector load's destination
    element is drawn uniformly too.
``store``
    Flip one bit of the value a dynamic ``st``/``red`` stores (the register holding it keeps
    its value): a fault on the store data path, the injectable part of ``G_NODEST``.
``mem-before`` / ``mem-after``
    Flip one bit of one global byte the golden run reads, before the launch, or of one byte
    it writes, after the launch (corruption at rest, found at the next check).
``launch-fail``
    The launch stops after a uniformly drawn number of its steps and reports a failure (its
    writes so far are visible), as a killed or faulted launch does.

:func:`draw_fault` picks a concrete :class:`Fault` from a :class:`Golden` run with a seeded
generator; :func:`fault_launch` turns it into the launch function a device runs in place of
a plain launch (:meth:`kernelcheck.recovery.device.EmulatorDevice.arm`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kernelcheck.emu.emulator import Emulator, LaunchResult, Program
from kernelcheck.emu.executor import BitFlip
from kernelcheck.emu.faults_hooks import instrument, lane_of
from kernelcheck.emu.profile import DynamicProfile
from kernelcheck.emu.values import flip_bits
from kernelcheck.ir.nodes import Register, VectorOperand, type_size
from kernelcheck.recovery.device import DeviceError, LaunchFn

__all__ = ["MODELS", "Golden", "Fault", "draw_fault", "fault_launch", "before_launch",
           "register_width", "store_sites"]

MODELS = ("single", "double", "store", "mem-before", "mem-after", "launch-fail")


@dataclass(frozen=True, slots=True)
class Golden:
    """A fault-free run of one instance: profile, group sites, footprint and step count."""

    profile: DynamicProfile
    sites: dict
    read_bytes: tuple[tuple[int, int], ...]
    written_bytes: tuple[tuple[int, int], ...]
    steps: int


@dataclass(frozen=True, slots=True)
class Fault:
    """One concrete fault (fields unused by a model are left at their defaults)."""

    model: str
    group: str = ""
    function: str = ""
    instruction: int = -1
    ctaid: tuple[int, int, int] = (0, 0, 0)
    tid: tuple[int, int, int] = (0, 0, 0)
    occurrence: int = 0
    element: int = 0
    bits: int = 0
    address: int = -1
    steps: int = 0

    def describe(self) -> str:
        """A short text for tables."""
        if self.model in ("mem-before", "mem-after"):
            return f"byte {self.address:#x} ^ {self.bits:#x}"
        if self.model == "launch-fail":
            return f"stop after {self.steps} steps"
        return (f"{self.function}:{self.instruction} ctaid={self.ctaid} tid={self.tid} "
                f"#{self.occurrence} elem={self.element} ^ {self.bits:#x}")


def register_width(program: Program, function: str, name: str) -> int:
    """Width in bits of register ``name`` (1 for predicates)."""
    t = program.function(function).function.register_types.get(name, "b32").lstrip(".")
    return 1 if t == "pred" else 8 * type_size(t)


def _bits(rng: np.random.Generator, width: int, model: str) -> int:
    if width <= 1:
        return 1
    if model == "double":
        k = int(rng.integers(0, width - 1))
        return 3 << k
    return 1 << int(rng.integers(0, width))


def _byte_in(rng: np.random.Generator, ranges) -> int:
    total = sum(b - a for a, b in ranges)
    k = int(rng.integers(total))
    for a, b in ranges:
        if k < b - a:
            return a + k
        k -= b - a
    raise AssertionError("unreachable")


def _store_value(program: Program, function: str, index: int):
    instr = program.function(function).function.instructions[index]
    if instr.opcode not in ("st", "red") or len(instr.operands) < 2:
        return ()
    value = instr.operands[-1]
    if type(value) is Register:
        return (value.name,)
    if type(value) is VectorOperand:
        return tuple(e.name for e in value.elements if type(e) is Register)
    return ()


def store_sites(program: Program, sites) -> frozenset[tuple[str, int]]:
    """The ``G_NODEST`` sites that store a register value (targets of the store model)."""
    return frozenset(s for s in sites["G_NODEST"] if _store_value(program, *s))


def draw_fault(model: str, golden: Golden, program: Program, rng: np.random.Generator,
               group: str = "G_GP") -> Fault | None:
    """Draw one fault of ``model`` for an instance; ``None`` when it has no site for it."""
    if model in ("single", "double", "store"):
        keys = golden.sites[group] if model != "store" else store_sites(program, golden.sites)
        total = golden.profile.total(keys)
        if total == 0:
            return None
        site = golden.profile.locate(int(rng.integers(total)), keys)
        if model == "store":
            names = _store_value(program, site.function, site.instruction)
        else:
            op = next(o for o in program.function(site.function).ops
                      if o.instr.index == site.instruction)
            names = tuple(n for _, n in op.dests)
        element = int(rng.integers(len(names)))
        width = register_width(program, site.function, names[element])
        return Fault(model, group if model != "store" else "G_NODEST", site.function,
                     site.instruction, site.ctaid, site.tid, site.occurrence, element,
                     _bits(rng, width, model))
    if model in ("mem-before", "mem-after"):
        ranges = golden.read_bytes if model == "mem-before" else golden.written_bytes
        if not ranges:
            return None
        return Fault(model, "memory", address=_byte_in(rng, ranges),
                     bits=1 << int(rng.integers(8)))
    if model == "launch-fail":
        return Fault(model, "launch", steps=int(rng.integers(0, max(golden.steps, 1))))
    raise ValueError(f"unknown fault model {model!r}; expected one of {', '.join(MODELS)}")


def _flip_byte(emu: Emulator, address: int, bits: int) -> None:
    old = emu.copy_dtoh(address, 1)
    emu.copy_htod(address, (old ^ np.uint8(bits)).astype(np.uint8))


def before_launch(fault: Fault, emu: Emulator) -> None:
    """What a fault does before the launch is issued (``mem-before``: flip its byte, before
    any snapshot the recovery engine takes)."""
    if fault.model == "mem-before":
        _flip_byte(emu, fault.address, fault.bits)


def fault_launch(fault: Fault) -> LaunchFn:
    """The launch function that runs one launch with ``fault`` injected."""
    def run(emu: Emulator, program: Program, kernel: str, kw: dict) -> LaunchResult:
        if fault.model in ("single", "double"):
            flip = BitFlip(fault.instruction, fault.ctaid, fault.tid, fault.bits,
                           fault.occurrence, fault.function, fault.element)
            return emu.launch(program, kernel, inject=flip, **kw)
        if fault.model == "store":
            return _store_fault(emu, program, kernel, kw, fault)
        if fault.model == "mem-before":
            return emu.launch(program, kernel, **kw)
        if fault.model == "mem-after":
            result = emu.launch(program, kernel, **kw)
            _flip_byte(emu, fault.address, fault.bits)
            return result
        if fault.model == "launch-fail":
            emu.launch(program, kernel, **dict(kw, step_limit=max(fault.steps, 1)))
            raise DeviceError(f"{kernel}: launch failed (injected after {fault.steps} "
                              f"steps)", "launch_failure")
        raise ValueError(f"unknown fault model {fault.model!r}")
    return run


def _store_fault(emu, program, kernel, kw, fault: Fault) -> LaunchResult:
    names = _store_value(program, fault.function, fault.instruction)
    index = program.function(fault.function).reg_index[names[fault.element]]
    seen = [0]

    def hook(function, instruction, batch, frame, lanes):
        lane = lane_of(batch, fault.ctaid, fault.tid)
        if lane < 0 or not lanes[lane]:
            return None
        seen[0] += 1
        if seen[0] != fault.occurrence:
            return None
        original = frame.regs[index]
        reg = original.copy()
        flip_bits(reg, lane, fault.bits)
        frame.regs[index] = reg

        def restore():
            frame.regs[index] = original
        return restore

    with instrument(program, hook, only={(fault.function, fault.instruction)}):
        return emu.launch(program, kernel, **kw)
