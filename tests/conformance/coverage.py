"""Which (opcode, type, modifier) entries the conformance cases exercise.

The emulator describes what it supports as sorted ``(opcode, type, modifier)`` entries
(``kernelcheck.emu.dispatch_entries()``): an instruction ``opcode.m1.m2.type`` is described by
``(opcode, type, m)`` for each modifier ``m`` and by ``(opcode, type, "")``, ``type`` being the
data-type suffix (``"s32"``, ``"f16x2"``, ... or ``""``) and the modifiers every other
dot-suffix. :func:`instruction_entries` describes a parsed instruction the same way so that
the coverage test can list every supported entry no case exercises.

Some instructions carry several type suffixes (``cvt.rn.f32.s32``, ``mma....f32.f16.f16.f32``)
or a dotted opcode (``cp.async``, ``bar.warp.sync``), and the dispatch table may name either
type, or all of them joined (``"f32.s32"``), as *the* type. So an instruction yields the
entries of every reading: each of its types as the type with the others as modifiers, all its
types joined in order with the other suffixes as modifiers, and the opcode extended by its
first modifiers. The
set is a superset of any single reading, which is what coverage needs: an entry counts as
covered when some case instruction can be read as it.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from kernelcheck.ir.nodes import Instruction, Module
from kernelcheck.ptx.parser import parse_ptx

__all__ = ["TYPE_SUFFIXES", "instruction_entries", "module_entries", "ptx_entries",
           "uncovered"]

#: The PTX data types a suffix can name (PTX ISA 5.2 "Types", 5.2.5 alternate formats).
TYPE_SUFFIXES = frozenset(
    """s8 s16 s32 s64 u8 u16 u32 u64 b8 b16 b32 b64 b128 f16 f16x2 bf16 bf16x2 f32 f64 tf32
    e4m3 e5m2 e4m3x2 e5m2x2 e4m3x4 e5m2x4 e2m1x2 e2m1x4 e2m3x2 e3m2x2 e2m3x4 e3m2x4 ue8m0x2
    pred s16x2 u16x2 f32x2 s4 u4 s2 u2 b1 f64x2""".split()
)
#: How many leading modifiers may belong to a dotted opcode (cp.async.bulk.tensor).
_DOTTED_OPCODE_PARTS = 3

Entry = tuple[str, str, str]


def instruction_entries(opcode: str, modifiers: Iterable[str]) -> frozenset[Entry]:
    """Every (opcode, type, modifier) entry an instruction can be read as.

    >>> sorted(instruction_entries("add", ("cc", "u32")))
    [('add', 'u32', ''), ('add', 'u32', 'cc'), ('add.cc', 'u32', '')]
    >>> ("cvt", "s32", "f32") in instruction_entries("cvt", ("rzi", "s32", "f32"))
    True
    """
    modifiers = tuple(modifiers)
    entries: set[Entry] = set()
    for split in range(0, min(_DOTTED_OPCODE_PARTS, len(modifiers)) + 1):
        head, rest = modifiers[:split], modifiers[split:]
        if any(m in TYPE_SUFFIXES for m in head):
            break
        name = ".".join((opcode, *head))
        types = [m for m in rest if m in TYPE_SUFFIXES]
        for type_name in types or [""]:
            others = [m for m in rest if m != type_name]
            entries.add((name, type_name, ""))
            entries.update((name, type_name, m) for m in others)
        if len(types) > 1:
            # All the types joined in their written order (cvt.rn.f32.s32 as "f32.s32"),
            # with the other suffixes as modifiers.
            joined = ".".join(types)
            entries.add((name, joined, ""))
            entries.update((name, joined, m) for m in rest if m not in TYPE_SUFFIXES)
    return frozenset(entries)


def module_entries(module: Module) -> frozenset[Entry]:
    """The entries of every instruction of every function of a parsed module."""
    found: set[Entry] = set()
    for function in module.functions:
        for instruction in function.instructions:
            found |= _entries(instruction)
    return frozenset(found)


def ptx_entries(paths: Iterable[Path]) -> frozenset[Entry]:
    """The entries of every PTX file in ``paths`` (parsed by kernelcheck's front end; a file
    it cannot parse is skipped: it exercises nothing on the emulator either)."""
    from kernelcheck.errors import KernelcheckError

    found: set[Entry] = set()
    for path in paths:
        try:
            module = parse_ptx(Path(path).read_text(), str(path))
        except KernelcheckError:
            continue
        found |= module_entries(module)
    return frozenset(found)


def uncovered(supported: Iterable[Entry], exercised: frozenset[Entry]) -> list[Entry]:
    """The supported entries no exercised instruction can be read as, sorted."""
    return sorted(set(supported) - exercised)


def _entries(instruction: Instruction) -> frozenset[Entry]:
    return instruction_entries(instruction.opcode, instruction.modifiers)
