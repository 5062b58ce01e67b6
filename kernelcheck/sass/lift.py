"""Lift a SASS function into the PTX form of the Kernel IR, for the idempotency analysis.

The symbolic analysis (:mod:`kernelcheck.analysis.symbolic`) reads PTX-style instructions:
lower-case opcodes, typed modifiers, one virtual register per value. :func:`lift_function`
rewrites each SASS instruction into such instructions over virtual registers, so one
analysis serves both front ends and nothing in :mod:`kernelcheck.analysis` knows SASS.

Registers. ``R7`` becomes ``%r7`` (``.b32``), ``UR7`` ``%ur7``, ``P1`` ``%p1`` and ``UP1``
``%up1`` (``.pred``); ``RZ``/``URZ`` read as 0 and ``PT`` as true. A 64-bit value in the
aligned pair ``R2:R3`` lives in ``%rd2`` (``.b64``); other 64-bit values get temporaries.

Pairs of 32-bit halves. SASS computes 64-bit addresses in 32-bit halves: ``IMAD.WIDE``
writes a pair, ``IADD3``/``IADD3.X`` and ``LEA``/``LEA.HI.X`` carry chains add the halves,
``SHF.R.S32.HI Rx, RZ, 0x1f, Ry`` makes the sign word of ``Ry``. The lifter follows, per
program point, what each 32-bit register is known to hold (:class:`~kernelcheck.sass.
lift_state.LiftState`, a forward must-analysis over the blocks: a fact holds at a block
entry only if it holds at the end of every predecessor), and reads a pair as one 64-bit
term where the facts allow: the halves of one 64-bit register, a sign-extended or
zero-extended 32-bit value, or a 64-bit parameter read in two halves. Otherwise the pair is
read as ``lo + 2**32 * hi`` of its unsigned halves, which is exact but loses the structure
(base pointers) the analysis needs; never a guess.

Soundness. Every SASS instruction the rules of :mod:`kernelcheck.sass.lift_rules` do not
translate exactly defines its destinations as opaque values (loaded-from-memory when it
loads), and every instruction that may write memory and is not modelled becomes an
instruction with ``known=False``, which makes the analysis answer ``not_proven``.

Work. Most instructions of a kernel compute values no address, branch or atomic reads (the
math of an elementwise functor, the accumulators of a matrix product).
:mod:`kernelcheck.sass.relevance` finds them, and the lifter leaves them unlifted: the
registers they write lose their facts, and a lifted instruction that reads one of them
before it is written again reads an opaque value, so leaving out too much could only cost
precision. ``lift_kernel(..., every_instruction=True)`` lifts everything.
"""

from __future__ import annotations

from dataclasses import dataclass

from kernelcheck.ir.nodes import (
    Function,
    Guard,
    Immediate,
    Instruction,
    Label,
    Module,
    Register,
    RegisterDecl,
    SourcePos,
    Symbol,
    VariableDecl,
)
from kernelcheck.sass.calls import bank_objects
from kernelcheck.sass.division import plan_divisions
from kernelcheck.sass.frame import promote_stack_slots
from kernelcheck.sass.inline import inline_subroutines
from kernelcheck.sass.lift_state import (
    LiftState,
    block_successors,
    is_predicate,
    predicate_value,
)
from kernelcheck.sass.params import param_cbank
from kernelcheck.sass.relevance import irrelevant_instructions

__all__ = ["LiftedFunction", "lift_function", "lift_module", "lift_kernel"]

_MAX_PASSES = 32


@dataclass(frozen=True)
class LiftedFunction:
    """A lifted kernel: the PTX-form function and, per lifted instruction, the index of
    the SASS instruction it came from (``origin[k]`` for ``function.instructions[k]``).

    ``reasons`` says, for lifted instructions the analysis must treat as unmodelled, why
    the lifter could not model them (``(lifted index, reason)``), where it knows more than
    the opcode: a call that was not inlined, an address it could not read.
    """

    function: Function
    origin: tuple[int, ...]
    reasons: tuple[tuple[int, str], ...] = ()


