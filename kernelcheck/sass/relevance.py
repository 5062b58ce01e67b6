"""Which register arithmetic of a SASS function can change what the analysis concludes.

The idempotency analysis reads values in three places only: the addresses of memory
accesses, the predicates that decide which instructions run (branch conditions, guards of
accesses and of the instructions that compute them), and the operands of atomics (an
``exch`` of a launch-invariant value is idempotent in effect; an atomic whose old value is
used is not). The value a plain store writes never decides a verdict. Most instructions
of a kernel compute such values: the math of an elementwise functor, the reduction of a
softmax, the accumulators of a matrix product.

:func:`irrelevant_instructions` finds the register-only instructions whose results reach
none of those places: a backward slice, computed as a liveness analysis over the control
flow graph, where a register is *relevant* at a point when some path from there reads it
in a relevant place before writing it again. An instruction is relevant when it writes a
relevant register, or is not a pure register operation (global and generic memory,
calls, barriers, anything the operand tables do not know), or reads the old value of an
atomic. A guarded write does not end a register's relevance (the old value flows on when
the guard is false). A call reads the registers of the lifter's summary of it (none for a
register-only subroutine, whose results are opaque; the operands of ptxas's 64-bit
division); any other call, every register. A call of a register-only subroutine whose
results nothing relevant reads is left out like a register-only instruction.

Branch conditions are relevant only where the branch decides something relevant, by
control dependence: a branch (or guarded exit) is relevant when a block whose execution
it decides (one that does not post-dominate it, up to its immediate post-dominator) holds
a relevant instruction or a relevant branch. The slice and the set of relevant branches
grow together to a fixpoint. So the data-dependent branches of a math library routine
(the slow path of a double-precision division, the range reduction of a sine), which
decide only which arithmetic computes a stored value, are left to an opaque choice, and
the comparisons and arithmetic that fed them are left out.

Stores to the stack and to shared memory (``STL``, ``STS``, ``STSM``) are never relevant:
the analysis records no access to memory private to one execution of the kernel, and loads
from it (``LDL``, ``LDS``, ``LDSM``) give opaque values; those loads are relevant only for
their results (and ``LDSM``, whose results are opaque whatever its address, then only for
its guard).

The lifter leaves each irrelevant instruction unlifted (:mod:`kernelcheck.sass.lift`): the
registers it writes lose the lifter's facts and are marked stale, and a lifted
instruction that reads a stale register reads an opaque value. That is sound whatever this
module concludes: an opaque value stands for any value, so a wrong answer here could only
cost precision, never make a verdict unsound. The one flow-insensitive fact the analysis
draws from the lifted code, whether an atomic's old value is read at all, is kept by
keeping every instruction that reads an atomic's destination.

>>> from kernelcheck.binary.nvdisasm import SassFunction, SassInstruction
>>> from kernelcheck.ir.nodes import Param
>>> from kernelcheck.sass.function import function_from_sass
>>> sass = function_from_sass(SassFunction("k", (
...     SassInstruction(0, "S2R R0, SR_TID.X"),
...     SassInstruction(16, "LDC.64 R2, c[0x0][0x210]"),
...     SassInstruction(32, "I2F R5, R0"),
...     SassInstruction(48, "FMUL R5, R5, 0.5"),
...     SassInstruction(64, "IMAD.WIDE R2, R0, 0x4, R2"),
...     SassInstruction(80, "STG.E [R2.64], R5"),
...     SassInstruction(96, "EXIT"))),
...     params=(Param("param_0", "b64", 0),),
...     directives=(("EIATTR_PARAM_CBANK", (0, 0x210, 8)),))
>>> sorted(sass.instructions[k].opcode for k in irrelevant_instructions(sass))
['FMUL', 'I2F']
"""

from __future__ import annotations

from dataclasses import replace
from functools import cache

import networkx as nx

from kernelcheck.ir.cfg import ENTRY, EXIT
from kernelcheck.ir.dominance import post_dominators
from kernelcheck.ir.nodes import Function, Instruction, MemoryRef, Register
from kernelcheck.ir.operands import SASS_KNOWN_OPCODES, defs, uses
from kernelcheck.sass.lift_memory import REGISTER_ONLY
from kernelcheck.sass.lift_state import block_successors

__all__ = ["PURE_OPCODES", "irrelevant_instructions", "opaque_results", "written_registers"]

