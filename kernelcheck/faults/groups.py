"""Instruction groups for fault injection, after NVBitFI's.

NVBitFI (Tsai et al., "NVBitFI: Dynamic Fault Injection for GPUs", DSN 2021;
https://github.com/NVlabs/nvbitfi, ``common/arch.h``) selects the dynamic instruction to
corrupt uniformly within one of eight groups of SASS instructions. kernelcheck injects into
PTX on the emulator, so each group is defined on PTX instructions by the same criteria:

``G_FP64``
    FP64 arithmetic: ``add sub mul fma mad div rcp sqrt rsqrt min max abs neg ...`` of type
    ``.f64`` writing a general-purpose register.
``G_FP32``
    The same of type ``.f32`` (NVBitFI: FADD, FMUL, FFMA, MUFU, ...).
``G_LD``
    Loads from memory: ``ld`` and ``ldu`` in the global, shared, local, const and generic
    spaces. ``ld.param`` is not a load in SASS (kernel parameters are constant-bank operands),
    so it belongs to ``G_OTHERS``.
``G_PR``
    Instructions that write predicate registers only (``setp``, ``testp``, ...).
``G_NODEST``
    Instructions with no destination register (``st``, ``red``, ``bar``, ``fence``, ...);
    NVBitFI does not inject into them. kernelcheck's *store* model flips the value a
    ``st``/``red`` stores instead (:mod:`kernelcheck.faults.models`).
``G_OTHERS``
    Every other instruction with a destination (integer arithmetic, moves, conversions,
    atomics, ``ld.param``, ...).
``G_GPPR``
    Every instruction that writes a general-purpose or a predicate register
    (all but ``G_NODEST``).
``G_GP``
    Every instruction that writes a general-purpose register (all but ``G_NODEST`` and
    ``G_PR``).

Only the instructions the emulator runs as plain instructions are candidates: branches,
calls, returns, exits, barriers and traps change control flow, not values, and are in no
group (NVBitFI does not inject into them either: they have no destination).
"""

from __future__ import annotations

from kernelcheck.emu.compiler import PLAIN
from kernelcheck.emu.emulator import Program
from kernelcheck.ir.nodes import Instruction

__all__ = ["GROUPS", "instruction_groups", "group_sites"]

GROUPS = ("G_FP64", "G_FP32", "G_LD", "G_PR", "G_NODEST", "G_OTHERS", "G_GPPR", "G_GP")

_FP_ARITH = frozenset({"add", "sub", "mul", "fma", "mad", "div", "rcp", "sqrt", "rsqrt",
                       "sin", "cos", "lg2", "ex2", "tanh", "min", "max", "abs", "neg",
                       "copysign"})
_LOAD_SPACES = ("global", "shared", "local", "const")


def _type(instr: Instruction) -> str | None:
    for m in reversed(instr.modifiers):
        if m in ("f32", "f64", "f16", "bf16", "f16x2", "bf16x2"):
            return m
    return None


def instruction_groups(instr: Instruction, dest_types: tuple[str, ...]) -> frozenset[str]:
    """The groups of one instruction, given the PTX types of its destination registers.

    Examples
    --------
    >>> from kernelcheck.ir.nodes import Instruction
    >>> sorted(instruction_groups(Instruction("fma", ("rn", "f32")), (".f32",)))
    ['G_FP32', 'G_GP', 'G_GPPR']
    >>> sorted(instruction_groups(Instruction("setp", ("lt", "s32")), (".pred",)))
    ['G_GPPR', 'G_PR']
    >>> sorted(instruction_groups(Instruction("st", ("global", "f32")), ()))
    ['G_NODEST']
    """
    if not dest_types:
        return frozenset({"G_NODEST"})
    if all(t.lstrip(".") == "pred" for t in dest_types):
        return frozenset({"G_PR", "G_GPPR"})
    out = {"G_GP", "G_GPPR"}
    op = instr.opcode
    if op in ("ld", "ldu") and "param" not in instr.modifiers:
        out.add("G_LD")
    elif op in _FP_ARITH and _type(instr) == "f64":
        out.add("G_FP64")
    elif op in _FP_ARITH and _type(instr) == "f32":
        out.add("G_FP32")
    else:
        out.add("G_OTHERS")
    return frozenset(out)


def group_sites(program: Program) -> dict[str, frozenset[tuple[str, int]]]:
    """For each group, the ``(function, instruction_index)`` pairs of ``program`` in it."""
    out: dict[str, set] = {g: set() for g in GROUPS}
    for cf in program.compiled_functions():
        types = cf.function.register_types
        for op in cf.ops:
            if op.kind != PLAIN:
                continue
            dests = tuple(types.get(name, "b32") for _, name in op.dests)
            for g in instruction_groups(op.instr, dests):
                out[g].add((cf.function.name, op.instr.index))
    return {g: frozenset(s) for g, s in out.items()}