def _virtual_register(name: str) -> tuple[Register, str]:
    """The virtual register of the SASS register ``name`` and its type."""
    if name.startswith("UP"):
        return Register(f"%up{name[2:]}"), "pred"
    if name.startswith("UR"):
        return Register(f"%ur{name[2:]}"), "b32"
    if name.startswith("P"):
        return Register(f"%p{name[1:]}"), "pred"
    if name.startswith("R"):
        return Register(f"%r{name[1:]}"), "b32"
    return Register(f"%x_{name}"), "b32"


#: :func:`_virtual_register` of the SASS register names met so far: every rule asks for
#: the registers it reads and writes, many times per instruction over the lift's passes.
#: The names are few (``R0``..``R255``, ``UR0``..``UR63``, predicates); the bound only
#: guards against odd input.
_VIRTUAL: dict[str, tuple[Register, str]] = {}
_VIRTUAL_KEPT = 4096


#: The predicate registers a value number may be shared with.
_PREDICATES = tuple(f"P{k}" for k in range(7)) + tuple(f"UP{k}" for k in range(7))


class Lifter:
    """Emits the PTX form of one SASS function; the rules call its helpers."""

    def __init__(self, sass: Function, module: Module | None = None,
                 refused: dict[int, str] | None = None,
                 summarized: dict[int, tuple[tuple[str, ...], bool]] | None = None,
                 divisions: dict | None = None, every_instruction: bool = False):
        self.sass = sass
        self.module = module
        #: Local calls the inliner left in place, by SASS instruction index, with why.
        self.refused = refused or {}
        #: Calls of register-only subroutines the inliner left in place: (registers
        #: written, reads shared memory), by SASS instruction index.
        self.summarized = summarized or {}
        #: Of those, the calls of ptxas's 64-bit division: the registers of its operands
        #: and quotient (:class:`kernelcheck.sass.division64.DivU64`).
        self.divisions = divisions or {}
        #: SASS instructions whose results the analysis cannot need, with the registers
        #: they write: left unlifted, those registers stale (:mod:`kernelcheck.sass.
        #: relevance`, :meth:`_skip`).
        self.irrelevant = {} if every_instruction else irrelevant_instructions(
            sass, self._summarized_reads(), {
                index: written for index, (written, shared) in self.summarized.items()
                if not shared and index not in self.divisions})
        #: Why an emitted unmodelled instruction is unmodelled, by position in ``out``.
        self.why: dict[int, str] = {}
        self.cbank = param_cbank(sass)
        self.types: dict[str, str] = {}
        self.out: list = []
        self.origin: list[int] = []
        self.state = LiftState()
        self.current: Instruction | None = None
        self.block = None
        self.stopped = False
        #: Every register the SASS function names (computed on first use).
        self.every_register: tuple[str, ...] | None = None
        #: What the latest non-emitting block lift emitted: (instructions, origins, reasons).
        self._discarded: tuple = ((), (), {})
        self.guard: Guard | None = None
        self.sass_guard: tuple = ()
        #: The names a guarded fact may give the current guard: the predicate, and its
        #: value number when it has one; each with whether negated
        #: (:mod:`kernelcheck.sass.lift_state`).
        self.guard_keys: tuple = ()
        self.serial = 0
        self.by_label = {}
        #: Register pairs each block moves into the pair's own register at its end, for a
        #: join after it (:meth:`_want_pairs`).
        self.wanted: dict[int, set[tuple[str, str]]] = {}
        for block in sass.blocks:
            for label in block.labels:
                self.by_label[label] = block

    def _summarized_reads(self) -> dict[int, tuple[str, ...]]:
        """The registers each summarised call's lift reads (:func:`lift_memory.call`):
        the operands of a 64-bit division, none for any other register-only subroutine."""
        reads = {}
        for index in self.summarized:
            division = self.divisions.get(index)
            reads[index] = () if division is None else division.dividend + division.divisor
        return reads

    # ------------------------------------------------------------------ registers
    def reg(self, name: str) -> Register:
        """The virtual register of the SASS register ``name`` (not RZ/PT)."""
        found = _VIRTUAL.get(name)
        if found is None:
            found = _virtual_register(name)
            if len(_VIRTUAL) < _VIRTUAL_KEPT:
                _VIRTUAL[name] = found
        self.types[found[0].name] = found[1]
        if name in self.state.stale:
            self._refresh(name, *found)
        return found[0]

    def pair_reg(self, lo: str) -> Register | None:
        """The 64-bit register of the aligned pair starting at ``lo`` (``R2`` → ``%rd2``)."""
        prefix = "UR" if lo.startswith("UR") else "R" if lo.startswith("R") else None
        if prefix is None or not lo[len(prefix):].isdigit() or int(lo[len(prefix):]) % 2:
            return None
        name = f"%{prefix.lower()}d{lo[len(prefix):]}"
        self.types[name] = "b64"
        return Register(name)

    def tmp(self, kind: str = "b32") -> Register:
        """A fresh temporary (names are stable across the passes of the fixpoint)."""
        self.serial += 1
        letter = {"b32": "s", "b64": "t", "pred": "q"}[kind]
        index = self.current.index if self.current is not None else 0
        name = f"%{letter}{index}_{self.serial}"
        self.types[name] = kind
        return Register(name)

    # ------------------------------------------------------------------ emission
    def emit(self, opcode: str, modifiers: tuple[str, ...] = (), operands: tuple = (),
             guard: Guard | None | bool = True, known: bool = True) -> None:
        """Append one PTX-form instruction; ``guard=True`` uses the SASS guard."""
        if guard is True:
            guard = self.guard
        # Kept as the fields of the instruction: :meth:`lift` builds each one once, with its
        # index in the lifted function.
        self.out.append((opcode, modifiers, tuple(operands), guard or None, known,
                         self.current.pos if self.current is not None else None))
        self.origin.append(self.current.index if self.current is not None else -1)

    def unknown(self, why: str = "") -> None:
        """An instruction the analysis must treat as unmodelled (``known=False``); ``why``
        is given with the analysis's reason when the opcode alone does not say it."""
        instr = self.current
        mods = tuple(m.lower() for m in instr.modifiers)
        if why:
            self.why[len(self.out)] = why
        self.emit("sass", (instr.opcode.lower(),) + mods, (), guard=True, known=False)

    # ------------------------------------------------------------------ lifting
    def lift(self) -> LiftedFunction:
        blocks = self.sass.blocks
        successors = block_successors(self.sass)
        preds: dict[int, list[int]] = {b.index: [] for b in blocks}
        for source, targets in successors.items():
            for target in targets:
                preds[target].append(source)
        entry_states: dict[int, LiftState | None] = {b.index: None for b in blocks}
        if blocks:
            entry_states[blocks[0].index] = LiftState()
        outs: dict[int, LiftState] = {}
        dirty: set[int] = set()
        # Per block, what its latest lift emitted and the entry state it started from: at
        # the fixpoint that lift had the block's final entry state and wanted pairs, so the
        # emitting pass reuses it (except where a division is recognised, which only the
        # emitting pass does).
        lifted: dict[int, tuple[LiftState, tuple]] = {}
        # Forward must-analysis of the facts: iterate to a fixpoint (facts only shrink
        # once every block has been reached, and the pairs wanted at joins only grow),
        # then emit with the stable entry states.
        for _ in range(_MAX_PASSES):
            changed = False
            for block in blocks:
                incoming = [outs[p] for p in preds[block.index] if p in outs]
                if block.index == blocks[0].index:
                    state = LiftState()
                elif incoming:
                    state = LiftState.meet(incoming)
                    if len(incoming) > 1 and len(incoming) == len(preds[block.index]):
                        changed |= self._want_pairs(preds[block.index], incoming, dirty)
                else:
                    state = None
                if state is None:
                    continue
                if entry_states[block.index] is not None and block.index in outs and (
                        entry_states[block.index] == state) and block.index not in dirty:
                    continue
                dirty.discard(block.index)
                entry_states[block.index] = state
                out = self._lift_block(block, state.copy(), emit=False)
                lifted[block.index] = (state, self._discarded)
                if outs.get(block.index) != out:
                    outs[block.index] = out
                    changed = True
            if not changed:
                break
        else:
            # No fixpoint: no facts, and whatever an unlifted instruction writes is stale.
            stale = {n for names in self.irrelevant.values() for n in names}
            entry_states = {b.index: LiftState(stale=stale if k else ())
                            for k, b in enumerate(blocks)}
        self.out, self.origin = [], []
        self.why = {}
        body: list = []
        for block in blocks:
            for label in block.labels:
                body.append(("label", label))
            state = entry_states[block.index] or LiftState()
            start = len(self.out)
            last = lifted.get(block.index)
            if last is not None and last[0] is entry_states[block.index] and (
                    block.index not in dirty) and not plan_divisions(
                    block.instructions, _known_values(state.tags)):
                out, origin, why = last[1]
                self.out.extend(out)
                self.origin.extend(origin)
                self.why.update((start + k, text) for k, text in why.items())
            else:
                self._lift_block(block, state.copy(), emit=True)
            body.extend(("instr", k) for k in range(start, len(self.out)))
        statements: list = []
        origin: list[int] = []
        reasons: list[tuple[int, str]] = []
        for kind, value in body:
            if kind == "label":
                statements.append(Label(value))
                continue
            opcode, modifiers, operands, guard, known, pos = self.out[value]
            if value in self.why:
                reasons.append((len(origin), self.why[value]))
            statements.append(Instruction(opcode, modifiers, operands, guard, None, len(origin),
                                          known, pos))
            origin.append(self.origin[value])
        decls = _declarations(self.types)
        function = Function(self.sass.name, self.sass.kind, self.sass.params,
                            self.sass.return_params, self.sass.attributes,
                            self.sass.directives, tuple(decls) + tuple(statements),
                            self.sass.noreturn, self.sass.pos)
        return LiftedFunction(function, tuple(origin), tuple(reasons))

    def _lift_block(self, block, state: LiftState, emit: bool) -> LiftState:
        from kernelcheck.sass.lift_rules import lift_instruction

        self.state = state
        self.block = block
        self.stopped = False
        saved = len(self.out), len(self.origin)
        state.pending.clear()
        state.writes.clear()
        # Divisions are recognised once, with the stable facts of the emitting pass: what
        # they emit defines no fact the fixpoint depends on.
        plan = plan_divisions(block.instructions, _known_values(state.tags)) if emit else None
        for instr in block.instructions:
            self.current = instr
            self.serial = 0
            guard = instr.guard
            if guard is not None and guard.register in ("PT", "UPT"):
                if guard.negated:
                    continue  # @!PT: never executes
                guard = None
            self.guard = None if guard is None else Guard(self.reg(guard.register).name,
                                                          guard.negated)
            self.sass_guard = () if guard is None else (guard.register, guard.negated)
            if instr is block.last and instr.is_terminator:
                self.guard, self.sass_guard, self.guard_keys = None, (), ()
                self._canonical_pairs()
                self.guard = None if guard is None else Guard(
                    self.reg(guard.register).name, guard.negated)
                self.sass_guard = () if guard is None else (guard.register, guard.negated)
            self.guard_keys = () if guard is None else self._guard_keys(guard)
            if plan and instr.index in plan.copies:
                self._copy_division_operands(instr, plan.copies[instr.index])
            if instr.index in self.irrelevant:
                self._skip(instr)
            else:
                lift_instruction(self, instr)
                numbered = predicate_value(instr, self.state.tags)
                if numbered is not None and numbered[0] not in self.state.tags:
                    self.state.tags[numbered[0]] = numbered[1]
            if plan and instr.index in plan.results:
                self._division_results(plan.results[instr.index])
            if self.stopped:
                break  # the thread ends here (a call of __assertfail)
        if not self.stopped and (block.last is None or not block.last.is_terminator):
            self.current = block.last
            self.guard, self.sass_guard, self.guard_keys = None, (), ()
            self._canonical_pairs()
        self.current = None
        if not emit:
            # Kept aside (the emitting pass may reuse it: lift), not in the output.
            why = {p: self.why.pop(p) for p in [p for p in self.why if p >= saved[0]]}
            self._discarded = (self.out[saved[0]:], self.origin[saved[1]:],
                               {p - saved[0]: text for p, text in why.items()})
            del self.out[saved[0]:]
            del self.origin[saved[1]:]
        return state

    def _guard_keys(self, guard) -> tuple:
        """The names guarded facts may give ``guard``: its predicate, then, if it has a
        value number, the number and every other predicate with the same number
        (:mod:`kernelcheck.sass.lift_state`)."""
        named = (guard.register, guard.negated)
        tags = self.state.tags
        number = tags.get(guard.register)
        if number is None or number[0] != "pv":
            return (named,)
        same = tuple((name, guard.negated) for name in _PREDICATES
                     if name != guard.register and tags.get(name) == number)
        return (named, number + (guard.negated,)) + same

    def _skip(self, instr: Instruction) -> None:
        """Leave ``instr`` unlifted: the registers it writes lose their facts and become
        stale (an opaque value if a lifted instruction reads them before writing them)."""
        state = self.state
        for name in self.irrelevant[instr.index]:
            if name not in ("RZ", "URZ", "PT", "UPT"):
                state.kill(name)
                state.stale.add(name)

    def _refresh(self, name: str, register: Register, kind: str) -> None:
        """A read of a stale register: it gets an opaque value, unconditionally."""
        self.state.stale.discard(name)
        if kind == "pred":
            self.emit("xor", ("pred",), (register,), guard=False)
        else:
            self.emit("prmt", ("b32",), (register,), guard=False)

    def _copy_division_operands(self, instr: Instruction, copies) -> None:
        """Copy the dividend and divisor of a recognised division while they are live."""
        from kernelcheck.sass.lift_values import src32

        for position, name in copies:
            self.types[name] = "b32"
            value = src32(self, instr.operands[position])
            self.emit("mov", ("b32",), (Register(name), value), guard=False)

    def _division_results(self, results) -> None:
        """After the instruction that completes a recognised division, its register holds
        the PTX ``div``/``rem`` of the copied operands, whether or not a guard let that
        instruction run (:mod:`kernelcheck.sass.division`)."""
        from kernelcheck.sass.lift_values import write32

        saved = self.guard, self.sass_guard, self.guard_keys
        self.guard, self.sass_guard, self.guard_keys = None, (), ()
        try:
            for register, opcode, kind, x, d in results:
                write32(self, register, lambda r, o=opcode, k=kind, a=x, b=d: self.emit(
                    o, (k,), (r, Register(a), Register(b))))
        finally:
            self.guard, self.sass_guard, self.guard_keys = saved

    def _want_pairs(self, sources: list[int], states: list[LiftState], dirty: set[int]) -> bool:
        """Register pairs that hold the halves of one 64-bit value at the end of every
        predecessor of a join, but of a different value in each (a pointer kept in
        ``R7:R3`` that the loop advances, entered from a block where ``R2:R3`` holds it
        too): each predecessor is to move it into the pair's own register, so that the
        join keeps it. Returns whether a predecessor wants more than before."""
        common: dict | None = None
        for state in states:
            pairs = _half_pairs(state.tags)
            if common is None:
                common = dict(pairs)
                continue
            # Kept where every predecessor pairs them; None where the values differ.
            common = {key: value if value == pairs[key] else None
                      for key, value in common.items() if key in pairs}
        wanted = {key for key, value in (common or {}).items() if value is None}
        grew = False
        for source in sources:
            have = self.wanted.setdefault(source, set())
            if not wanted <= have:
                have |= wanted
                dirty.add(source)
                grew = True
        return grew

    def _canonical_pairs(self) -> None:
        """At a block end, move every 64-bit value held in two halves into the pair's own
        register (``%rd4`` for ``R4:R5``, ``%rp4_19`` for ``R4:R19``), so that the facts
        of every predecessor agree at a join: a pointer advanced in a loop keeps one
        64-bit register around the back edge, which the analysis reads as an induction
        variable. Pairs a join wants (:meth:`_want_pairs`) come first. The pair's register
        gets the fact ``("same", value)``: it equals the 64-bit register it was moved
        from, other copies of which may still name that one."""
        tags = self.state.tags
        for lo, hi in sorted(self.wanted.get(self.block.index, ()) if self.block else ()):
            low, high = tags.get(lo), tags.get(hi)
            if not (low and high and low[0] == high[0] == "v" and low[1] == high[1]
                    and (low[2], high[2]) == ("lo", "hi")):
                continue
            target = self.pair_name(lo, hi)
            if target is None or target == low[1]:
                continue
            self.emit("mov", ("b64",), (Register(target), Register(low[1])), guard=False)
            self.state.kill(target)
            tags[lo] = ("v", target, "lo")
            tags[hi] = ("v", target, "hi")
            tags[target] = ("same", low[1])
        for lo, hi, value in _pairings(tags):
            fact = ("v", value, "lo")
            if tags.get(lo) != fact or tags.get(hi) != ("v", value, "hi"):
                continue  # changed by an earlier move of this loop
            target = self.pair_name(lo, hi)
            if target is None or target == fact[1]:
                continue
            self.emit("mov", ("b64",), (Register(target), Register(fact[1])), guard=False)
            self.state.kill(target)
            tags[lo] = ("v", target, "lo")
            tags[hi] = ("v", target, "hi")
            tags[target] = ("same", fact[1])

    def pair_name(self, lo: str, hi: str) -> str | None:
        """The 64-bit register of the SASS registers ``lo`` (low) and ``hi`` (high)."""
        aligned = self.pair_reg(lo)
        prefix = "UR" if lo.startswith("UR") else "R"
        if aligned is not None and hi == f"{prefix}{int(lo[len(prefix):]) + 1}":
            return aligned.name
        if not (lo.startswith(prefix) and hi.startswith(prefix)
                and lo[len(prefix):].isdigit() and hi[len(prefix):].isdigit()):
            return None
        name = f"%{prefix.lower()}p{lo[len(prefix):]}_{hi[len(prefix):]}"
        self.types[name] = "b64"
        return name

    # ------------------------------------------------------------------ labels
    def label_of(self, operand) -> str | None:
        return operand.name if type(operand) is Symbol and operand.name in self.by_label \
            else None

    def block_of_label(self, name: str):
        return self.by_label.get(name)