#: Instructions that only compute registers from registers (and immediates or constant
#: bank operands): no memory access, no control flow, no effect outside their
#: destinations. Only these, and the register-only opcodes the operand tables do not
#: describe (:data:`~kernelcheck.sass.lift_memory.REGISTER_ONLY`: the matrix products),
#: may be left unlifted.
PURE_OPCODES = frozenset("""
IADD3 IMAD IMUL IMNMX IABS LEA LOP3 SHF SHL SHR SEL SGXT BMSK BREV FLO POPC PRMT ISETP IDP
IDP4A VIADD VIADDMNMX VIMNMX VIMNMX3 IMNMX3 MOV MOV32I IADD IADD32I
FADD FADD32I FMUL FMUL32I FFMA FFMA32I FMNMX FMNMX3 FSEL FSET FSETP FCHK FSWZADD MUFU HADD2
HMUL2 HFMA2 HMNMX2 HSETP2 HSET2 DADD DMUL DFMA DMNMX DSETP FRND
F2F F2I I2F I2I F2IP I2FP F2FP SHFL S2R S2UR CS2R R2UR REDUX VOTE VOTEU MATCH P2R R2P PLOP3
PSETP UFLO UPOPC UBREV UPRMT USHF USEL UMOV UIADD3 UIMAD ULEA ULOP3 UISETP UPLOP3 USGXT
UBMSK
""".split()) & SASS_KNOWN_OPCODES

#: Stores whose data the analysis never reads (global and generic stores keep the value
#: only for atomics; shared and local loads give opaque values): only the address and the
#: guard are relevant.
_PLAIN_STORES = frozenset({"STG", "ST", "STS", "STL"})
_ATOMICS = frozenset({"ATOMG", "ATOM", "ATOMS", "RED", "REDG"})
#: Plain accesses to memory private to one execution of the kernel (the stack, shared
#: memory; what stack slots could be read as registers is already a register,
#: :mod:`kernelcheck.sass.frame`): the analysis records no access there, and their loads
#: give opaque values. A store there is never relevant, a load only for its result.
_PRIVATE_STORES = frozenset({"STS", "STL", "STSM"})
_PRIVATE_LOADS = frozenset({"LDS", "LDL", "LDSM"})
#: Opaque-valued instructions that the recognition of an integer division by a runtime
#: value reads (:mod:`kernelcheck.sass.division`): the lifter replaces the quotient they
#: compute by a ``div`` of the operands they read, so those operands stay relevant.
_DIVISION_STEPS = frozenset({"I2F", "MUFU", "F2I", "IABS"})
_ALWAYS_TRUE = ("PT", "UPT")
#: Instructions that only steer control (or the convergence of a warp): they compute no
#: value and touch no memory. A block holding nothing else is relevant only if what it
#: decides is.
_CONTROL = frozenset({"BRA", "JMP", "EXIT", "KILL", "BSSY", "BSYNC", "NOP", "YIELD",
                      "WARPSYNC", "BREAK"})
#: Those that can end a block with a choice between successors.
_DECISIONS = frozenset({"BRA", "JMP", "EXIT", "KILL"})


def irrelevant_instructions(function: Function,
                            calls: dict[int, tuple[str, ...]] | None = None,
                            opaque_calls: dict[int, tuple[str, ...]] | None = None
                            ) -> dict[int, tuple[str, ...]]:
    """The instructions of the SASS ``function`` whose results cannot reach an address, a
    predicate that decides what runs, or an atomic (see the module): their indices, each
    with the registers it writes.

    ``calls`` gives, for the calls the lifter models by a summary (by instruction index),
    the registers the summary reads; any other call is taken to read every register.
    ``opaque_calls`` gives, of those, the calls whose summary only makes registers opaque,
    with those registers: such a call may be left out like a register-only instruction."""
    if not function.instructions:
        return {}
    steps = _Steps(function, calls or {}, opaque_calls or {})
    blocks = function.blocks
    successors = block_successors(function)
    predecessors: dict[int, list[int]] = {b.index: [] for b in blocks}
    for source, targets in successors.items():
        for target in targets:
            predecessors[target].append(source)
    plans = {b.index: steps.of_block(b) for b in blocks}
    # Where control may go from each block, a guarded exit's way out included.
    choices = {b.index: successors.get(b.index, ()) + (
        (EXIT,) if _exits_when_guarded(b.last) else ()) for b in blocks}
    decisions = {b.index: steps.decision_reads(b) for b in blocks
                 if len(choices[b.index]) > 1}
    decisions = {index: reads for index, reads in decisions.items() if reads is not None}
    controlled = control_dependence(blocks, choices) if decisions else {}
    always = {index for index, plan in plans.items()
              if any(not droppable and not control for _, droppable, control, *_ in plan)}
    decided: set[int] = set()  # the blocks whose branch decides a relevant block
    live_in = {b.index: 0 for b in blocks}

    def live_out(index: int) -> int:
        live = decisions[index] if index in decided else 0
        for target in successors.get(index, ()):
            live |= live_in[target]
        return live

    pending = [b.index for b in blocks]
    while True:
        queued = set(pending)
        while pending:
            index = pending.pop()
            queued.discard(index)
            live = _scan(plans[index], live_out(index), None)
            if live != live_in[index]:
                live_in[index] = live
                for source in predecessors[index]:
                    if source not in queued:
                        queued.add(source)
                        pending.append(source)
        relevant = always | decided
        relevant.update(index for index, plan in plans.items() if index not in relevant
                        and _keeps(plan, live_out(index)))
        pending = [index for index in decisions if index not in decided
                   and not controlled[index].isdisjoint(relevant)]
        if not pending:
            break
        decided.update(pending)
    dropped: list[int] = []
    for block in blocks:
        _scan(plans[block.index], live_out(block.index), dropped)
    return {index: steps.written[index] for index in dropped}


