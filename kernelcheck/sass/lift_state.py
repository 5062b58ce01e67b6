"""What the SASS lifter knows about 32-bit registers at a program point, and the block graph
it iterates over.

A *fact* about a 32-bit register says how it relates to a 64-bit value or to another
register, so that a later 64-bit read of two halves can be lifted as one 64-bit term:

* ``("v", name, "lo")`` / ``("v", name, "hi")``: the register holds the low / high word of
  the 64-bit virtual register ``name``;
* ``("cb", offset)``: it holds the 32-bit word of constant bank 0 at ``offset``;
* ``("sx", reg)``: it holds the sign word of ``reg`` (``SHF.R.S32.HI x, RZ, 0x1f, reg``);
* ``("shl", reg, s)``: it holds ``reg << s`` (32-bit), the low word of a 64-bit shift;
* ``("k", value)``: it holds the constant ``value`` (a move of an immediate);
* ``("sr", name)``: it holds the special register ``name`` (``SR_TID.X``, ``SR_CTAID.Y``:
  fixed for the thread, so two reads are one value);
* ``("fn", symbol)``: it holds (the low word of) the address of the runtime function
  ``symbol`` that constant bank 4 holds (``__assertfail``, ``vprintf``);
* ``("eq", reg)``: it holds the same value as the register ``reg`` (a copy);
* ``("mhi", name, k)``: it holds the high word of the 64-bit virtual register ``name``
  times the constant ``k`` (modulo 2**32);
* ``("g", value, half, P, negated)``: whenever the guard ``P`` (negated or not) holds, it
  holds ``value`` (``half`` ``None``) or that half of the 64-bit ``value``.

A fact about a 64-bit virtual register: ``("same", name)``, it equals the 64-bit virtual
register ``name`` (a value moved into a pair's own register at a block end).

A fact stays true until a register it mentions is written (:meth:`LiftState.kill`), and a
fact holds at a block entry only if it holds at the end of every predecessor
(:meth:`LiftState.meet`). ``shl_source`` records which 64-bit temporaries are
``(reg:hi) << s`` for ``SHF.L.U64.HI``. ``pending`` holds the carry chains and 64-bit
compares begun in the current block (carry and chain predicates never cross blocks here).
"""

from __future__ import annotations

import re

from kernelcheck.ir.nodes import Function, Instruction, Symbol
from kernelcheck.sass.calls import branch_targets, stops_thread
from kernelcheck.sass.function import label_for_offset

__all__ = ["LiftState", "block_successors", "is_predicate", "traps", "STABLE_SPECIALS"]

#: Special registers whose value is fixed for the whole thread (read twice, the same).
STABLE_SPECIALS = frozenset({"SR_TID.X", "SR_TID.Y", "SR_TID.Z", "SR_CTAID.X", "SR_CTAID.Y",
                             "SR_CTAID.Z", "SR_LANEID"})

_PREDICATE = re.compile(r"^U?P[0-7T]$")


def is_predicate(name: str) -> bool:
    """Whether a SASS register name is a predicate (``P0``..``P6``, ``PT``, ``UP0``..).

    Examples
    --------
    >>> is_predicate("P3"), is_predicate("UPT"), is_predicate("R3")
    (True, True, False)
    """
    return bool(_PREDICATE.match(name))