def _register_number(name: str) -> tuple[str, int]:
    prefix = name.rstrip("0123456789")
    digits = name[len(prefix):]
    return prefix, int(digits) if digits else -1


def _known_values(tags: dict[str, tuple]) -> dict[str, tuple]:
    """What the division matcher may take as known at a block entry: constant-bank words,
    special registers fixed for the thread, constants."""
    known = {}
    for name, fact in tags.items():
        if fact[0] == "cb":
            known[name] = ("cb", 0, fact[1])
        elif fact[0] == "sr":
            known[name] = ("sr", fact[1])
        elif fact[0] == "k":
            value = fact[1] & 0xFFFFFFFF
            known[name] = ("imm", value)
    return known


def _half_pairs(tags: dict[str, tuple]) -> dict[tuple[str, str], str]:
    """``{(lo, hi): value}`` for every low and high register holding the halves of one
    64-bit value (a high register may pair with several low ones)."""
    los: dict[str, list[str]] = {}
    his: dict[str, list[str]] = {}
    for name, fact in tags.items():
        if fact[0] == "v":
            (los if fact[2] == "lo" else his).setdefault(fact[1], []).append(name)
    return {(lo, hi): value for value, names in los.items() for lo in names
            for hi in his.get(value, ())}


def _pairings(tags: dict[str, tuple]) -> list[tuple[str, str, str]]:
    """``(lo, hi, value)`` for the SASS registers holding the halves of 64-bit values.

    Copies of a pointer leave several registers holding the same half (``R0`` and ``R16``
    both the low word of ``%rd16``); every low register with any high register makes the
    value, so they are paired: aligned pairs first (``R16:R17``), then the remaining
    registers in number order, which is the same in every predecessor of a join.
    """
    los: dict[str, list[str]] = {}
    his: dict[str, list[str]] = {}
    for name, fact in tags.items():
        if fact[0] == "v":
            (los if fact[2] == "lo" else his).setdefault(fact[1], []).append(name)
    result = []
    for value in sorted(los):
        lo_names = sorted(los[value], key=_register_number)
        hi_names = sorted(his.get(value, ()), key=_register_number)
        if not hi_names:
            continue
        unpaired = []
        for lo in lo_names:
            prefix, number = _register_number(lo)
            aligned = f"{prefix}{number + 1}"
            if number >= 0 and number % 2 == 0 and aligned in hi_names:
                hi_names.remove(aligned)
                result.append((lo, aligned, value))
            else:
                unpaired.append(lo)
        for lo, hi in zip(unpaired, hi_names, strict=False):
            result.append((lo, hi, value))
    return result