def control_dependence(blocks, successors: dict[int, tuple]) -> dict[int, set[int]]:
    """For every block with more than one successor, the blocks whose execution its
    branch decides (they are control dependent on it): those on a path from one of its
    successors up the post-dominator tree, short of its own immediate post-dominator.
    A successor may be :data:`~kernelcheck.ir.cfg.EXIT` (a guarded exit).

    Blocks that cannot reach an exit get a virtual edge to it
    (:func:`~kernelcheck.ir.dominance.post_dominators`), which can only add dependences."""
    graph = nx.DiGraph()
    graph.add_node(EXIT)
    graph.add_edge(ENTRY, blocks[0].index)
    for block in blocks:
        targets = successors.get(block.index, ())
        graph.add_edges_from((block.index, target) for target in targets)
        if not targets:
            graph.add_edge(block.index, EXIT)
    ipdom = post_dominators(graph)
    result: dict[int, set[int]] = {}
    for index, targets in successors.items():
        if len(targets) < 2:
            continue
        stop = ipdom.get(index, EXIT)
        region: set[int] = set()
        for node in targets:
            while node != stop and node != EXIT and node not in region:
                region.add(node)
                node = ipdom.get(node, EXIT)
        result[index] = region
    return result


def _exits_when_guarded(instr: Instruction | None) -> bool:
    """Whether ``instr`` ends the thread when its guard holds and falls through when not."""
    return instr is not None and instr.opcode in ("EXIT", "KILL") and (
        instr.guard is not None and instr.guard.register not in _ALWAYS_TRUE)


class _Steps:
    """Each instruction of a function reduced to what the liveness needs, registers as bits
    of an integer: ``(index, droppable, control, written, killed, read)``, last
    instruction first."""

    def __init__(self, function: Function, calls: dict[int, tuple[str, ...]],
                 opaque_calls: dict[int, tuple[str, ...]]):
        self.bits: dict[str, int] = {}
        self.calls = calls
        #: Per instruction index: the registers it writes, and those it reads.
        self.written: dict[int, tuple[str, ...]] = {}
        self.read: dict[int, tuple[str, ...]] = {}
        atomic_results: list[str] = []
        for instr in function.instructions:
            written = self.written[instr.index] = opaque_calls.get(
                instr.index) or written_registers(instr)
            self.read[instr.index] = uses(instr)
            if instr.opcode in _ATOMICS:
                atomic_results.extend(n for n in written if n not in ("RZ", "URZ"))
        self.atomic_results = self.mask(atomic_results)
        self.opaque_calls = opaque_calls
        self._every: int | None = None

    def every(self) -> int:
        """Every register the function names."""
        if self._every is None:
            self._every = self.mask(name for names in (*self.written.values(),
                                                       *self.read.values()) for name in names)
        return self._every

    def mask(self, names) -> int:
        bits = self.bits
        value = 0
        for name in names:
            bit = bits.get(name)
            if bit is None:
                bit = bits[name] = 1 << len(bits)
            value |= bit
        return value

    def of_block(self, block) -> list[tuple[int, bool, bool, int, int, int]]:
        plan = []
        last = block.last
        for instr in reversed(block.instructions):
            guard = instr.guard
            if guard is not None and guard.register in _ALWAYS_TRUE:
                if guard.negated:
                    continue  # @!PT: never runs
                guard = None
            index = instr.index
            written = self.mask(self.written[index])
            read = self.read[index]
            opcode = instr.opcode
            if opcode == "CALL":
                # What a call writes it may also leave as it was: nothing is killed.
                reads = self.every() if index not in self.calls else self.mask(
                    self.calls[index])
                if guard is not None:
                    reads |= self.mask((guard.register,))
                droppable = index in self.opaque_calls and index in self.calls
                plan.append((index, droppable, False, written, 0, reads))
                continue
            control = opcode in _CONTROL
            if control and instr is last and opcode in _DECISIONS:
                # What decides the branch is read only when it decides something
                # relevant: see :func:`irrelevant_instructions`, :meth:`decision_reads`.
                plan.append((index, False, True, written, 0, 0))
                continue
            used = self.mask(read)
            droppable = (opcode in PURE_OPCODES and instr.known or opcode in REGISTER_ONLY
                         or opcode in _PRIVATE_LOADS or opcode in _PRIVATE_STORES
                         ) and not used & self.atomic_results
            if opcode == "P2R":
                used = self.mask(_saved_predicates(instr))
            elif opcode in opaque_results() or opcode in REGISTER_ONLY:
                used = 0 if guard is None else self.mask((guard.register,))
            elif opcode in _PLAIN_STORES:
                used = self.mask(_address_reads(instr))
            plan.append((index, droppable, control, written,
                         written if guard is None else 0, used))
        return plan

    def decision_reads(self, block) -> int | None:
        """The registers the branch (or guarded exit) that ends ``block`` reads to decide
        where control goes; None when the block does not end with one."""
        last = block.last
        if last is None or last.opcode not in _DECISIONS:
            return None
        guard = last.guard
        if guard is not None and guard.register in _ALWAYS_TRUE and guard.negated:
            return None
        return self.mask(self.read[last.index])