class LiftState:
    """Facts per register (see the module documentation); plain dicts, copied per block."""

    __slots__ = ("tags", "shl_source", "pending", "writes", "stale")

    def __init__(self, tags=None, shl_source=None, stale=None):
        self.tags: dict[str, tuple] = dict(tags or {})
        self.shl_source: dict[str, tuple] = dict(shl_source or {})
        self.pending: dict[str, tuple] = {}
        #: How often each register was written in the current block (for snapshots).
        self.writes: dict[str, int] = {}
        #: SASS registers an instruction left unlifted may have written since the lifted
        #: code last defined them (:mod:`kernelcheck.sass.relevance`): a read gives them
        #: an opaque value first.
        self.stale: set[str] = set(stale or ())

    def copy(self) -> LiftState:
        return LiftState(self.tags, self.shl_source, self.stale)

    def __eq__(self, other) -> bool:
        return isinstance(other, LiftState) and self.tags == other.tags and (
            self.shl_source == other.shl_source) and self.stale == other.stale

    __hash__ = None  # type: ignore[assignment]

    @staticmethod
    def meet(states: list[LiftState]) -> LiftState:
        """The facts common to every state; the registers stale in any."""
        first = states[0]
        tags = {k: v for k, v in first.tags.items()
                if all(s.tags.get(k) == v for s in states[1:])}
        shl = {k: v for k, v in first.shl_source.items()
               if all(s.shl_source.get(k) == v for s in states[1:])}
        return LiftState(tags, shl, set().union(*(s.stale for s in states)))

    def kill(self, name: str) -> None:
        """``name`` (a SASS register or a 64-bit virtual register) is written."""
        self.writes[name] = self.writes.get(name, 0) + 1
        tags = self.tags
        tags.pop(name, None)
        # A fact's first element is its kind ("v", "cb", "sx", ...), never a register name,
        # so a fact mentions ``name`` exactly when ``name`` is one of its elements.
        dead = [k for k, v in tags.items() if name in v]
        for k in dead:
            del tags[k]
        if self.shl_source:
            for k in [k for k, v in self.shl_source.items() if v[0] == name or k == name]:
                del self.shl_source[k]
        if self.pending:
            for k in [k for k, v in self.pending.items() if k == name or name in v[-1]]:
                del self.pending[k]


def traps(instr: Instruction) -> bool:
    """Whether ``instr`` is an unconditional ``BPT.TRAP`` (what PTX's ``trap`` and CUDA's
    ``__trap()`` compile to): the launch aborts with a sticky error, and the thread never
    runs the instructions after it.

    >>> from kernelcheck.binary.nvdisasm import SassFunction, SassInstruction
    >>> from kernelcheck.sass.function import function_from_sass
    >>> f = function_from_sass(SassFunction("k", (SassInstruction(0, "BPT.TRAP 0x1"),
    ...     SassInstruction(16, "@P0 BPT.TRAP 0x1"), SassInstruction(32, "BPT.DRAIN 0x0"))))
    >>> [traps(i) for i in f.instructions]
    [True, False, False]
    """
    return instr.opcode == "BPT" and "TRAP" in instr.modifiers and (
        instr.guard is None or (instr.guard.register in ("PT", "UPT")
                                and not instr.guard.negated))


def block_successors(function: Function) -> dict[int, tuple[int, ...]]:
    """The successor blocks of every block of a SASS function.

    Built here rather than by :func:`kernelcheck.ir.cfg.control_flow_graph` because a
    SASS branch may carry its predicate as an operand (``BRA.U !UP0, L``, ``BRA.DIV``)
    and still fall through; a missing edge would make the must-analysis claim facts it
    does not have. Indirect branches (``BRX``, ``JMX``, ``BRXU``, ``JMXU``) go to the
    targets EIATTR_INDIRECT_BRANCH_TARGETS lists, or anywhere without it: every block is a
    successor. A block that calls ``__assertfail`` or traps (``BPT.TRAP``, PTX's ``trap``)
    unconditionally has none.
    """
    blocks = function.blocks
    index = {label: b.index for b in blocks for label in b.labels}
    result: dict[int, tuple[int, ...]] = {}
    for position, block in enumerate(blocks):
        targets: list[int] = []
        last = block.last
        falls = True
        if last is not None:
            op = last.opcode
            conditional = last.guard is not None and last.guard.register not in ("PT", "UPT")
            if op in ("BRA", "JMP"):
                for operand in last.operands:
                    if type(operand) is Symbol and operand.name in index:
                        targets.append(index[operand.name])
                has_pred = any(type(o) is not Symbol for o in last.operands)
                falls = conditional or has_pred or "DIV" in last.modifiers
            elif op in ("BRX", "JMX", "BRXU", "JMXU"):
                known = branch_targets(function, last)
                if known is not None and all(label_for_offset(t) in index for t in known):
                    targets.extend(index[label_for_offset(t)] for t in known)
                    falls = conditional
                else:
                    targets.extend(b.index for b in blocks)
                    falls = True
            elif op in ("EXIT", "RET", "KILL"):
                falls = conditional
        if any(traps(i) or (i.opcode == "CALL" and stops_thread(
                function, block.instructions, i)) for i in block.instructions):
            targets, falls = [], False
        if falls and position + 1 < len(blocks):
            targets.append(blocks[position + 1].index)
        result[block.index] = tuple(dict.fromkeys(targets))
    return result