def _declarations(types: dict[str, str]) -> list[RegisterDecl]:
    grouped: dict[str, list[str]] = {}
    for name, kind in types.items():
        grouped.setdefault(kind, []).append(name)
    # Types without the dot, as the PTX parser records them (``.reg .pred`` → ``pred``):
    # the analysis tells predicates from values by this name.
    return [RegisterDecl(kind, tuple(names)) for kind, names in sorted(grouped.items())]


def lift_kernel(function: Function, module: Module | None = None,
                every_instruction: bool = False) -> LiftedFunction:
    """Lift one SASS function, keeping the SASS origin of every lifted instruction.

    Subroutine calls are inlined first (:mod:`kernelcheck.sass.inline`) and spill slots of
    the stack frame are then read as registers (:mod:`kernelcheck.sass.frame`); ``origin``
    names the instructions of ``function`` itself, the copy of a subroutine's instruction
    by the instruction it was copied from.

    Parameters
    ----------
    function : Function
        A SASS function (upper-case opcodes) with its parameter layout.
    module : Module, optional
        The SASS module holding it.
    every_instruction : bool
        Lift every instruction, also those whose results no address, predicate or atomic
        can read (by default they are left unlifted, and a later read of what they wrote
        reads an opaque value: :mod:`kernelcheck.sass.relevance`).

    Returns
    -------
    LiftedFunction
    """
    inlined = promote_stack_slots(inline_subroutines(function))
    lifted = Lifter(inlined.function, module, inlined.refused, inlined.summarized,
                    inlined.divisions, every_instruction).lift()
    if inlined.function is function:
        return lifted
    table = inlined.origin
    origin = tuple(table[k] if 0 <= k < len(table) else -1 for k in lifted.origin)
    return LiftedFunction(lifted.function, origin, lifted.reasons)