def _scan(plan, live: int, dropped: list[int] | None) -> int:
    """One block backwards from ``live`` at its end: the registers relevant at its start;
    the irrelevant instructions are added to ``dropped``."""
    for index, droppable, _, written, killed, read in plan:
        if droppable and not live & written:
            if dropped is not None:
                dropped.append(index)
            continue
        live = (live & ~killed) | read
    return live


def _keeps(plan, live: int) -> bool:
    """Whether a block, with ``live`` relevant at its end, keeps one of its droppable
    instructions (one that computes something relevant)."""
    dropped: list[int] = []
    _scan(plan, live, dropped)
    return len(dropped) < sum(1 for step in plan if step[1])


def _saved_predicates(instr: Instruction) -> tuple[str, ...]:
    """What ``P2R Rd, PR, Ra, mask`` reads: the predicates the mask selects (the lifter
    numbers a saved predicate by its value, :func:`~kernelcheck.sass.lift_state.
    predicate_value`), ``Ra`` and the guard; every register it names for other forms."""
    from kernelcheck.ir.nodes import Immediate

    operands = instr.operands
    mask = operands[3] if len(operands) == 4 else None
    if type(mask) is not Immediate or mask.kind != "int" or not (
            type(operands[1]) is Register and operands[1].name == "PR"):
        return uses(instr)
    saved = tuple(f"P{k}" for k in range(7) if mask.value >> k & 1)
    rest = tuple(n for n in uses(replace(instr, operands=(operands[0], operands[2])))
                 if not n.startswith("P"))
    guard = (instr.guard.register,) if instr.guard is not None else ()
    return saved + rest + guard


def written_registers(instr: Instruction) -> tuple[str, ...]:
    """The registers ``instr`` writes; for the register-only opcodes the operand tables do
    not describe, as many consecutive registers as the lifter makes opaque."""
    count = REGISTER_ONLY.get(instr.opcode)
    first = instr.operands[0] if instr.operands else None
    if count is None or type(first) is not Register or first.name[:1] != "R" or (
            not first.name[1:].isdigit()):
        return defs(instr)
    return tuple(f"R{int(first.name[1:]) + k}" for k in range(count))


@cache
def opaque_results() -> frozenset[str]:
    """The pure opcodes, and the loads of private memory (``LDSM``), that no rule of the
    lifter translates: it gives their destinations opaque values whatever their operands
    hold (:func:`~kernelcheck.sass.lift_memory.opaque_instruction`), so only their guard
    can change what they give (the division steps aside)."""
    from kernelcheck.sass.lift_rules import TRANSLATED_OPCODES

    return (PURE_OPCODES | _PRIVATE_LOADS) - TRANSLATED_OPCODES - _DIVISION_STEPS


def _address_reads(instr: Instruction) -> tuple[str, ...]:
    """The registers a store reads for its address (and its guard), not for its data."""
    return uses(replace(instr, operands=tuple(o for o in instr.operands
                                              if type(o) is MemoryRef)))
