"""Translation rules of the SASS lifter for sm_90 instructions: warpgroup MMA, bulk and
tensor-map copies, register reallocation, ``stmatrix``, 64-bit integer adds.

What each instruction does to memory the program can read (PTX ISA 8.x sections on the PTX
instructions they implement; nvdisasm of CUDA 13 on cubins built from inline PTX,
fixtures/src/sass/hopper.cu):

* ``HGMMA``/``IGMMA``/``QGMMA``/``BGMMA`` (``wgmma.mma_async``, §9.7.15): read shared
  memory through matrix descriptors and registers, write the accumulator registers: for
  the shape ``MxNxK`` (M = 64), each thread holds ``N/2`` 32-bit accumulators (``N/4`` for
  half-precision ones; counting ``N/2`` always only makes more values opaque).
  ``WARPGROUP.ARRIVE``/``WARPGROUP.DEPBAR`` (``wgmma.fence``, ``wgmma.wait_group``) only
  order them.
* ``UBLKCP`` (``cp.async.bulk``, §9.7.9.25): ``UBLKCP.S.G [smem], [gaddr], size`` reads
  global memory, ``UBLKCP.G.S [gaddr], [smem], size`` writes it; both addresses are 64-bit
  uniform register pairs (shared addresses 32-bit), and ``size`` holds the byte count
  divided by 16 (``cp.async.bulk ... 2048`` is ``UMOV UR15, 0x80``). The access is lifted
  exactly when the size is an immediate, or a register every definition of which moves
  the same immediate into it; otherwise the read is at an unknown address and the write
  unmodelled.
* ``UTMALDG``/``UTMASTG`` (``cp.async.bulk.tensor``): the global address comes from a
  tensor map (``CUtensorMap``), which the CUDA driver documents as an opaque object: its
  bytes are not decoded, so the read is at an unknown address and the write is a write at
  an unknown address (the kernel is not proven, never a dropped access).
* ``UBLKRED``/``UTMAREDG`` (``cp.reduce.async.bulk``): read-modify-writes of global memory
  whose bytes are not modelled: unmodelled.
* ``UTMACMDFLUSH`` (``cp.async.bulk.commit_group``), ``UTMAPF``/``UBLKPF`` (prefetches to
  L2, no value the program sees), ``WARPGROUP``: no effect. ``USETMAXREG``
  (``setmaxnreg``, §9.7.18.x) changes how many registers a warp owns; registers it may
  release are not read again, its predicate result is opaque.
* ``STSM`` (``stmatrix``, §9.7.14.5.16) writes shared memory only.
* ``IADD3.64``/``UIADD3.64``/``IADD.64``/``VIADD.64``: the 64-bit sum of register pairs
  (an immediate only when it is below 2**31, where sign and zero extension agree).
"""

from __future__ import annotations

import re

from kernelcheck.ir.nodes import Address, Immediate, Instruction, MemoryRef, Register
from kernelcheck.ir.operands import defs as _defs
from kernelcheck.sass.lift_memory import opaque_instruction
from kernelcheck.sass.lift_state import is_predicate
from kernelcheck.sass.lift_values import opaque32, opaque_pred, pair64, plain, write32, write64

__all__ = ["MODERN_RULES", "add64"]

_SHAPE = re.compile(r"^(\d+)x(\d+)x(\d+)$")


def _nothing(lifter, instr: Instruction) -> None:
    return None


