"""Inline the subroutines a SASS kernel calls, so the lifter sees one straight body.

ptxas compiles a ``__noinline__`` device function (and its own helpers: the slow paths
of division, for instance) into a subroutine placed after the kernel's code in the same
``.text`` section, entered by ``CALL.REL[.NOINC] $kernel$callee`` and left by
``RET.REL.NODEC Rk``. The call sequence is::

    MOV R20, 0x270                      ; the offset of the instruction after the call
    CALL.REL.NOINC `($k$_Z4leafPfif)     ; jump to the subroutine
    ...                                 ; 0x270: execution continues here
  $k$_Z4leafPfif:
    ...
    RET.REL.NODEC R20 `(k)               ; jump back to the address R20 holds

Caller and subroutine share the thread's registers and its local memory (the subroutine
saves what it overwrites on the stack ``R1`` points to), so splicing a copy of the
subroutine's code at the call site gives the same machine state as the call: this module
replaces every such call by a copy of the blocks reachable from the subroutine's entry,
with its labels renamed, each ``RET`` turned into a branch to the instruction after the
call, and explicit branches where a copied block fell through. Nested calls are copied
the same way, inside the copy.

Assumption about compiled code: a subroutine returns to the instruction after the call
that entered it (the call/return discipline of the ABI). What the code shows of it is
checked: the caller puts the offset of the next instruction into a register just before
the call (or, for a subroutine entered by that one call only, the subroutine itself moves
that offset into a register: ptxas does so for a large ``__noinline__`` function called
once, such as flash attention's ``compute_attn_1rowblock_splitkv``), and every return of
the subroutine is a ``RET.REL`` through a register. Where
that address travels in between (copied to another register, saved on the stack around
a nested call) is not followed: the discipline is trusted, as the compiler keeps it.

A subroutine that touches no memory but the thread's stack and shared memory, and calls
nothing (the slow paths of floating-point division and of 64-bit integer division, for
instance), is not copied: its only effect the analysis needs is on registers, so the call
stays in place and the lifter makes every register the subroutine writes opaque
(``InlinedFunction.summarized``). Copying it at every call site would multiply the code the
analysis walks for values it does not follow anyway. One such subroutine is followed after
all: ptxas's 64-bit unsigned division, whose quotient the lifter gives as ``div.u64`` of
its operands where the body is one ptxas emits (:mod:`kernelcheck.sass.division64`;
``InlinedFunction.divisions``).

A call is left in place, with the reason, when its subroutine is recursive, is nested
deeper than :data:`~kernelcheck.ir.inlining.MAX_CALL_DEPTH`, would take the kernel past
:data:`~kernelcheck.ir.inlining.MAX_INLINED_INSTRUCTIONS`, branches indirectly (``BRX``,
``JMX``), or is not entered and left as above; the lifter then treats
the call as unmodelled (:func:`kernelcheck.sass.lift_memory.call`). Indirect calls
(``CALL.REL R2``) and absolute calls are left to the lifter.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from kernelcheck.ir.inlining import (
    MAX_CALL_DEPTH,
    MAX_INLINED_INSTRUCTIONS,
    depth_reason,
    recursion_reason,
    size_reason,
)
from kernelcheck.ir.nodes import Function, Guard, Instruction, Label, Register, Symbol
from kernelcheck.ir.operands import SASS_KNOWN_OPCODES, access_kind, defs, memory_spaces
from kernelcheck.sass.calls import move_immediate
from kernelcheck.sass.division64 import DivU64, match_div_u64
from kernelcheck.sass.lift_state import block_successors

__all__ = ["InlinedFunction", "inline_subroutines", "is_local_call"]


@dataclass(frozen=True)
class InlinedFunction:
    """A SASS function with its subroutine calls inlined.

    ``origin[k]`` is the index, in the original function, of the instruction
    ``function.instructions[k]`` was copied from; ``refused`` maps the index (in
    ``function``) of each local call left in place to the reason; ``inlined`` counts the
    instructions copied in; ``summarized`` maps the index of each call of a subroutine that
    touches no memory but the stack and shared memory to ``(registers it writes, whether
    it reads shared memory)``; ``divisions`` maps the index of each unguarded one of those
    calls whose subroutine is ptxas's 64-bit division (:func:`kernelcheck.sass.division64.
    match_div_u64`) to the registers of its operands and quotient.
    """

    function: Function
    origin: tuple[int, ...]
    refused: dict[int, str]
    inlined: int
    summarized: dict[int, tuple[tuple[str, ...], bool]] = field(default_factory=dict)
    divisions: dict[int, DivU64] = field(default_factory=dict)


_INDIRECT = frozenset({"BRX", "JMX", "BRXU", "JMXU"})
#: Memory a subroutine may touch and still be summarised by the registers it writes.
_PRIVATE_SPACES = frozenset({"local", "shared"})


class _Refused(Exception):
    """A call that is not inlined, and why."""


def is_local_call(instr: Instruction) -> bool:
    """Whether ``instr`` is a direct ``CALL.REL`` (a subroutine of the same code)."""
    return instr.opcode == "CALL" and "REL" in instr.modifiers and bool(instr.operands) and (
        type(instr.operands[0]) is Symbol)


class _Inliner:
    def __init__(self, function: Function):
        self.function = function
        self.blocks = function.blocks
        self.by_label = {label: b for b in self.blocks for label in b.labels}
        self.successors = block_successors(function)
        self.position = {b.index: k for k, b in enumerate(self.blocks)}
        self.sites = 0
        self.inlined = 0
        #: (statement, original index or None) in output order; refused calls by identity.
        self.out: list = []
        self.refused: dict[int, str] = {}
        #: Calls of register-only subroutines, by identity: (registers written, reads shared).
        self.summaries: dict[int, tuple[tuple[str, ...], bool]] = {}
        #: Unguarded calls of ptxas's 64-bit division, by identity: its registers.
        self.divisions: dict[int, DivU64] = {}
        #: Per subroutine entered: (its blocks, its register-only summary, the registers of
        #: ptxas's 64-bit division when its body is one), or why it is refused; found once
        #: however many calls enter it (a math-heavy kernel calls a few slow paths hundreds
        #: of times).
        self.subroutines: dict[str, tuple | str] = {}

    # ------------------------------------------------------------------ driving
    def run(self) -> InlinedFunction:
        # Calls are inlined in the blocks the kernel reaches without calls; the
        # subroutines' own blocks stay as they are (only calls reach them, and every call
        # inlined is replaced by a copy).
        reached = self._reachable(self.blocks[0].index) if self.blocks else set()
        for block in self.blocks:
            for label in block.labels:
                self.out.append((Label(label), None))
            if block.index in reached:
                self._copy_block(block, {}, chain=(), depth=0, ret=None)
            else:
                self.out.extend((i, i.index) for i in block.instructions)
        body: list = []
        origin: list[int] = []
        refused: dict[int, str] = {}
        summarized: dict[int, tuple[tuple[str, ...], bool]] = {}
        divisions: dict[int, DivU64] = {}
        for statement, source in self.out:
            if type(statement) is Label:
                body.append(statement)
                continue
            index = len(origin)
            body.append(replace(statement, index=index))
            origin.append(source)
            reason = self.refused.get(id(statement))
            if reason is not None:
                refused[index] = reason
            summary = self.summaries.get(id(statement))
            if summary is not None:
                summarized[index] = summary
            division = self.divisions.get(id(statement))
            if division is not None:
                divisions[index] = division
        function = replace(self.function, body=tuple(body))
        return InlinedFunction(function, tuple(origin), refused, self.inlined, summarized,
                               divisions)

    def _copy_block(self, block, names: dict[str, str], chain: tuple[str, ...], depth: int,
                    ret: str | None) -> None:
        """Emit ``block``'s instructions, renaming labels by ``names`` (a copy) and turning
        ``RET`` into a branch to the label ``ret``."""
        for instr in block.instructions:
            if ret is not None and instr.opcode == "RET":
                self.out.append((Instruction("BRA", (), (Symbol(ret),), instr.guard,
                                             None, -1, True, instr.pos), instr.index))
                continue
            if names and instr.opcode != "CALL":
                # Branch targets inside the copy go to the copy; a call's target is the
                # subroutine's entry, inlined afresh.
                instr = _renamed(instr, names)
            if is_local_call(instr):
                try:
                    if self._inline(block, instr, chain, depth):
                        continue
                except _Refused as refusal:
                    self.refused[id(instr)] = str(refusal)
            self.out.append((instr, instr.index))

    # ------------------------------------------------------------------ one call
    def _inline(self, block, call: Instruction, chain: tuple[str, ...], depth: int) -> bool:
        """Copy the subroutine ``call`` enters in its place (True), or leave a call of a
        register-only subroutine to be summarised (False); raises :class:`_Refused`."""
        target = call.operands[0].name
        entry = self.by_label.get(target)
        if entry is None:
            raise _Refused(f"subroutine {target} not found")
        if target in chain:
            raise _Refused(recursion_reason(target))
        region, summary, division = self._subroutine(entry, target)
        if summary is not None:
            self.summaries[id(call)] = summary
            if division is not None and call.guard is None:
                self.divisions[id(call)] = division
            return False
        if depth >= MAX_CALL_DEPTH:
            raise _Refused(depth_reason())
        size = sum(len(b.instructions) for b in region)
        if self.inlined + size > MAX_INLINED_INSTRUCTIONS:
            raise _Refused(size_reason())
        self._check_returns(region, target)
        self._check_return_address(block, call, target, region)
        self.sites += 1
        site = self.sites
        ret_label = f".L_ret{site}_{call.pos.line if call.pos else 0:#x}"
        names = {}
        for b in region:
            own = f".L_inl{site}_b{b.index}"
            names[own] = own
            for label in b.labels:
                names[label] = own
        own_of = {b.index: f".L_inl{site}_b{b.index}" for b in region}
        self.inlined += size
        if call.guard is not None:
            skip = Guard(call.guard.register, not call.guard.negated)
            self.out.append((Instruction("BRA", (), (Symbol(ret_label),), skip, None, -1,
                                         True, call.pos), call.index))
        in_region = {b.index for b in region}
        for b in region:
            self.out.append((Label(own_of[b.index]), None))
            self._copy_block(b, names, chain + (target,), depth + 1, ret_label)
            following = self.position[b.index] + 1
            if following < len(self.blocks) and self.blocks[following].index in (
                    self.successors[b.index]) and self.blocks[following].index in in_region:
                last = b.last
                self.out.append((Instruction(
                    "BRA", (), (Symbol(own_of[self.blocks[following].index]),), None, None,
                    -1, True, last.pos if last is not None else None),
                    last.index if last is not None else call.index))
        self.out.append((Label(ret_label), None))
        return True

    def _subroutine(self, entry, name: str) -> tuple:
        """``(blocks, register-only summary or None, DivU64 or None)`` of the subroutine
        ``name`` entered at ``entry``; raises :class:`_Refused` as :meth:`_region` does."""
        found = self.subroutines.get(name)
        if found is None:
            try:
                region = self._region(entry, name)
            except _Refused as refusal:
                found = str(refusal)
            else:
                summary = _register_only(region)
                division = match_div_u64([i for b in region for i in b.instructions]) if (
                    summary is not None) else None
                found = (region, summary, division)
            self.subroutines[name] = found
        if type(found) is str:
            raise _Refused(found)
        return found

    def _reachable(self, start: int) -> set[int]:
        seen = {start}
        stack = [start]
        while stack:
            for successor in self.successors[stack.pop()]:
                if successor not in seen:
                    seen.add(successor)
                    stack.append(successor)
        return seen

    def _region(self, entry, name: str) -> list:
        """The blocks reachable from the subroutine's entry, in layout order."""
        seen = self._reachable(entry.index)
        for b in self.blocks:
            if b.index in seen and b.last is not None and b.last.opcode in _INDIRECT:
                raise _Refused(f"indirect branch in subroutine {name}")
        return [b for b in self.blocks if b.index in seen]

    @staticmethod
    def _check_returns(region, name: str) -> None:
        for b in region:
            for instr in b.instructions:
                if instr.opcode == "RET" and not ("REL" in instr.modifiers and instr.operands
                                                  and type(instr.operands[0]) is Register):
                    raise _Refused(f"subroutine {name} returns by {instr.full_opcode}")

    def _check_return_address(self, block, call: Instruction, name: str, region) -> None:
        """The offset of the instruction after the call is put into a register just before
        it (``MOV R20, 0x270``), not overwritten before the call; or, for a subroutine
        only this call enters, inside the subroutine (ptxas then sets the return address
        where it returns: ``MOV R26, 0x50`` ... ``MOV R2, R26``, ``RET.REL.NODEC R2``)."""
        position = next((k for k, i in enumerate(block.instructions) if i.index == (
            call.index)), None)
        before = block.instructions[:position] if position is not None else ()
        written: set[str] = set()
        following = call.pos.line + 16 if call.pos is not None else None
        for instr in reversed(before):
            names = defs(instr)
            value = move_immediate(instr)
            if value is not None and value == following and instr.guard is None and (
                    names and names[0] not in written):
                return
            written.update(names)
        if following is not None and self._calls_of(name) == 1 and any(
                instr.guard is None and move_immediate(instr) == following
                for b in region for instr in b.instructions):
            return
        raise _Refused(f"return address of the call of {name} not recognised")

    def _calls_of(self, name: str) -> int:
        """How many calls of the function's own code enter the subroutine ``name``."""
        return sum(1 for b in self.blocks for i in b.instructions
                   if is_local_call(i) and i.operands[0].name == name)


def _register_only(region) -> tuple[tuple[str, ...], bool] | None:
    """``(registers written, reads shared memory)`` when the subroutine's blocks touch no
    memory but the stack and shared memory, call nothing and have only instructions whose
    effects the operand tables know; else None."""
    written: dict[str, None] = {}
    shared = False
    for b in region:
        for instr in b.instructions:
            if instr.opcode in ("CALL", "BRX", "JMX", "BRXU", "JMXU") or (
                    instr.opcode not in SASS_KNOWN_OPCODES):
                return None
            if access_kind(instr) is not None:
                spaces = set(memory_spaces(instr))
                if not spaces or not spaces <= _PRIVATE_SPACES:
                    return None
                shared = shared or "shared" in spaces
            written.update(dict.fromkeys(defs(instr)))
    return tuple(written), shared


def _renamed(instr: Instruction, names: dict[str, str]) -> Instruction:
    operands = instr.operands
    if not any(type(o) is Symbol and o.name in names for o in operands):
        return instr
    return replace(instr, operands=tuple(
        Symbol(names[o.name]) if type(o) is Symbol and o.name in names else o
        for o in operands))


def inline_subroutines(function: Function) -> InlinedFunction:
    """``function`` with its ``CALL.REL`` subroutine calls inlined (see the module
    documentation).

    Parameters
    ----------
    function : Function
        A SASS function (labels at its subroutines' entries, as
        :func:`kernelcheck.sass.function.build_function` places them).

    Returns
    -------
    InlinedFunction

    Examples
    --------
    >>> from kernelcheck.binary.nvdisasm import SassFunction, SassInstruction
    >>> from kernelcheck.sass.function import function_from_sass
    >>> f = function_from_sass(SassFunction("k", (
    ...     SassInstruction(0, "MOV R4, 0x20"),
    ...     SassInstruction(16, "CALL.REL.NOINC $k$f"),
    ...     SassInstruction(32, "EXIT"),
    ...     SassInstruction(48, "STG.E [R2.64], RZ"),
    ...     SassInstruction(64, "RET.REL.NODEC R4 k"))), symbols={"$k$f": 48})
    >>> [i.full_opcode for i in inline_subroutines(f).function.instructions][:4]
    ['MOV', 'STG.E', 'BRA', 'EXIT']
    """
    if not any(is_local_call(i) for i in function.instructions):
        return InlinedFunction(function, tuple(range(len(function.instructions))), {}, 0)
    return _Inliner(function).run()
