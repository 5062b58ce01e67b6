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
  holds ``value`` (``half`` ``None``) or that half of the 64-bit ``value``. When ``P`` is
  written while it has a value number (below), the fact is kept with the number in place
  of ``P``: ``("g", value, half, "pv", ..., negated)``, true under any predicate with that
  number. ptxas recomputes a predicate into another register after overwriting the first
  (``LOP3.LUT P5, RZ, R141, 0x10, RZ, 0xc0, !PT`` guards the moves that build a pointer,
  the same ``LOP3`` into ``P6`` the store through it).

A fact about a predicate: ``("pv", opcode, *operands)``, its *value number*: it holds
what the unguarded instruction ``opcode`` computes from those operands (register names,
and strings for immediates, negations and constant-bank words), none of which has been
written since (:func:`predicate_value`). Two predicates with the same value number hold
the same value. A register that saved such a predicate (``P2R R82, PR, RZ, 0x20`` saves
``P5``) holds ``("pr", "pv", ...)``: nonzero exactly when that number holds, so the
predicate ``ISETP.NE.AND`` restores from it gets the number back.

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

__all__ = ["LiftState", "block_successors", "is_predicate", "predicate_value", "traps",
           "STABLE_SPECIALS"]

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
        """``name`` (a SASS register or a 64-bit virtual register) is written.

        The facts that mention it are dropped, but for the guarded facts whose guard it
        is, while it has a value number: they are then keyed by the number."""
        self.writes[name] = self.writes.get(name, 0) + 1
        tags = self.tags
        number = tags.pop(name, None)
        # A fact's first element is its kind ("v", "cb", "sx", ...), never a register name,
        # so a fact mentions ``name`` exactly when ``name`` is one of its elements.
        dead = [k for k, v in tags.items() if name in v]
        if number is not None and number[0] != "pv":
            number = None
        for k in dead:
            fact = tags[k]
            if number is not None and fact[0] == "g" and len(fact) == 5 and fact[3] == name:
                tags[k] = fact[:3] + number + fact[4:]
            else:
                del tags[k]
        if self.shl_source:
            for k in [k for k, v in self.shl_source.items() if v[0] == name or k == name]:
                del self.shl_source[k]
        if self.pending:
            for k in [k for k, v in self.pending.items() if k == name or name in v[-1]]:
                del self.pending[k]


#: Opcodes whose predicate result is a function of their operands alone.
_NUMBERED = frozenset({"ISETP", "LOP3", "PLOP3", "UISETP", "ULOP3", "UPLOP3"})
_CONSTANT_NAMES = ("RZ", "URZ", "PT", "UPT")


def predicate_value(instr: Instruction, tags: dict | None = None) -> tuple | None:
    """The register an unguarded instruction gives a value number, and the fact (see the
    module documentation); None for any other instruction.

    * ``ISETP``/``LOP3``/``PLOP3`` that write one predicate: the instruction and its
      operands, unless it reads the predicate it writes or has an operand whose value is
      not fixed by the registers it names.
    * ``P2R Rd, PR, RZ, m`` that saves the one predicate ``Pk`` with a number (``m`` is
      bit ``k``): ``Rd`` gets ``("pr", number...)``, nonzero exactly when ``Pk`` held.
    * ``ISETP.NE.AND Pd, PT, Rd, RZ, PT`` of such a register: ``Pd`` gets the number back.

    Examples
    --------
    >>> from kernelcheck.binary.nvdisasm import SassFunction, SassInstruction
    >>> from kernelcheck.sass.function import function_from_sass
    >>> f = function_from_sass(SassFunction("k", (
    ...     SassInstruction(0, "LOP3.LUT P5, RZ, R141, 0x10, RZ, 0xc0, !PT"),
    ...     SassInstruction(16, "ISETP.NE.AND P0, PT, R1, RZ, P0"),
    ...     SassInstruction(32, "@P1 ISETP.NE.AND P2, PT, R1, RZ, PT"))))
    >>> [predicate_value(i) for i in f.instructions]  # doctest: +NORMALIZE_WHITESPACE
    [('P5', ('pv', 'LOP3.LUT', 'RZ', 'R141', '#16', 'RZ', '#192', '!', 'PT')), None, None]
    """
    from kernelcheck.ir.nodes import (
        ConstantRef,
        Immediate,
        ModifiedOperand,
        NegatedPredicate,
        Register,
    )
    from kernelcheck.ir.operands import defs

    guard = instr.guard
    if guard is not None and (guard.register not in ("PT", "UPT") or guard.negated):
        return None
    operands = instr.operands
    first = operands[0] if operands else None
    if type(first) is not Register or first.name in _CONSTANT_NAMES:
        return None
    tags = tags or {}
    if instr.opcode == "P2R":
        mask = operands[3] if len(operands) == 4 else None
        if (type(mask) is not Immediate or mask.kind != "int" or mask.value <= 0
                or mask.value & (mask.value - 1) or mask.value > 0x40
                or [getattr(o, "name", None) for o in operands[1:3]] != ["PR", "RZ"]):
            return None
        number = tags.get(f"P{mask.value.bit_length() - 1}")
        if number is None or number[0] != "pv" or first.name in number:
            return None
        return first.name, ("pr",) + number
    if instr.opcode not in _NUMBERED:
        return None
    written = defs(instr)
    if len(written) != 1 or first.name != written[0] or not is_predicate(first.name):
        return None
    if instr.full_opcode in ("ISETP.NE.AND", "ISETP.NE.U32.AND") and len(operands) == 5:
        source = operands[2]
        saved = tags.get(source.name) if type(source) is Register else None
        if saved is not None and saved[0] == "pr" and [
                getattr(o, "name", None) for o in (operands[1], operands[3], operands[4])
        ] == ["PT", "RZ", "PT"] and first.name not in saved:
            return first.name, saved[1:]
    key: list = ["pv", instr.full_opcode]
    for operand in operands[1:]:
        if type(operand) is ModifiedOperand and not (
                operand.negate or operand.absolute or operand.invert) and set(
                operand.suffixes) <= {"reuse"}:
            operand = operand.operand  # a register-reuse hint changes no value
        kind = type(operand)
        if kind is Register:
            key.append(operand.name)
        elif kind is NegatedPredicate:
            key.extend(("!", operand.register.name))
        elif kind is Immediate and operand.kind == "int":
            key.append(f"#{operand.value}")
        elif kind is ConstantRef and type(operand.bank) is int and (
                operand.index is None or operand.index.name in _CONSTANT_NAMES):
            key.append(f"c[{operand.bank}][{operand.offset}]")
        else:
            return None
    if first.name in key:
        return None
    return first.name, tuple(key)


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