def _gmma(lifter, instr: Instruction) -> None:
    """Warpgroup MMA: the accumulator registers become opaque values."""
    first = instr.operands[0] if instr.operands else None
    shape = next((m for m in instr.modifiers if _SHAPE.match(m)), None)
    if type(first) is not Register or shape is None or first.name in ("RZ", "URZ"):
        return opaque_instruction(lifter, instr)
    n = int(_SHAPE.match(shape).group(2))
    prefix = first.name.rstrip("0123456789")
    start = int(first.name[len(prefix):])
    for k in range(max(n // 2, 1)):
        name = f"{prefix}{start + k}"
        if name[:1] == "R" and start + k < 255:
            write32(lifter, name, lambda r: opaque32(lifter, r))


def _setmaxreg(lifter, instr: Instruction) -> None:
    for name in _defs(instr):
        if is_predicate(name) and name not in ("PT", "UPT"):
            opaque_pred(lifter, lifter.reg(name))
            lifter.state.kill(name)
    for operand in instr.operands:
        if type(operand) is Register and is_predicate(operand.name) and operand.name not in (
                "PT", "UPT"):
            opaque_pred(lifter, lifter.reg(operand.name))
            lifter.state.kill(operand.name)


def _uniform_pair(lifter, operand):
    """The 64-bit value and offset of a ``[URx]`` operand (a uniform register pair)."""
    if type(operand) is not MemoryRef or operand.scale != 1 or operand.base_modifiers or (
            operand.descriptor is not None):
        return None, 0
    registers = [r for r in (operand.base, operand.uniform) if r is not None and r.name not in (
        "RZ", "URZ")]
    if len(registers) != 1 or not registers[0].name.startswith("UR"):
        return None, 0
    return pair64(lifter, registers[0]), operand.offset


def _size_bytes(lifter, instr: Instruction, operand) -> int | None:
    """Bytes a bulk copy moves: 16 times its size operand: an immediate, a register known
    to hold a constant on every path (a fact of the lifter), or a register that the last
    definition before it in the block sets to an immediate, or (defined in no
    earlier instruction of the block) that every definition in the function sets to the
    same immediate (a value no path defined is never read: see the design's assumptions
    about compiled code)."""
    from kernelcheck.sass.calls import move_immediate

    operand = plain(operand)
    value = None
    if type(operand) is Immediate and operand.kind == "int":
        value = operand.value
    elif type(operand) is Register and lifter.state.tags.get(operand.name, ("",))[0] == "k":
        value = lifter.state.tags[operand.name][1]
    elif type(operand) is Register and operand.name not in ("RZ", "URZ"):
        earlier = lifter.block.instructions
        position = next((k for k, i in enumerate(earlier) if i is instr), 0)
        last = next((i for i in reversed(earlier[:position]) if operand.name in _defs(i)),
                    None)
        if last is not None:
            value = move_immediate(last) if last.guard is None else None
        else:
            found = {move_immediate(i) if i.guard is None else None
                     for i in lifter.sass.instructions if operand.name in _defs(i)}
            value = found.pop() if len(found) == 1 else None
    if value is None or not 0 < value < (1 << 20):
        return None
    return value * 16


def _bulk_copy(lifter, instr: Instruction) -> None:
    mods = instr.modifiers
    ops = instr.operands
    if len(ops) != 3 or mods not in (("S", "G"), ("G", "S"), ("S", "S")):
        return lifter.unknown("bulk copy form not modelled")
    if mods == ("S", "S"):
        return None  # shared::cta to shared::cluster: no global memory
    size = _size_bytes(lifter, instr, ops[2])
    global_operand = ops[1] if mods == ("S", "G") else ops[0]
    base, offset = _uniform_pair(lifter, global_operand)
    if mods == ("S", "G"):
        if base is None or size is None:
            return _unknown_global_read(lifter)
        shared = lifter.tmp("b64")
        lifter.emit("prmt", ("b64",), (shared,), guard=False)
        lifter.emit("cp", ("async", "ca", "shared", "global"),
                    (Address(shared, 0), Address(base, offset), Immediate(size)))
        return None
    if base is None or size is None:
        return lifter.unknown("bulk copy to global memory of unknown size or address")
    value = lifter.tmp("b32")
    opaque32(lifter, value)
    # One store of ``size`` bytes: the vector count carries the width (access_width).
    lifter.emit("st", ("global", f"v{size}", "b8"), (Address(base, offset), value))
    return None


def _unknown_global_read(lifter) -> None:
    address = lifter.tmp("b64")
    lifter.emit("prmt", ("b64",), (address,), guard=False)
    sink = lifter.tmp("b32")
    lifter.emit("ld", ("global", "b32"), (sink, Address(address, 0)))


def _tensor_load(lifter, instr: Instruction) -> None:
    """A tensor-map copy into shared memory: a global read at an unknown address."""
    _unknown_global_read(lifter)


def _tensor_store(lifter, instr: Instruction) -> None:
    """A tensor-map copy out of shared memory: a global write at an unknown address."""
    address = lifter.tmp("b64")
    lifter.emit("prmt", ("b64",), (address,), guard=False)
    value = lifter.tmp("b32")
    opaque32(lifter, value)
    lifter.emit("st", ("global", "b8"), (Address(address, 0), value))


def _reduction(lifter, instr: Instruction) -> None:
    lifter.unknown("bulk reduction into global memory")


def add64(lifter, instr: Instruction) -> None:
    """``[U]IADD3.64 d, a, b, c`` (``IADD.64``/``VIADD.64 d, a, b``): the 64-bit sum of
    register pairs, written to the pair ``d:d+1``."""
    ops = instr.operands
    dest = ops[0] if ops else None
    terms = list(ops[1:])
    if type(dest) is not Register or not 2 <= len(terms) <= 3 or any(
            type(plain(t)) is Register and is_predicate(plain(t).name) for t in terms) or (
            set(instr.modifiers) != {"64"}):
        return _opaque_pair(lifter, instr)
    values = []
    for term in terms:
        p = plain(term)
        if type(p) is Immediate and p.kind == "int" and 0 <= p.value < (1 << 31):
            values.append(pair64(lifter, p))
        elif type(p) is Register:
            values.append(pair64(lifter, p))
        else:
            return _opaque_pair(lifter, instr)
    total = values[0]
    for value in values[1:]:
        step = lifter.tmp("b64")
        lifter.emit("add", ("s64",), (step, total, value), guard=False)
        total = step
    name = dest.name
    prefix = "UR" if name.startswith("UR") else "R"
    write64(lifter, name, f"{prefix}{int(name[len(prefix):]) + 1}", total)


def _opaque_pair(lifter, instr: Instruction) -> None:
    """A 64-bit form the rules do not read: both registers of the destination pair (and
    any predicate it writes) become opaque."""
    dest = instr.operands[0] if instr.operands else None
    opaque_instruction(lifter, instr)
    if type(dest) is Register and dest.name not in ("RZ", "URZ") and not is_predicate(
            dest.name):
        prefix = "UR" if dest.name.startswith("UR") else "R"
        digits = dest.name[len(prefix):]
        if digits.isdigit():
            write32(lifter, f"{prefix}{int(digits) + 1}", lambda r: opaque32(lifter, r))


MODERN_RULES = {
    "HGMMA": _gmma, "IGMMA": _gmma, "QGMMA": _gmma, "BGMMA": _gmma,
    "WARPGROUP": _nothing, "UTMACMDFLUSH": _nothing, "UTMAPF": _nothing, "UBLKPF": _nothing,
    "USETMAXREG": _setmaxreg, "STSM": _nothing,
    "UBLKCP": _bulk_copy, "UTMALDG": _tensor_load, "UTMASTG": _tensor_store,
    "UBLKRED": _reduction, "UTMAREDG": _reduction,
}

#: Integer opcodes whose ``.64`` form adds 64-bit register pairs.
WIDE_ADDS = frozenset({"IADD3", "UIADD3", "IADD", "VIADD"})