def lift_function(function: Function, module: Module | None = None) -> Function:
    """The PTX form of a SASS function (see the module documentation).

    Parameters
    ----------
    function : Function
        A SASS function parsed by :mod:`kernelcheck.sass.function`.
    module : Module, optional
        Its module, so local subroutines (``CALL.REL``) can be inspected.

    Returns
    -------
    Function
        The same name, kind, parameters and directives; a body of PTX-style instructions
        over virtual registers, with the SASS labels kept.

    Examples
    --------
    >>> from kernelcheck.binary.nvdisasm import SassFunction, SassInstruction
    >>> from kernelcheck.ir.nodes import Param
    >>> from kernelcheck.sass.function import function_from_sass
    >>> sass = function_from_sass(SassFunction("k", (
    ...     SassInstruction(0, "S2R R0, SR_TID.X"),
    ...     SassInstruction(16, "LDC.64 R2, c[0x0][0x210]"),
    ...     SassInstruction(32, "IMAD.WIDE R2, R0, 0x4, R2"),
    ...     SassInstruction(48, "STG.E [R2.64], R0"),
    ...     SassInstruction(64, "EXIT"))),
    ...     params=(Param("param_0", "b64", 0),),
    ...     directives=(("EIATTR_PARAM_CBANK", (0, 0x210, 8)),))
    >>> [i.full_opcode for i in lift_function(sass).instructions
    ...  if i.opcode in ("ld", "mul", "st")]
    ['ld.param.u64', 'mul.wide.s32', 'st.global.b32']
    """
    return lift_kernel(function, module).function


def lift_module(module: Module) -> Module:
    """A module of the lifted kernels of a SASS module (device functions are left out:
    calls to them are handled at the call sites)."""
    items = tuple(lift_function(k, module) for k in module.kernels)
    return Module(module.version, module.target, module.address_size,
                  module_variables(module.kernels) + items, module.filename)


def module_variables(functions) -> tuple[VariableDecl, ...]:
    """The module-scope ``.global`` variables whose addresses the functions read from
    constant bank 4 (``CBANK_OBJECTS``), declared so that the lifted module names them as
    a PTX module does (:class:`~kernelcheck.analysis.terms.Global`)."""
    names = sorted({name for f in functions for name in bank_objects(f).values()})
    return tuple(VariableDecl("global", name, "b8") for name in names)


_ = (Immediate, SourcePos, is_predicate)
