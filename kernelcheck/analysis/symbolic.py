"""Symbolic evaluation of a kernel: every global (or possibly global) memory access as terms.

The walk visits the blocks of the control-flow graph in reverse post-order, carrying for each
register the term of its value (:mod:`kernelcheck.analysis.terms`) and the *path guard*: the
branch conditions known to hold on every path to the block. Soundness rests on three rules:

* **Merges** keep a register's term when every incoming path agrees and otherwise take
  :class:`~kernelcheck.analysis.terms.Join` of the candidates (the value is one of them); the
  guard keeps only the literals common to every incoming path (a weaker fact).
* **Loops**: at a natural-loop header each register the loop defines becomes a
  :class:`~kernelcheck.analysis.terms.LoopVar`; after the walk, a register whose value at
  every latch is ``LoopVar + step`` (``step`` loop-invariant) is a basic induction variable
  ``init + step*k`` with ``k`` the iteration count, every other one is opaque. The iteration
  count is bounded by an exit test ``x < bound`` in a block that dominates every latch: a
  further iteration starts only if that test held, whatever other exits the loop has. Guard
  literals established before the loop stay true in it: they are facts about values the loop
  does not change.
* **Device-function calls** are inlined: the ``.param`` call ABI (ISA §9.7.12.4; ``st.param``
  into call-scope variables, ``call``, ``ld.param`` of the return variable) binds the callee's
  parameters to the caller's terms and its return value back.

Anything the analysis cannot model that may write memory (indirect calls, surface stores,
bulk tensor copies, distributed shared memory, unknown opcodes, ...) is reported in
``unmodelled`` and makes the kernel ``not_proven``.
"""

from __future__ import annotations

from dataclasses import dataclass

import networkx as nx

from kernelcheck.analysis import semantics
from kernelcheck.analysis.effects import CONTROL, PRIVATE, UNMODELLED, effect_of
from kernelcheck.analysis.induction import derived_value
from kernelcheck.analysis.lower import apply_guards, guard_literals
from kernelcheck.analysis.provenance import window_pointer
from kernelcheck.analysis.stack import (
    forwarded_value,
    frame_slot,
    local_symbols,
    may_write_local,
    merge_slots,
    slot_of_address,
    store,
    store_value,
)
from kernelcheck.analysis.terms import (
    UNDEFINED_LEAF,
    Add,
    BitAnd,
    BitOr,
    Bound,
    Cmp,
    Const,
    Div,
    Global,
    Iter,
    Join,
    LoopVar,
    Min,
    Mul,
    Occurrences,
    Opaque,
    PAnd,
    Param,
    ParamAt,
    PConst,
    PNot,
    POpaque,
    POr,
    Pred,
    Rem,
    Shr,
    Special,
    Term,
    TripMax,
    Wrap,
    add,
    contains,
    has_kind,
    kind_bits,
    mul,
    neg,
    node_kinds,
    opaque_leaves,
    pred_not,
    rejoin_words,
    substitute,
    wrap,
)
from kernelcheck.ir.cfg import ENTRY, control_flow_graph
from kernelcheck.ir.inlining import (
    MAX_CALL_DEPTH,
    MAX_INLINED_INSTRUCTIONS,
    depth_reason,
    recursion_reason,
    size_reason,
)
from kernelcheck.ir.nodes import (
    VECTOR_ELEMENTS,
    Address,
    Function,
    Immediate,
    Instruction,
    Module,
    NegatedPredicate,
    ParenList,
    PredicatePair,
    Register,
    SpecialRegister,
    Symbol,
    VectorOperand,
)
from kernelcheck.ir.operands import access_width, defs, memory_spaces, uses

__all__ = ["SymbolicAccess", "SymbolicKernel", "symbolic_kernel"]

_THREAD_SPECIALS = {"%tid", "%ntid", "%ctaid", "%nctaid"}
_MAX_CALL_DEPTH = MAX_CALL_DEPTH


def resolve_nested(mapping: dict) -> dict:
    """``mapping`` (loop variable -> value) with the loop variables inside each value
    replaced by their own resolved values, each value resolved once and all of them through
    one memo, so the results share their sub-terms (resolving each value on its own gives
    every value its own copy of the parts they share, and the terms of an unrolled loop
    nest then grow with every substitution). A value that reaches itself through others (a
    cycle) keeps the loop variable where the cycle closes.

    >>> outer, inner = LoopVar(0, "R1"), LoopVar(8, "R2")
    >>> done = resolve_nested({outer: add(Param("n", 0, 4), Const(1)), inner: add(outer, Const(2))})
    >>> done[inner]
    Add(args=(Param(name='n', offset=0, size=4), Const(value=3)))
    >>> cyclic = resolve_nested({outer: add(inner, Const(1)), inner: add(outer, Const(2))})
    >>> has_kind(cyclic[outer], LoopVar)
    True
    """
    resolved: dict = {}
    active: set = set()
    memo: dict = {}

    class Lookup:
        def __contains__(self, t) -> bool:
            return type(t) is LoopVar and t in mapping and t not in active

        def __getitem__(self, var):
            return resolve(var)

    lookup = Lookup()

    def no_loop_variable(t) -> bool:
        return not has_kind(t, LoopVar)

    def resolve(var):
        if var in resolved:
            return resolved[var]
        value = mapping[var]
        if has_kind(value, LoopVar):
            active.add(var)
            value = substitute(value, lookup, memo, keep=no_loop_variable)
            active.discard(var)
        resolved[var] = value
        return value

    return {var: resolve(var) for var in mapping}


@dataclass(frozen=True, slots=True)
class SymbolicAccess:
    """One global (or possibly global) memory access with its symbolic address.

    ``kind`` is ``read``, ``write`` or ``atomic``; ``address`` the byte address term (a
    64-bit unsigned wrap); ``guard`` the conjunction of path literals under which it runs;
    ``value`` the stored value or atomic operand; ``atomic_op`` the ``atom``/``red``
    operation; ``result_used`` whether an atomic's returned old value is read afterwards;
    ``call_path`` the indices of the ``call`` instructions it was inlined through.
    """

    instr: Instruction
    function: str
    kind: str
    space: str
    address: Term
    width: int
    guard: tuple[Pred, ...]
    value: Term | None = None
    atomic_op: str | None = None
    result_used: bool = False
    call_path: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class SymbolicKernel:
    """The result of :func:`symbolic_kernel`: accesses and what could not be modelled."""

    function: Function
    accesses: tuple[SymbolicAccess, ...]
    unmodelled: tuple[str, ...]
    #: Guard literals that hold in every run that completes: the conditions of branches
    #: whose other side only reaches ``call __assertfail`` (which aborts the launch).
    assumed: frozenset = frozenset()
    #: ``(value, address)`` of every load of global, generic or constant memory: the opaque
    #: value it defines and the address term it reads (the rule for ``atom.exch``).
    loads: tuple = ()


class _State:
    """Per-block facts: register terms, predicates, the path guard, window pointers, and the
    local-stack facts of :mod:`kernelcheck.analysis.stack` (``frames``: registers holding a
    depot address; ``stack``: depot slot -> (stored term, width)); ``flags``: registers
    holding a predicate as one of two constants (``selp.u32 %r, 1, 0, %p``), name ->
    ``(predicate, bits, value if true, value if false)``."""

    __slots__ = ("regs", "preds", "guard", "shared", "frames", "stack", "flags")

    def __init__(self, regs, preds, guard, shared, frames=None, stack=None, flags=None):
        self.regs = regs
        self.preds = preds
        self.guard = guard
        self.shared = shared
        self.frames = {} if frames is None else frames
        self.stack = {} if stack is None else stack
        self.flags = {} if flags is None else flags

    def copy(self) -> _State:
        return _State(dict(self.regs), dict(self.preds), self.guard, set(self.shared),
                      dict(self.frames), dict(self.stack), dict(self.flags))


def _ends_thread(module: Module, instr: Instruction) -> bool:
    """Whether ``instr`` always ends the launch: an unguarded ``trap``, or a call of an
    external ``__assertfail`` (a failed device-side assertion)."""
    if instr.guard is not None:
        return False
    if instr.opcode == "trap":
        return True
    if instr.opcode != "call":
        return False
    target = next((o for o in instr.operands if type(o) is Symbol), None)
    if target is None or target.name != "__assertfail":
        return False
    try:
        return module.get_function(target.name).body is None
    except KeyError:
        return True


def _where(function: Function, instr: Instruction) -> str:
    line = f" (line {instr.loc.line})" if instr.loc is not None else ""
    return f"{instr.full_opcode} #{instr.index} in {function.name}{line}"


class _Walker:
    """Symbolic evaluation of one function body (kernels, and callees inlined into them)."""

    def __init__(self, module: Module, function: Function, depth: int, loop_base: int,
                 param_terms: dict | None, call_path: tuple[int, ...], entry_guard=(),
                 keys: list[int] | None = None, entry_registers=None):
        self.module = module
        self.function = function
        # Values of the callee's .reg parameters (ISA 5.1.6.4): (registers, predicates).
        self.entry_registers = entry_registers or ({}, {})
        # Generic and global addresses wrap at the module's address size (ISA 11.1.3,
        # .address_size): with 32, `[%r1+8]` reaches (%r1 + 8) mod 2**32.
        self.address_bits = 32 if module.address_size == 32 else 64
        self.depth = depth
        self.loop_base = loop_base
        self.param_terms = param_terms  # callee: name -> {offset: term}; kernel: None
        self.call_path = call_path
        self.entry_guard = tuple(entry_guard)
        # [next loop key base, instructions inlined so far]: shared by every walker of one
        # kernel (kernelcheck.ir.inlining bounds the second).
        self.keys = keys if keys is not None else [len(function.blocks) + 1, 0]
        #: The functions being inlined, outermost first (a recursive call is not inlined).
        self.chain: tuple[str, ...] = (function.name,)
        self.accesses: list[SymbolicAccess] = []
        self.unmodelled: list[str] = []
        #: Set by an instruction that ends the thread (``call __assertfail``) in the block
        #: being walked.
        self.stopped = False
        self.assumed: set = set()
        self.returns: dict[tuple[str, int], list[Term]] = {}
        self.last_returns: dict[tuple[str, int], list[Term]] = {}
        self.callparams: dict[str, dict[int, Term]] = {}
        # Flag registers (see _State) stored to a call's parameters or return value, so
        # that a flag passed through the .param space stays a flag where it is loaded.
        self.param_flags: dict[str, dict[int, tuple]] = {}
        self.callparam_flags: dict[str, dict[int, tuple | None]] = {}
        self.return_flags: dict[tuple[str, int], list] = {}
        self.last_return_flags: dict[tuple[str, int], list] = {}
        #: Per instruction of ``function`` (by ``id``): the registers it reads and writes,
        #: found once; the walk asks again at every step over it.
        self.registers_of = _registers_of(function)
        #: The ``cache`` of :func:`apply_guards` for the facts of ``selp`` conditions.
        self.selp_facts: dict = {}
        self.used_regs, self.ret_slots = _uses_and_returns(function, param_terms is not None,
                                                           self.registers_of)
        # Atomics whose old value is only returned: access index -> return slots it went to.
        self.pending: list[tuple[int, tuple]] = []
        self.last_pending: dict[tuple[str, int], list[int]] = {}
        self.local_syms = local_symbols(function)
        self.loop_writes_local: dict[int, bool] = {}
        #: Tag suffix of opaque values defined in this (inlined) body.
        self.suffix = "/" + ".".join(map(str, call_path)) if call_path else ""
        self.reads = 0
        self.loads: list[tuple[Term, Term]] = []

    # ------------------------------------------------------------------ driver
    def run(self) -> None:
        cfg = control_flow_graph(self.function)
        try:
            self._run(cfg)
        finally:
            # A graph refers to itself through its cached views: emptied, the blocks it
            # names are freed with their function instead of by the cyclic collector.
            cfg.clear()

    def _run(self, cfg: nx.DiGraph) -> None:
        function = self.function
        idom = nx.immediate_dominators(cfg, ENTRY)
        order = [n for n in nx.dfs_postorder_nodes(cfg, ENTRY)][::-1]
        back = {(u, v) for u, v in cfg.edges if _dominates(idom, v, u)}
        rank = {n: k for k, n in enumerate(order)}
        if any(u in rank and v in rank and rank[v] <= rank[u] and (u, v) not in back
               for u, v in cfg.edges):
            # A retreating edge that is not a back edge: the walk below would drop the
            # values flowing along it.
            self.unmodelled.append(f"irreducible control flow in {function.name}")
            return
        loops = _natural_loops(cfg, back)
        block_of = {b.index: b for b in function.blocks}
        self.block_local = _block_local_names(function, self.registers_of)
        loop_defs = {h: self._defined_in(body, block_of) for h, body in loops.items()}
        self.loop_writes_local = {h: any(may_write_local(i) for b in body
                                         for i in block_of[b].instructions)
                                  for h, body in loops.items()}
        # Window pointers (shared/local provenance) of loop-carried registers are assumed at
        # a header from the entry paths, then checked at every latch; a failed assumption is
        # dropped and the walk repeated. The set of dropped assumptions only grows, so this
        # ends after at most one walk per loop-carried register.
        demoted: dict[int, set[str]] = {h: set() for h in loops}
        while True:
            out, assumed = self._walk(cfg, order, back, loops, loop_defs, block_of, demoted)
            failed = False
            for latch, header in back:
                if latch not in out or header not in assumed:
                    continue
                lost = assumed[header] - out[latch].shared
                if lost:
                    demoted[header] |= lost
                    failed = True
            if not failed:
                break
        self.loop_defs = loop_defs
        mapping = self._resolve_loops(cfg, loops, back, idom, out)
        if mapping:
            self._substitute(mapping)

    def _walk(self, cfg, order, back, loops, loop_defs, block_of, demoted):
        """One pass over the blocks in reverse post-order: ``(out states, assumed windows)``."""
        self.accesses, self.unmodelled, self.loads = [], [], []
        self.returns, self.last_returns, self.callparams = {}, {}, {}
        self.return_flags, self.last_return_flags, self.callparam_flags = {}, {}, {}
        self.pending, self.last_pending = [], {}
        out: dict = {}
        assumed: dict[int, set[str]] = {}
        stopping = {node for node in order if node not in (ENTRY, "exit") and any(
            _ends_thread(self.module, i) for i in block_of[node].instructions)}
        # A block every path from which ends the thread stops too (an assertion's failing
        # path split into several blocks by labels nobody branches to).
        grown = True
        while grown:
            grown = False
            for node in order:
                if node in (ENTRY, "exit") or node in stopping:
                    continue
                successors = list(cfg.successors(node))
                if successors and all(s in stopping for s in successors):
                    stopping.add(node)
                    grown = True
        for node in order:
            if node in (ENTRY, "exit"):
                if node == ENTRY:
                    regs, preds = self.entry_registers
                    out[ENTRY] = _State(dict(regs), dict(preds), self.entry_guard, set())
                continue
            preds = [p for p in cfg.predecessors(node) if (p, node) not in back and p in out]
            incoming = []
            for p in preds:
                edge = self._edge_state(cfg, p, node, out[p])
                if len(edge.guard) > len(out[p].guard):
                    others = [q for q in cfg.successors(p) if q != node]
                    if others and all(q in stopping for q in others):
                        self.assumed.add(edge.guard[-1])
                incoming.append(edge)
            if not incoming:
                continue
            state = _merge(incoming)
            if node in loops:
                regs, predicates = loop_defs[node]
                for name in regs:
                    state.regs[name] = LoopVar(self.loop_base + node, name)
                    state.flags.pop(name, None)
                for name in predicates:
                    state.preds[name] = POpaque(f"loop{node}:{name}")
                state.shared -= demoted[node]
                assumed[node] = state.shared & set(regs)
                # Depot facts from the entry paths hold at the header only if no iteration
                # can change them.
                for name in regs:
                    state.frames.pop(name, None)
                if self.loop_writes_local[node]:
                    state.stack.clear()
            self.block = node
            self.stopped = False
            for instr in block_of[node].instructions:
                self._step(instr, state)
                if self.stopped or (instr.opcode == "trap" and instr.guard is None):
                    self.stopped = True  # trap aborts the launch, like a failed assertion
                    break
            if not self.stopped:
                # The block's own temporaries are dead past it: joins and copies of the
                # states after it need not carry them.
                for name in self.block_local.get(node, ()):
                    state.regs.pop(name, None)
                    state.preds.pop(name, None)
                    state.flags.pop(name, None)
                    state.frames.pop(name, None)
                    state.shared.discard(name)
                out[node] = state  # a thread that stopped reaches no successor
        return out, assumed

    def _defined_in(self, body, block_of):
        regs, predicates = set(), set()
        types = self.function.register_types
        for b in body:
            local = self.block_local.get(b, ())
            for instr in block_of[b].instructions:
                for name in self._defs(instr):
                    if name in local:
                        continue  # never carried from one iteration to the next
                    if types.get(name) == "pred":
                        predicates.add(name)
                    else:
                        regs.add(name)
        return sorted(regs), sorted(predicates)

    def _edge_state(self, cfg, src, dst, state: _State) -> _State:
        if src == ENTRY:
            return state
        block = cfg.nodes[src]["block"]
        last = block.last
        kinds = cfg.edges[src, dst]["kinds"]
        if last is None or last.guard is None or last.opcode not in ("bra", "ret", "exit") or (
                len(kinds) != 1):
            return state
        literal = self._guard_pred(last, state)
        if "fallthrough" in kinds:
            literal = pred_not(literal)
        new = state.copy()
        new.guard = state.guard + (literal,)
        return new

    def _guard_pred(self, instr: Instruction, state: _State) -> Pred:
        p = state.preds.get(instr.guard.register, POpaque(instr.guard.register))
        return pred_not(p) if instr.guard.negated else p

    # ------------------------------------------------------------------ operands
    def _fresh(self, tag: str, bits: int = 64, memory: bool = False) -> Opaque:
        """An opaque value of one definition: equal terms must mean equal values (the
        lattice forms, Z3 and the induction identities all rely on it), so the tag names the
        defining instruction and the inlined call path, and reads of non-deterministic
        registers (``%clock``) get a tag of their own each."""
        return Opaque(tag + self.suffix, bits, memory)

    def _value(self, operand, state: _State, bits: int = 64):
        kind = type(operand)
        if kind is Register:
            if operand.name in state.preds:
                return state.preds[operand.name]
            return state.regs.get(operand.name, self._fresh(f"undef:{operand.name}", bits))
        if kind is Immediate:
            if operand.kind == "int" or (operand.kind in ("f32", "f64") and isinstance(
                    operand.value, int)):
                # An exact float form gives the register that bit pattern.
                return Const(operand.value)
            return Opaque(f"float:{operand.value!r}", bits)
        if kind is SpecialRegister:
            if operand.base in _THREAD_SPECIALS or operand.name == "%laneid":
                return Special(operand.name)
            self.reads += 1  # clocks and the like: every read a value of its own
            return self._fresh(f"{operand.name}#{self.reads}", 32)
        if kind is NegatedPredicate:
            return pred_not(state.preds.get(operand.register.name, POpaque("p")))
        if kind is Symbol:
            return Global(operand.name) if self._global_variable(operand.name) else Opaque(
                f"&{operand.name}", 64)
        self.reads += 1
        return self._fresh(f"operand#{self.reads}", bits)

    def _global_variable(self, name: str) -> bool:
        """Whether ``name`` is a module-scope ``.global`` variable (not one of this
        function's own declarations, which may shadow it)."""
        if any(v.name == name for v in self.function.local_variables):
            return False
        return any(v.name == name and v.space == "global" for v in self.module.variables)

    def _address(self, operand: Address, state: _State) -> Term | None:
        base = operand.base
        if type(base) is Register:
            value = state.regs.get(base.name)
            if value is None:
                return None
            return add(value, Const(operand.offset))
        if type(base) is Symbol and self._global_variable(base.name):
            return add(Global(base.name), Const(operand.offset))
        return None

    # ------------------------------------------------------------------ instructions
    def _step(self, instr: Instruction, state: _State) -> None:
        op = instr.opcode
        effect = effect_of(instr) if instr.known else None
        if effect is None:
            self.unmodelled.append(f"unknown instruction {_where(self.function, instr)}")
            return
        mods = instr.modifiers
        if effect == UNMODELLED:
            self.unmodelled.append(f"unmodelled instruction {_where(self.function, instr)}")
            return
        if op == "multimem":
            # A multimem address is a multicast object's: the bytes it reaches also have
            # unicast global addresses (ISA 9.7.9.16), so address terms cannot tell overlap.
            self.unmodelled.append(f"multimem access (multicast addresses alias global "
                                   f"memory) {_where(self.function, instr)}")
            return
        if op in ("st", "red") and "async" in mods:
            # st.async / red.async write the shared memory of another CTA of the cluster
            # (ISA 9.7.9.12, 9.7.13.7), as st.shared::cluster does.
            self.unmodelled.append(
                f"distributed shared memory access {_where(self.function, instr)}")
            return
        if op == "call":
            self._call(instr, state)
            return
        if op == "st" and "bulk" in mods:
            # st.bulk (ISA 9.7.9.11) initialises shared::cta memory only.
            effect = PRIVATE
        if effect == PRIVATE:
            # Shared memory, tensor memory or mbarrier objects only (kernelcheck.analysis.
            # effects): no global access; what it defines came from memory.
            self._clobber_defs(instr, state, memory=True)
            return
        if op == "tensormap":
            self._tensormap(instr, state)
            return
        spaces = memory_spaces(instr)
        if spaces:
            self._memory(instr, state, spaces)
            return
        if effect == CONTROL:
            if op in ("bar", "barrier"):
                # bar.red / barrier.red write a reduction over the CTA (ISA §9.7.13.1): a
                # value of other threads, opaque here; the other forms define nothing.
                self._clobber_defs(instr, state, memory=False)
            return
        self._define(instr, state)

    def _tensormap(self, instr: Instruction, state: _State) -> None:
        """tensormap.replace (ISA 9.7.9.27) rewrites the 128-byte tensor map at ``[addr]`` in
        .global or .shared::cta memory (generic when neither is named);
        tensormap.cp_fenceproxy copies one from shared memory to ``[dst]`` in global memory."""
        mods = instr.modifiers
        if "replace" in mods and "shared::cta" in mods or not instr.operands:
            return
        space = "global" if "global" in mods else "generic"
        self._record(instr, state, "write", space, instr.operands[0], 128,
                     Opaque(f"tensormap@{instr.index}", 64))

    def _defs(self, instr: Instruction) -> tuple[str, ...]:
        found = self.registers_of.get(id(instr))
        return found[1] if found is not None else defs(instr)

    def _define(self, instr: Instruction, state: _State) -> None:
        targets = self._defs(instr)
        if not targets:
            return
        types = self.function.register_types
        first = instr.operands[0]
        srcs = [self._value(o, state) for o in instr.operands[1:]]
        if instr.opcode == "setp" and type(first) is PredicatePair:
            p = semantics.compare_predicate(instr, srcs[0], srcs[1]) if len(srcs) >= 2 and all(
                isinstance(s, Term) for s in srcs[:2]) else POpaque(f"setp@{instr.index}")
            p = self._flag_test(instr, state, srcs) or p
            if len(srcs) == 3 and isinstance(srcs[2], Pred):
                p = semantics.combine_setp(instr, p, srcs[2])
            self._assign_pred(instr, state, first.first.name, p)
            if type(first.second) is Register:
                self._assign_pred(instr, state, first.second.name, pred_not(p))
            return
        if instr.opcode == "setp" and type(first) is Register:
            p = semantics.compare_predicate(instr, srcs[0], srcs[1]) if all(
                isinstance(s, Term) for s in srcs[:2]) else POpaque(f"setp@{instr.index}")
            p = self._flag_test(instr, state, srcs) or p
            if len(srcs) == 3 and isinstance(srcs[2], Pred):
                p = semantics.combine_setp(instr, p, srcs[2])
            self._assign_pred(instr, state, first.name, p)
            return
        if len(targets) == 1 and types.get(targets[0]) == "pred":
            self._assign_pred(instr, state, targets[0],
                              semantics.predicate_op(instr, srcs) if all(
                                  isinstance(s, Pred) for s in srcs) else POpaque("pred"))
            return
        value = None
        if len(targets) == 1 and all(isinstance(s, Term | Pred) for s in srcs):
            value = semantics.evaluate_instruction(instr, srcs)
            if instr.opcode == "add" and type(value) is Add:
                value = rejoin_words(value)
            if instr.opcode == "selp" and type(value) is Join and len(srcs) == 3 and \
                    isinstance(srcs[2], Pred):
                bits = semantics._bits(semantics.instruction_type(instr))
                facts = self.selp_facts
                value = Join((_gated(_with_fact(srcs[0], srcs[2], bits, facts), srcs[2]),
                              _gated(_with_fact(srcs[1], pred_not(srcs[2]), bits, facts),
                                     pred_not(srcs[2]))))
        for k, name in enumerate(targets):
            if types.get(name) == "pred":
                self._assign_pred(instr, state, name, POpaque(f"{instr.opcode}@{instr.index}"))
                continue
            term = value
            if term is None:
                made = semantics._opaque(instr, srcs,
                                         semantics._bits(semantics.instruction_type(instr)))
                # One opaque value per destination: the halves of an unpacked register
                # are different values.
                term = self._fresh(made.tag + (f".{k}" if k else ""), made.bits, made.memory)
            window = len(targets) == 1 and window_pointer(instr, state.shared, srcs)
            self._assign(instr, state, name, term, window)
            if instr.opcode == "selp" and instr.guard is None and len(srcs) == 3 and all(
                    type(x) is Const for x in srcs[:2]) and isinstance(srcs[2], Pred):
                bits = semantics._bits(semantics.instruction_type(instr))
                if bits:
                    state.flags[name] = (srcs[2], bits, srcs[0].value, srcs[1].value)
        if len(targets) == 1:
            slot = frame_slot(instr, state.frames, self.local_syms)
            if slot is not None:
                state.frames[targets[0]] = slot

    def _flag_test(self, instr: Instruction, state: _State, srcs) -> Pred | None:
        """The predicate of ``setp.eq``/``setp.ne`` comparing a flag register (a ``selp``
        of two constants on ``p``, see :class:`_State`) with a constant: ``p``, ``!p`` or a
        constant, where the comparison alone would only see the join of the two values.

        Exact: the register holds the first constant exactly when ``p`` held at the
        ``selp`` (a predicate is a fact about values, true wherever they flow), and a
        comparison of ``bits`` bits or fewer sees the low bits of that constant.
        """
        ops = instr.operands
        cmp = next((m for m in instr.modifiers if m in ("eq", "ne")), None)
        ty = semantics.instruction_type(instr) or ""
        bits = semantics._bits(ty)
        if cmp is None or not bits or ty[:1] not in "bus" or len(srcs) < 2 or len(ops) < 3:
            return None
        for reg, other in ((ops[1], srcs[1]), (ops[2], srcs[0])):
            flag = state.flags.get(reg.name) if type(reg) is Register else None
            if flag is None or type(other) is not Const or flag[1] < bits:
                continue
            p, _, if_true, if_false = flag
            mask = (1 << bits) - 1
            k = other.value & mask
            hit_true, hit_false = (if_true & mask) == k, (if_false & mask) == k
            if hit_true and hit_false:
                eq = PConst(True)
            elif not hit_true and not hit_false:
                eq = PConst(False)
            else:
                eq = p if hit_true else pred_not(p)
            out = eq if cmp == "eq" else pred_not(eq)
            if len(srcs) == 3 and isinstance(srcs[2], Pred):
                out = semantics.combine_setp(instr, out, srcs[2])
            return out
        return None

    def _assign(self, instr, state: _State, name: str, term: Term, window: bool = False) -> None:
        """Bind ``name`` to ``term``; ``window``: the value provably points into the shared
        or local window (:mod:`kernelcheck.analysis.provenance`). Every binding goes through
        here, so a register never keeps a window property its new value lacks."""
        if instr.guard is not None:
            # The guarded write may not happen: the old value (if any) stays possible, and
            # the window property must hold for both. Each is possible only where its
            # side of a launch-constant guard holds (GATE).
            window = window and name in state.shared
            old = state.regs.get(name)
            if old is not None and not (_from_undefined(old) and not _from_undefined(term)):
                p = self._guard_pred(instr, state)
                kept, new = _gated(old, pred_not(p)), _gated(term, p)
                term = _join([kept, new]) if kept != new else new
        state.regs[name] = term
        state.frames.pop(name, None)  # re-established by _define for depot addresses
        state.flags.pop(name, None)  # re-established by _define for selp of constants
        if window:
            state.shared.add(name)
        else:
            state.shared.discard(name)

    def _assign_pred(self, instr, state: _State, name: str, p: Pred) -> None:
        if instr.guard is not None:
            p = POpaque(f"guarded@{instr.index}")
        state.preds[name] = p

    # ------------------------------------------------------------------ memory
    def _memory(self, instr: Instruction, state: _State, spaces) -> None:
        op = instr.opcode
        mods = instr.modifiers
        if may_write_local(instr):
            key = slot_of_address(instr.operands[0], spaces[0], state.frames,
                                  self.local_syms) if op == "st" and instr.operands else None
            if key is None:
                state.stack.clear()
            else:
                store(state.stack, key, access_width(instr),
                      store_value(instr, lambda o: self._value(o, state)))
        if op == "ld" and spaces[0] == "param":
            self._ld_param(instr, state)
            return
        if op == "st" and spaces[0] == "param":
            address = instr.operands[0]
            if type(address) is Address and type(address.base) is Symbol:
                source = instr.operands[1]
                value = self._value(source, state)
                flag = state.flags.get(source.name) if type(source) is Register and (
                    instr.guard is None) and (access_width(instr) or 0) * 8 == state.flags.get(
                    source.name, (None, 0))[1] else None
                if self.param_terms is not None and address.base.name.startswith(
                        self.function.name) or "retval" in address.base.name:
                    self.returns.setdefault((address.base.name, address.offset), []).append(
                        value)
                    self.return_flags.setdefault((address.base.name, address.offset),
                                                 []).append(flag)
                else:
                    self.callparams.setdefault(address.base.name, {})[address.offset] = value
                    self.callparam_flags.setdefault(address.base.name, {})[
                        address.offset] = flag
            return
        if op == "wmma":
            # wmma.load/store (ISA 9.7.14.4): rows of a matrix at a stride, bytes not
            # modelled. A load from global memory reads bytes the kernel may write; a store
            # there writes at addresses the analysis does not follow.
            if any(s in ("global", "generic") for s in spaces):
                if "store" in mods:
                    self.unmodelled.append(
                        f"matrix store to global memory {_where(self.function, instr)}")
                    return
                self._record(instr, state, "read", "matrix", None, 0, None)
            self._clobber_defs(instr, state)
            return
        if op == "cp":
            self._copy(instr, state, spaces)
            return
        if "shared::cluster" in mods:
            self.unmodelled.append(
                f"distributed shared memory access {_where(self.function, instr)}")
            return
        if op == "discard" and spaces[0] in ("global", "generic") and instr.operands:
            # discard.global.L2 [a], 128 (ISA 9.7.9.13): the 128 bytes at a become undefined,
            # as if written with an unknown value.
            self._record(instr, state, "write", spaces[0], instr.operands[0], 128,
                         Opaque(f"discard@{instr.index}", 64))
            return
        if op in ("prefetch", "prefetchu", "discard", "applypriority"):
            return
        space = spaces[0]
        if op in ("tex", "tld4", "suld"):
            # Texture and surface fetches read global memory through an object handle
            # (ISA §9.7.10): the bytes are not modelled, so the read has no known range.
            self._record(instr, state, "read", space, None, 0, None)
            self._clobber_defs(instr, state, memory=True)
            return
        if op in ("ld", "ldu"):
            target = instr.operands[1] if len(instr.operands) > 1 else None
            where = self._address(target, state) if type(target) is Address else None
            if space in ("global", "generic") and type(target) is Address:
                self._record(instr, state, "read", space, target, access_width(instr), None)
            self._clobber_defs(instr, state, memory=True)
            if where is not None and space in ("global", "generic", "const"):
                self.loads.extend((state.regs[name], where) for name in defs(instr)
                                  if name in state.regs)
            forwarded = forwarded_value(state.stack, slot_of_address(
                target, space, state.frames, self.local_syms), instr)
            if forwarded is not None:
                self._assign(instr, state, instr.operands[0].name, forwarded)
            return
        if op == "st":
            target = instr.operands[0]
            if space in ("global", "generic"):
                if type(target) is not Address:
                    self.unmodelled.append(f"store without address {_where(self.function, instr)}")
                    return
                value = self._value(instr.operands[-1], state)
                self._record(instr, state, "write", space, target, access_width(instr), value)
            return
        if op in ("atom", "red"):
            is_red = op == "red"
            target = instr.operands[0 if is_red else 1]
            if space in ("global", "generic"):
                operands = instr.operands[1:] if is_red else instr.operands[2:]
                value = [self._value(o, state) for o in operands]
                atomic = next((m for m in mods if m in _ATOMIC_OPS), "unknown")
                dest = instr.operands[0].name if not is_red and type(
                    instr.operands[0]) is Register else None
                used = dest is not None and dest in self.used_regs
                before = len(self.accesses)
                self._record(instr, state, "atomic", space, target, access_width(instr),
                             tuple(value), atomic, used)
                if dest is not None and not used and dest in self.ret_slots and (
                        len(self.accesses) > before):
                    # Only returned (a -G wrapper such as __iAtomicMax): the caller decides.
                    self.pending.append((before, self.ret_slots[dest]))
            if not is_red:
                self._clobber_defs(instr, state, memory=True)
            return
        self._clobber_defs(instr, state, memory=True)

    def _copy(self, instr: Instruction, state: _State, spaces) -> None:
        """The copies ``cp.*`` (ISA 9.7.9.25): destination space first, source second.

        ``cp.async.{ca,cg}`` reads ``cp-size`` bytes of global memory (fewer with
        ``src-size``: the recorded read covers them); ``cp.async.bulk`` reads or writes
        ``size`` bytes (an immediate, else the extent is unknown); the ``.tensor`` forms
        reach global memory at addresses the tensor map holds: a load is a read of unknown
        bytes, a store a write the analysis does not follow; ``cp.reduce.async.bulk`` into
        global memory is a reduction it does not follow. Shared destinations (also
        ``.shared::cluster``, where bulk loads land) are private to the execution.
        """
        mods = instr.modifiers
        ops = instr.operands
        dst = spaces[0]
        src = spaces[1] if len(spaces) > 1 else None
        where = _where(self.function, instr)
        if "prefetch" in mods:
            return  # cp.async.bulk.prefetch{.tensor}: a cache hint, no data moved
        if "reduce" in mods:
            if dst in ("global", "generic"):
                self.unmodelled.append(f"bulk reduction into global memory {where}")
            return
        if "tensor" in mods:
            if dst in ("global", "generic"):
                self.unmodelled.append(f"bulk tensor store to global memory {where}")
            elif src in ("global", "generic"):
                self._record(instr, state, "read", "tensor", None, 0, None)
            return
        if src is None or len(ops) < 3:
            return  # cp.async.bulk.prefetch, cp.async.mbarrier.arrive: no data moved
        if "bulk" in mods:
            size = ops[2]
            width = size.value if type(size) is Immediate and isinstance(
                size.value, int) and size.value > 0 else None
        else:
            width = access_width(instr)
        if dst in ("global", "generic"):
            if width is None:
                self.unmodelled.append(f"bulk copy to global memory of unknown size {where}")
                return
            self._record(instr, state, "write", dst, ops[0], width,
                         Opaque(f"copy@{instr.index}", 64, True))
        if src in ("global", "generic"):
            if width is None:
                self._record(instr, state, "read", "tensor", None, 0, None)
            else:
                self._record(instr, state, "read", src, ops[1], width, None)

    def _clobber_defs(self, instr, state: _State, memory: bool = True) -> None:
        for k, name in enumerate(self._defs(instr)):
            if self.function.register_types.get(name) == "pred":
                state.preds[name] = POpaque(f"{instr.opcode}@{instr.index}")
            else:
                self._assign(instr, state, name, self._fresh(
                    f"{instr.opcode}@{instr.index}" + (f".{k}" if k else ""), 64, memory))

    def _returned_atomics(self, indices, name: str) -> None:
        """The old values of the atomics ``indices`` were loaded into ``name`` after a call:
        used if ``name`` is used, pending again if it is only returned, else unused."""
        for k in indices:
            if name in self.used_regs or name not in self.ret_slots:
                if name in self.used_regs:
                    a = self.accesses[k]
                    self.accesses[k] = SymbolicAccess(
                        a.instr, a.function, a.kind, a.space, a.address, a.width, a.guard,
                        a.value, a.atomic_op, True, a.call_path)
            else:
                self.pending.append((k, self.ret_slots[name]))

    def _ld_param(self, instr: Instruction, state: _State) -> None:
        address = instr.operands[1]
        width = access_width(instr) or 8
        target = instr.operands[0]
        names = [target.name] if type(target) is Register else [
            e.name for e in getattr(target, "elements", ()) if type(e) is Register]
        if type(address) is Address and type(address.base) is Register:
            offset = self._kernel_param_offset(address, state)
            if offset is not None:
                for k, name in enumerate(names):
                    self._assign(instr, state, name,
                                 self._param_value(add(offset, Const(k * width)), width))
                return
        if type(address) is not Address or type(address.base) is not Symbol:
            for name in names:
                self._assign(instr, state, name, self._fresh(f"ld.param@{instr.index}"))
            return
        symbol = address.base.name
        for k, name in enumerate(names):
            offset = address.offset + k * width
            term: Term | None = None
            flag = None
            param = self.function.get_param(symbol)
            if self.param_terms is None and param is not None:
                field = symbol if offset == 0 else f"{symbol}+{offset}"
                term = Param(field, param.offset + offset, width)
            elif self.param_terms is not None and symbol in self.param_terms:
                term = self.param_terms[symbol].get(offset)
                flag = self.param_flags.get(symbol, {}).get(offset)
            elif (symbol, offset) in self.last_returns:
                self._returned_atomics(self.last_pending.get((symbol, offset), ()), name)
                values = self.last_returns[(symbol, offset)]
                term = values[0] if len(set(values)) == 1 else Join(tuple(values))
                flags = self.last_return_flags.get((symbol, offset), [])
                # A flag only where every return path stored the same one.
                if flags and len(set(flags)) == 1:
                    flag = flags[0]
            if term is None:
                term = self._fresh(f"ld.param@{instr.index}.{k}", width * 8)
                flag = None
            self._assign(instr, state, name, term)
            if flag is not None and instr.guard is None and flag[1] == width * 8:
                state.flags[name] = flag

    def _kernel_param_offset(self, address: Address, state: _State) -> Term | None:
        """The byte offset in the kernel's parameter buffer that ``ld.param [%r+imm]``
        reads, when ``%r`` is the address of one of the kernel's parameters plus a term.

        ``mov.b64 %r, k_param_0`` gives ``%r`` the parameter's address in the ``.param``
        space (ISA §5.1.6.1: kernel parameters are addressable, their addresses taken with
        ``mov``); the walker holds it as the opaque ``&k_param_0``, fixed for the launch.
        ``ld.param`` through ``&P + X`` then reads the buffer at ``P.offset + X``. Only in
        the kernel itself (an inlined callee's ``.param`` space is its own frame), and only
        when ``&P`` occurs once with coefficient one (anything else is not an address of
        the buffer). Whether the offset lies inside the buffer is decided at launch
        (``PARAMX``).
        """
        if self.param_terms is not None:
            return None
        term = self._address(address, state)
        if term is None:
            return None
        found = None
        rest = []
        for part in term.args if type(term) is Add else (term,):
            param = self._param_symbol(part)
            if param is not None and found is None:
                found = param
            else:
                rest.append(part)
        if found is None or any(contains(r, lambda t: self._param_symbol(t) is not None)
                                for r in rest):
            return None
        return add(Const(found.offset), *rest)

    def _param_symbol(self, term: Term):
        """The kernel parameter whose address the opaque ``term`` is, or None."""
        if type(term) is not Opaque or not term.tag.startswith("&"):
            return None
        return self.function.get_param(term.tag[1:])

    def _param_value(self, offset: Term, width: int) -> Term:
        """The ``width``-byte value of the parameter buffer at ``offset``: a :class:`Param`
        (named after the parameter holding it) when the offset is a constant inside one."""
        if type(offset) is Const:
            for p in self.function.params:
                if p.offset <= offset.value and offset.value + width <= p.offset + max(p.size,
                                                                                       1):
                    rel = offset.value - p.offset
                    return Param(p.name if rel == 0 else f"{p.name}+{rel}", offset.value,
                                 width)
        return ParamAt(offset, width)

    def _record(self, instr, state: _State, kind, space, operand, width, value,
                atomic_op=None, used=False) -> None:
        if space == "generic" and type(operand) is Address and type(operand.base) is Register \
                and operand.base.name in state.shared:
            return  # generic address derived from a shared/local window: not global
        if type(operand) is Address and type(operand.base) is Symbol:
            # A variable as the address (also of a generic access: its generic address, ISA
            # 6.4.1) is in the variable's state space; the function's own declarations come
            # first, as they shadow the module's.
            name = operand.base.name
            decl = next((v for v in self.function.local_variables if v.name == name), None) \
                or next((v for v in self.module.variables if v.name == name), None)
            if decl is not None and decl.space in ("shared", "local", "const"):
                return
        if not width and space in ("global", "generic"):
            # Without a width the byte range is unknown: never record an empty access.
            self.unmodelled.append(f"access width not modelled {_where(self.function, instr)}")
            return
        address = self._address(operand, state) if type(operand) is Address else None
        if address is None:
            address = self._fresh(f"address@{instr.index}")
        guard = state.guard
        if instr.guard is not None:
            guard = guard + (self._guard_pred(instr, state),)
        self.accesses.append(SymbolicAccess(
            instr, self.function.name, kind, space, wrap(address, self.address_bits, False),
            width or 0,
            guard, value, atomic_op, used, self.call_path))

    # ------------------------------------------------------------------ calls
    def _call(self, instr: Instruction, state: _State) -> None:
        operands = instr.operands
        rets: tuple = ()
        if operands and type(operands[0]) is ParenList:
            rets, operands = operands[0].elements, operands[1:]
        if not operands or type(operands[0]) is not Symbol:
            self.unmodelled.append(f"indirect call {_where(self.function, instr)}")
            return
        try:
            callee = self.module.get_function(operands[0].name)
        except KeyError:
            callee = None
        if (callee is None or callee.body is None) and operands[0].name == "__assertfail":
            # A failed device-side assertion: the runtime records the message and aborts
            # the launch (cudaErrorAssert, sticky: no run that reaches it is resumed or
            # re-executed). It writes no memory of the program; an unconditional call ends
            # the path, so what follows it holds the asserted condition.
            self.stopped = instr.guard is None
            return
        if callee is None or callee.body is None:
            self.unmodelled.append(
                f"call of {operands[0].name} without a body {_where(self.function, instr)}")
            return
        if callee.name in self.chain:
            self.unmodelled.append(f"{recursion_reason(callee.name)} at "
                                   f"{_where(self.function, instr)}")
            return
        if self.depth >= _MAX_CALL_DEPTH:
            self.unmodelled.append(f"{depth_reason()} at {_where(self.function, instr)}")
            return
        if self.keys[1] + len(callee.instructions) > MAX_INLINED_INSTRUCTIONS:
            self.unmodelled.append(f"{size_reason()} at {_where(self.function, instr)}")
            return
        self.keys[1] += len(callee.instructions)
        args = operands[1].elements if len(operands) > 1 and type(
            operands[1]) is ParenList else ()
        bindings: dict[str, dict[int, Term]] = {}
        binding_flags: dict[str, dict[int, tuple]] = {}
        registers: dict = {}
        predicates: dict = {}
        for param, arg in zip(callee.params, args, strict=False):
            if param.space == "reg":
                # A .reg parameter holds the argument's value (ISA 5.1.6.4); a vector one
                # (.reg .v2 .u32 p) is its element registers p.x, p.y, bound one by one to
                # the elements of the caller's vector register. A parameter left unbound
                # (shapes that do not match) reads as an unknown value of its own.
                for inner, outer in _register_bindings(param, arg):
                    if callee.register_types.get(inner) == "pred":
                        predicates[inner] = state.preds[outer.name] if type(
                            outer) is Register and outer.name in state.preds else POpaque(
                            f"arg:{inner}@{instr.index}{self.suffix}")
                    else:
                        value = self._value(outer, state)
                        registers[inner] = value if isinstance(value, Term) else \
                            self._fresh(f"arg:{inner}@{instr.index}")
            elif type(arg) is Symbol:
                bindings[param.name] = dict(self.callparams.get(arg.name, {}))
                flags = {o: f for o, f in self.callparam_flags.get(arg.name, {}).items()
                         if f is not None}
                if flags:
                    binding_flags[param.name] = flags
        guard = state.guard + ((self._guard_pred(instr, state),) if instr.guard else ())
        # Loop keys (header block + base) must differ between every inlined body, so the
        # base comes from a counter shared by all walkers of the kernel.
        base = self.keys[0]
        self.keys[0] += len(callee.blocks) + 1
        inner = _Walker(self.module, callee, self.depth + 1, base, bindings,
                        self.call_path + (instr.index,), guard, self.keys,
                        (registers, predicates))
        inner.chain = self.chain + (callee.name,)
        inner.param_flags = binding_flags
        inner.run()
        self.assumed |= inner.assumed
        self.loads.extend(inner.loads)
        first = len(self.accesses)
        self.accesses.extend(inner.accesses)
        self.unmodelled.extend(inner.unmodelled)
        returns: dict = {}
        for ret_param, ret_arg in zip(callee.return_params, rets, strict=False):
            for (name, offset), values in inner.returns.items():
                if name == ret_param.name and type(ret_arg) is Symbol:
                    returns[(ret_arg.name, offset)] = values
        self.last_returns = returns
        self.last_return_flags = {}
        for ret_param, ret_arg in zip(callee.return_params, rets, strict=False):
            for (name, offset), flags in inner.return_flags.items():
                if name == ret_param.name and type(ret_arg) is Symbol:
                    self.last_return_flags[(ret_arg.name, offset)] = flags
        self.last_pending = {}
        for k, slots in inner.pending:
            for ret_param, ret_arg in zip(callee.return_params, rets, strict=False):
                for name, offset in slots:
                    if name == ret_param.name and type(ret_arg) is Symbol:
                        self.last_pending.setdefault((ret_arg.name, offset), []).append(
                            first + k)
        for ret_param, ret_arg in zip(callee.return_params, rets, strict=False):
            if ret_param.space != "reg":
                continue
            # A .reg return value: not followed through the callee, so opaque, one unknown
            # value per register written (each element of a vector register; every register
            # of the operand when its shape does not match the return parameter's).
            targets = [e for e in (ret_arg.elements if type(ret_arg) is VectorOperand
                                   else (ret_arg,)) if type(e) is Register]
            for target in targets:
                tag = f"call@{instr.index}:{target.name}"
                if self.function.register_types.get(target.name) == "pred":
                    state.preds[target.name] = POpaque(tag + self.suffix)
                else:
                    self._assign(instr, state, target.name, self._fresh(tag, 64))
        self.callparams = {}
        self.callparam_flags = {}
        if any(may_write_local(i) for i in callee.instructions):
            state.stack.clear()  # the callee may write this frame through an escaped pointer

    # ------------------------------------------------------------------ loops
    def _resolve_loops(self, cfg, loops, back, idom, out) -> dict:
        mapping: dict = {}
        ivs: dict = {}
        for header in loops:
            latches = [u for (u, v) in back if v == header]
            if any(latch not in out for latch in latches) or header not in out:
                continue
            key = self.loop_base + header
            others = []
            for name in self.loop_defs[header][0]:
                var = LoopVar(key, name)
                latch_values = [out[latch].regs.get(name) for latch in latches]
                step = _step_of(var, latch_values, key)
                init = _init_of(cfg, header, back, out, name)
                if step is None or init is None:
                    others.append((var, name, init, latch_values))
                else:
                    ivs[var] = (init, step)
            for lo, hi, syn, init, step in _word_pairs(others, key):
                # A 64-bit value kept in two 32-bit loop registers (module notes of
                # kernelcheck.analysis.induction): one induction variable for the pair.
                ivs[syn] = (init, step)
                mapping[lo] = syn
                mapping[hi] = Shr(wrap(syn, 64, False), 32)
            others = [o for o in others if o[0] not in mapping]
            candidates = []
            for u in ivs:
                if u.header == key:
                    u_latches = [out[latch].regs.get(u.register) for latch in latches]
                    if u_latches[0] is not None:
                        candidates.append((u, u_latches))
            # Which candidates' latch values occur in each register's: the registers of
            # an unrolled loop share most of their (large) latch terms, walked once here.
            occurrences = Occurrences(u_latches[0] for _, u_latches in candidates)
            for var, name, init, latch_values in others:
                found = _follows_iv(var, init, latch_values, candidates, occurrences, cfg,
                                    header, back, out)
                if found is not None:
                    mapping[var] = found
                    continue
                memory = any(v is not None and semantics.is_memory_value(v)
                             for v in latch_values)
                mapping[var] = self._fresh(f"loop-carried {name} at block {header}", 64,
                                           memory)
        # Trip counts from exit tests.
        trips: dict = {}
        for header, body in loops.items():
            key = self.loop_base + header
            latches = [u for (u, v) in back if v == header]
            trips[key] = self._tripmax(cfg, header, body, latches, idom, out, key, ivs)
        caps: dict = {}
        for var, (init, step) in ivs.items():
            k = Iter(var.header, trips.get(var.header, (None, ()))[0])
            value = add(init, _mul(step, k))
            bounds = [b for v, b in trips.get(var.header, (None, ()))[1] if v == var]
            if bounds:
                # Every value after the first passed each tested bound at the latch before.
                capped = value
                for bound in bounds:
                    capped = Bound(capped, None, add(bound, Const(-1)))
                value = Join((init, capped))
                caps[var] = value
            mapping[var] = value
        # A loop unrolled after a remainder loop: every first value leaves a multiple of
        # the unroll factor of iterations, so the unrolled accesses stay below the bound
        # (kernelcheck.analysis.unroll).
        for var in list(caps):
            refined = self._unrolled_cap(cfg, loops, back, out, var, ivs[var],
                                         trips.get(var.header, (None, ()))[1], mapping)
            if refined is not None:
                caps[var] = mapping[var] = refined
        # A loop that runs a counted number of iterations (a remainder loop counting down
        # ``T mod U``) over a variable the loop does not test: when its entry shows that
        # the count leaves the variable below a bound ``n`` it was tested against before
        # the loop, every value is below ``n`` (kernelcheck.analysis.unroll.prove_count).
        for var in ivs:
            if var in caps:
                continue
            refined = self._counted_cap(cfg, loops, back, out, var, ivs[var],
                                        trips.get(var.header, (None, ()))[0], mapping)
            if refined is not None:
                caps[var] = mapping[var] = refined
        # Induction variables moving in step with a capped one are expressed through it
        # (kernelcheck.analysis.induction: an identity of terms, so the cap bounds them too).
        for var, (init, step) in ivs.items():
            if var in caps:
                continue
            for tested, capped in caps.items():
                if tested.header != var.header:
                    continue
                derived = derived_value(init, step, *ivs[tested], capped)
                if derived is not None:
                    mapping[var] = derived
                    break
        # Resolve nested references (outer loop variables inside inner inits and steps).
        mapping = resolve_nested(mapping)
        for var, value in list(mapping.items()):
            if has_kind(value, LoopVar):
                mapping[var] = self._fresh(
                    f"unresolved loop value {var.register} of loop {var.header}")
        return mapping

    def _unrolled_cap(self, cfg, loops, back, out, var, iv, tests, mapping):
        """``Bound(value, None, n - 1 - (U-1)*s)`` for the capped induction variable ``var``
        (step ``U*s``, loop test ``x + U*s < n``) when :func:`kernelcheck.analysis.unroll.
        prove_entry` shows, for every path into the loop, that its first value leaves a
        multiple of ``U`` iterations of step ``s`` before ``n``; else ``None``.

        The paths are those into the last merge before the loop: the loop's one entry
        block and the straight chain of single-predecessor blocks above it end at a block
        ``M``; each predecessor of ``M`` gives the register's value on that path and the
        path's literals (with the chain's and the loop entry's), all with the loop values
        resolved."""
        from math import gcd

        from kernelcheck.analysis.induction import from_linear, linear
        from kernelcheck.analysis.unroll import prove_entry

        bounds = [b for v, b in tests if v == var]
        header = var.header - self.loop_base
        init, step = iv
        form = linear(step)
        factor = 0
        for c in form.values():
            factor = gcd(factor, c)
        if not bounds or header not in loops or factor < 2 or factor > 16:
            return None
        entries = [p for p in cfg.predecessors(header) if (p, header) not in back]
        if len(entries) != 1 or entries[0] == ENTRY or entries[0] not in out:
            return None
        chain = [entries[0]]
        while True:
            preds = list(cfg.predecessors(chain[-1]))
            if len(preds) != 1 or preds[0] == ENTRY or (preds[0], chain[-1]) in back or (
                    preds[0] in chain or chain[-1] in loops):
                break
            chain.append(preds[0])
        merge = chain[-1]
        name = var.register
        block_of = {b.index: b for b in self.function.blocks}
        if merge in loops or any(name in defs(i) for b in chain
                                 for i in block_of[b].instructions):
            return None
        entry_literals = self._edge_state(cfg, entries[0], header, out[entries[0]]).guard

        def resolved(t):
            for _ in range(4):
                if not has_kind(t, LoopVar):
                    break
                t = substitute(t, mapping)
            return t

        paths = []
        for q in cfg.predecessors(merge):
            if q == ENTRY or (q, merge) in back or q not in out:
                return None
            edge = self._edge_state(cfg, q, merge, out[q])
            first = edge.regs.get(name)
            if first is None:
                return None
            literals = [resolved(g) for g in edge.guard + entry_literals]
            first = resolved(first)
            if has_kind(first, LoopVar):
                return None
            paths.append(([g for g in literals if not has_kind(g, LoopVar)], first))
        for unroll in sorted({factor, 4, 2}, reverse=True):
            if factor % unroll or unroll < 2:
                continue
            stride = from_linear({m: c // unroll for m, c in form.items()})
            if prove_entry(paths, bounds[0], stride, unroll):
                return Bound(mapping[var], None,
                             add(bounds[0], Const(-1), mul(Const(1 - unroll), stride)))
        return None

    def _counted_cap(self, cfg, loops, back, out, var, iv, trip, mapping):
        """``Bound(value, None, n - 1)`` for the induction variable ``var`` of a loop whose
        count is ``trip`` (a :class:`TripMax` of another variable's test), when ``x < n``
        holds on the loop's one entry edge for the first value ``x`` of ``var`` and
        :func:`kernelcheck.analysis.unroll.prove_count` shows from that edge's literals that
        the iterations run leave ``x + k*s`` below ``n`` (``s`` the step of ``var``); else
        ``None``. The remainder loop of an unrolled grid-stride loop runs ``T mod U`` of its
        ``T`` iterations; the interval bound of that count over all threads would take a
        thread with fewer iterations past ``n``."""
        from kernelcheck.analysis.unroll import prove_count

        if type(trip) is not TripMax or has_kind(trip, LoopVar):
            return None
        header = var.header - self.loop_base
        if header not in loops:
            return None
        entries = [p for p in cfg.predecessors(header) if (p, header) not in back]
        if len(entries) != 1 or entries[0] == ENTRY or entries[0] not in out:
            return None
        init, step = iv
        if has_kind(init, LoopVar) or has_kind(step, LoopVar):
            return None
        literals = [g for g in self._edge_state(cfg, entries[0], header, out[entries[0]]).guard
                    if not has_kind(g, LoopVar)]

        def bare(t):
            return t.arg if type(t) is Wrap else t

        first = bare(init)
        for literal in guard_literals(literals):
            if literal.op == "lt" and bare(literal.a) == first:
                bound = literal.b
            elif literal.op == "gt" and bare(literal.b) == first:
                bound = literal.a
            else:
                continue
            if has_kind(bound, LoopVar):
                continue
            if prove_count(literals, trip, init, bound, step):
                value = add(init, _mul(step, Iter(var.header, trip)))
                return Bound(value, None, add(bound, Const(-1)))
        return None

    def _tripmax(self, cfg, header, body, latches, idom, out, key, ivs):
        """``(tripmax term, (iv var, bound) or None)`` from an exit test dominating the latches."""
        for block in sorted(body):
            if block not in out or not all(_dominates(idom, block, la) for la in latches):
                continue
            succs = list(cfg.successors(block))
            inside = [s for s in succs if s in body]
            outside = [s for s in succs if s not in body]
            if len(inside) != 1 or not outside:
                continue
            last = cfg.nodes[block]["block"].last
            if last is None or last.guard is None or last.opcode != "bra":
                continue
            stay = self._edge_state(cfg, block, inside[0], out[block]).guard[-1:]
            if not stay:
                continue
            # The loop continues only while every conjunct of the test holds (``i < n &&
            # i < chunk``): each one that is a loop test bounds the count on its own, and
            # the least of those bounds holds.
            trips, caps = [], []
            for literal in _conjuncts(stay[0]):
                shape = _loop_test(literal, key)
                if shape is None:
                    continue
                x, bound, mode = shape
                found = _iv_offset(x, ivs, key)
                scale = 1
                if found is None and type(x.arg) is Mul and len(x.arg.args) == 2 and type(
                        x.arg.args[0]) is Const and x.arg.args[0].value > 0:
                    # A multiple of the variable (``4*i < n``, SASS's test of a 64-bit
                    # index shifted left by 2): the tested values are ``k*(iv + c)``,
                    # congruent to the machine's as the unscaled ones are.
                    scale = x.arg.args[0].value
                    found = _iv_offset(Wrap(x.arg.args[1], x.bits, x.signed), ivs, key)
                if found is None:
                    continue
                var, c = found
                init, step = ivs[var]
                # Facts that hold on entry to the loop bound the first tested value
                # (``if (r != 0)`` before a count-down remainder loop).
                # The wrapped first value is congruent to the machine's; the evaluator
                # checks that no later tested value leaves the wrap range.
                first, tested_step = add(init, c), step
                if scale != 1:
                    first, tested_step = mul(Const(scale), first), mul(Const(scale), step)
                x0 = apply_guards(wrap(first, x.bits, x.signed), out[header].guard)
                trips.append(TripMax(x0, tested_step, bound, x.bits, x.signed, mode))
                if c == step and mode == "lt":
                    # Every value after the first passed the test: ``value < bound``, or
                    # ``value <= (bound - 1) / k`` for ``k*value < bound`` (the division
                    # truncates toward zero: for a negative bound it is the looser bound).
                    caps.append((var, bound if scale == 1 else add(
                        Div(add(bound, Const(-1)), Const(scale)), Const(1))))
            if not trips:
                continue
            trip = trips[0]
            for other in trips[1:]:
                trip = Min(trip, other)
            return trip, tuple(caps)
        return None, ()

    def _substitute(self, mapping: dict) -> None:
        # One memo for every term: the accesses share sub-terms, and so must their results.
        memo: dict = {}

        def sub(t):
            return substitute(t, mapping, memo)

        new = []
        for a in self.accesses:
            value = a.value
            if isinstance(value, tuple):
                value = tuple(sub(v) if isinstance(v, Term) else v for v in value)
            elif value is not None and isinstance(value, Term):
                value = sub(value)
            new.append(SymbolicAccess(
                a.instr, a.function, a.kind, a.space, sub(a.address), a.width,
                tuple(sub(g) for g in a.guard), value, a.atomic_op, a.result_used,
                a.call_path))
        self.accesses = new
        self.loads = [(sub(v), sub(w)) for v, w in self.loads]


_ATOMIC_OPS = ("add", "sub", "inc", "dec", "cas", "exch", "max", "min", "and", "or", "xor")


def _with_fact(term: Term, literal: Pred, bits: int, cache: dict | None = None) -> Term:
    """``term`` with the facts of ``literal`` attached, for the operand ``selp`` picks when
    ``literal`` holds: the picked value satisfies it, wherever the value flows afterwards.

    The facts are stated over ``Wrap(term, bits, s)``, congruent to the register modulo
    ``2**bits`` (the convention of :mod:`kernelcheck.analysis.terms`), so the bounded
    wrap may stand for the register. ``cache`` is the ``cache`` of :func:`apply_guards`,
    kept by the caller while the terms live: the ``selp`` of one function share their
    sub-terms, and a literal that shares no leaf with a term is not walked over it.
    """
    if not bits or not isinstance(term, Term):
        return term
    for signed in (True, False):
        w = wrap(term, bits, signed)
        bounded = apply_guards(w, (literal,), cache)
        if bounded != w:
            return bounded
    return term


def _gated(term, literal: Pred):
    """``term`` gated by the launch-constant comparisons ``literal`` implies: the operand
    ``selp`` picks when ``literal`` holds is no value of an instance in which one of them is
    false (``which ? a : b`` with ``which == 0`` never yields ``a``)."""
    if not isinstance(term, Term):
        return term
    from kernelcheck.analysis.lower import guard_literals
    from kernelcheck.analysis.terms import Gate, is_launch_constant

    for lit in guard_literals((literal,)):
        if is_launch_constant(lit.a) and is_launch_constant(lit.b):
            term = Gate(term, lit)
    return term


def _mul(a: Term, b: Term) -> Term:
    from kernelcheck.analysis.terms import mul
    return mul(a, b)


def _registers_of(function: Function) -> dict[int, tuple[tuple[str, ...], tuple[str, ...]]]:
    """Per instruction of ``function``, by ``id``: ``(uses, defs)``."""
    return {id(instr): (uses(instr), defs(instr)) for instr in function.instructions}


def _uses_and_returns(function: Function, callee: bool, registers_of: dict):
    """``(used, ret_slots)``: registers read by some instruction, except as the value of a
    store to the function's return parameter; and, for those stored there, the
    ``(return parameter, offset)`` slots they go to. Flow-insensitive: a register with
    any other use anywhere counts as used (conservative for atomics). ``registers_of`` is
    :func:`_registers_of` of ``function``."""
    returns = {p.name for p in function.return_params} if callee else set()
    used: set[str] = set()
    slots: dict[str, list] = {}
    for instr in function.instructions:
        ops = instr.operands
        if (returns and instr.opcode == "st" and "param" in instr.modifiers and len(ops) == 2
                and type(ops[0]) is Address and type(ops[0].base) is Symbol
                and ops[0].base.name in returns and type(ops[1]) is Register):
            slots.setdefault(ops[1].name, []).append((ops[0].base.name, ops[0].offset))
            if instr.guard is not None:
                used.add(instr.guard.register)
            continue
        used.update(registers_of[id(instr)][0])
    return used, {k: tuple(v) for k, v in slots.items() if k not in used}


def _register_bindings(param, arg) -> list[tuple[str, object]]:
    """``(callee register, caller operand)`` pairs of a ``.reg`` parameter: a vector
    parameter element by element; none when the argument's shape does not match."""
    if not param.vector:
        return [] if type(arg) is VectorOperand else [(param.name, arg)]
    elements = VECTOR_ELEMENTS.get(param.vector, ())
    if type(arg) is not VectorOperand or len(arg.elements) != len(elements):
        return []
    return [(f"{param.name}.{e}", outer) for e, outer in zip(elements, arg.elements,
                                                                strict=True)]


def _block_local_names(function: Function,
                       registers_of: dict | None = None) -> dict[int, frozenset[str]]:
    """Per block, the registers and predicates it defines that are dead wherever the block
    ends: no block reads them before defining them itself, and no block's last instruction
    (whose guard the walk reads again on the edges out) reads them at all. A guarded
    definition keeps the old value where the guard fails, so it reads the register too.
    ``registers_of`` is :func:`_registers_of` of ``function`` (found here if not given)."""
    if registers_of is None:
        registers_of = _registers_of(function)
    exposed: set[str] = set()
    written_by: dict[int, set[str]] = {}
    for block in function.blocks:
        defined: set[str] = set()
        for instr in block.instructions:
            read, written = registers_of[id(instr)]
            for name in read:
                if name not in defined:
                    exposed.add(name)
            if instr.guard is not None:
                exposed.update(n for n in written if n not in defined)
            defined.update(written)
        if block.last is not None:
            exposed.update(registers_of[id(block.last)][0])
        written_by[block.index] = defined
    local = {}
    for block in function.blocks:
        names = frozenset(written_by[block.index] - exposed)
        if names:
            local[block.index] = names
    return local


def _dominates(idom: dict, a, b) -> bool:
    while True:
        if a == b:
            return True
        parent = idom.get(b)
        if parent is None or parent == b:
            return False
        b = parent


def _natural_loops(cfg: nx.DiGraph, back) -> dict[int, frozenset]:
    loops: dict[int, set] = {}
    for latch, header in back:
        body = loops.setdefault(header, {header})
        stack = [latch]
        while stack:
            node = stack.pop()
            if node in body:
                continue
            body.add(node)
            stack.extend(p for p in cfg.predecessors(node) if p != ENTRY)
    return {h: frozenset(b) for h, b in loops.items()}


def _from_undefined(term: Term) -> bool:
    """Whether ``term`` reads a register that was never defined (``?undef:%r``)."""
    return bool(opaque_leaves(term) & UNDEFINED_LEAF)


def _merge(states: list[_State]) -> _State:
    if len(states) == 1:
        return states[0].copy()
    regs: dict = {}
    names = set().union(*(s.regs for s in states))
    first, others = states[0].regs, [s.regs for s in states[1:]]
    for name in names:
        # Most registers hold one and the same term on every path into a join (a loop,
        # not a generator: this runs for every register at every join).
        v = first.get(name)
        if v is not None:
            for o in others:
                if o.get(name) is not v:
                    break
            else:
                regs[name] = v
                continue
        values = []
        for s in states:
            v = s.regs.get(name)
            if v is not None and v not in values:
                values.append(v)
        if len(values) > 1:
            # A value computed from a register no path defined is never used where it
            # is read (a register absent on one path is already left out of the join).
            defined = [v for v in values if not _from_undefined(v)]
            values = defined or values
        if len(values) == 2 and len(states) == 2:
            values = _same_quotient(states, name, values)
        regs[name] = _join(values)
    preds: dict = {}
    first_preds, other_preds = states[0].preds, [s.preds for s in states[1:]]
    for name in set().union(*(s.preds for s in states)):
        p = first_preds.get(name)
        for o in other_preds:
            q = o.get(name)
            if q is not p and q != p:
                preds[name] = POpaque(name)
                break
        else:
            preds[name] = p
    others = [set(s.guard) for s in states[1:]]
    guard = tuple(g for g in states[0].guard if all(g in other for other in others))
    shared = set.intersection(*(s.shared for s in states))
    frames = merge_slots([s.frames for s in states])
    flags = {name: f for name, f in states[0].flags.items()
             if all(s.flags.get(name) == f for s in states[1:])}
    return _State(regs, preds, guard, shared, frames, merge_slots([s.stack for s in states]),
                  flags)


_ARITHMETIC = (Const, Param, Special, Add, Mul, Wrap, Div, Rem, Shr, BitAnd, BitOr)
#: :func:`node_kinds` bits of the nodes of :data:`_ARITHMETIC` (a thread's special
#: register included).
_ARITHMETIC_BITS = kind_bits(*_ARITHMETIC) | 1


def _same_quotient(states: list[_State], name: str, values: list) -> list:
    """``[v]`` when the two paths' values of ``name`` are one value: nvcc's 32-bit fast path
    of a 64-bit division (``div.u32`` where ``(a | b) >> 32 == 0``, ``div.u64`` otherwise)
    computes on one path what the other's term says (:func:`kernelcheck.analysis.unroll.
    prove_equal_under`, under the literals only that path has). Both values must be
    arithmetic of constants, parameters and launch coordinates only, so that either term
    means the same number on both paths; else ``values`` unchanged."""
    a, b = (s.regs.get(name) for s in states)
    if a is None or b is None or not any(
            has_kind(v, Div, Rem) for v in (a, b)) or any(
            node_kinds(v) & ~_ARITHMETIC_BITS for v in (a, b)):
        return values
    from kernelcheck.analysis.unroll import prove_equal_under

    for keep, other, path in ((a, b, states[1]), (b, a, states[0])):
        mine = [g for g in path.guard if g not in (states[0] if path is states[1]
                                                    else states[1]).guard]
        if mine and prove_equal_under(mine, other, keep):
            return [keep]
    return values


def _has_loop_var(term, key: int) -> bool:
    """Whether ``term`` holds a loop variable of the loop headed by block ``key``."""
    return has_kind(term, LoopVar) and contains(
        term, lambda t: type(t) is LoopVar and t.header == key)


def _step_of(var: LoopVar, latch_values, key: int) -> Term | None:
    steps = []
    for value in latch_values:
        if value is None:
            return None
        if value == var:
            steps.append(Const(0))
            continue
        if type(value) is not Add or var not in value.args:
            return None
        rest = list(value.args)
        rest.remove(var)
        step = add(*rest)
        if _has_loop_var(step, key):
            return None
        steps.append(step)
    if not steps or any(s != steps[0] for s in steps):
        return None
    return steps[0]


def _word_pairs(others, key: int):
    """``(lo, hi, pair variable, init, step)`` for each two loop registers holding the low
    and high words of a 64-bit induction variable (the SASS lift's register pairs).

    With ``P = Wrap(lo, 32, u) + 2**32 * Wrap(hi, 32, u)``, the pair qualifies when the
    latch value of ``lo`` is ``P + s`` with ``s`` loop-invariant and that of ``hi`` is
    ``Shr(Wrap(P + s, 64, u), 32)`` at every latch. Soundness, by induction: the pair's
    64-bit value ``V_k = lo_k + 2**32 hi_k`` is ``P`` in iteration ``k``; the next one is
    ``lo_{k+1} + 2**32 hi_{k+1} = (V_k + s) mod 2**64``, so ``V_k`` is congruent to
    ``V_0 + s*k`` modulo ``2**64``, and ``lo``, ``hi`` are its words.
    """
    from kernelcheck.analysis.induction import from_linear, linear

    found = []
    used: set = set()
    by_var = {var: (init, latches) for var, _, init, latches in others}
    # The high word's latches are the upper halves of the low word's: candidates are found
    # by those latch terms (one lookup per low word, not a scan of every register: an
    # unrolled kernel carries hundreds), before the linear forms below (pairs are few).
    by_latches: dict[tuple, list] = {}
    for hi, (hi_init, hi_latches) in by_var.items():
        if hi_init is not None and None not in hi_latches:
            by_latches.setdefault(tuple(hi_latches), []).append(hi)
    for lo, (lo_init, lo_latches) in by_var.items():
        if lo in used or lo_init is None or not lo_latches or None in lo_latches:
            continue
        upper = tuple(Shr(wrap(v, 64, False), 32) for v in lo_latches)
        for hi in by_latches.get(upper, ()):
            if hi is lo or hi in used:
                continue
            hi_init = by_var[hi][0]
            pair = add(wrap(lo, 32, False), mul(Const(1 << 32), wrap(hi, 32, False)))
            form = linear(lo_latches[0])
            for m, c in linear(pair).items():
                form[m] = form.get(m, 0) - c
            step = from_linear({m: c for m, c in form.items() if c})
            if _has_loop_var(step, key):
                continue
            if all(linear(v) == linear(add(pair, step)) for v in lo_latches):
                if type(step) is Const:
                    # Only the step modulo 2**64 matters (a decrement is an add of
                    # 2**64 - 1 with carries): the signed representative counts down.
                    step = wrap(step, 64, True)
                syn = LoopVar(key, f"{lo.register}:{hi.register}")
                init = substitute(pair, {lo: lo_init, hi: hi_init})
                found.append((lo, hi, syn, init, step))
                used |= {lo, hi}
                break
    return found


def _follows_iv(var: LoopVar, init, latch_values, candidates: list, occurrences,
                cfg, header, back, out) -> Term | None:
    """``F(u)`` when the loop variable ``var`` is a fixed function ``F`` of an induction
    variable ``u`` of the same loop: ``var``'s first value is ``F`` of ``u``'s, and its value
    at every latch is ``F`` of ``u``'s value there (the 32-bit halves of a 64-bit index the
    SASS lift keeps in a register pair: ``lo32(u)``, ``hi32(u)``).

    Soundness, by induction on the iteration ``k``: ``var_0 = F(u_0)``, and if the latch
    terms are ``F`` of ``u``'s latch terms, ``var_{k+1} = F(u_{k+1})``. ``F`` is built from
    ``u``, constants, parameters and launch coordinates only, so it means the same thing in
    every iteration.

    ``candidates`` are the loop's induction variables with their latch values;
    ``occurrences`` finds which of their first latch values occur in a term.
    """
    if init is None or any(v is None for v in latch_values) or not candidates:
        return None
    # Only an induction variable whose latch value occurs in ``var``'s can give a shape
    # (a substitution per candidate would rebuild that often large term each time).
    present = set(occurrences.within(latch_values[0]))
    for u, u_latches in candidates:
        if u_latches[0] not in present:
            continue
        u_init = _init_of(cfg, header, back, out, u.register)
        if u_init is None or any(v is None for v in u_latches):
            continue
        shape = substitute(latch_values[0], {u_latches[0]: u})
        if shape == latch_values[0] or not contains(shape, lambda t, u=u: t == u) or contains(
                shape, lambda t, u=u: (type(t) is LoopVar and t != u) or type(t) in (
                    Opaque, Join, Iter, TripMax)):
            continue
        if all(substitute(shape, {u: lu}) == lv for lu, lv in zip(u_latches, latch_values,
                                                                  strict=True)) and (
                substitute(shape, {u: u_init}) == init):
            return shape
    return None


def _init_of(cfg, header, back, out, name) -> Term | None:
    values = []
    for p in cfg.predecessors(header):
        if (p, header) in back:
            continue
        if p not in out:
            continue
        v = out[p].regs.get(name)
        if v is None:
            v = Opaque(f"undef:{name}", 64)
        if v not in values:
            values.append(v)
    if not values:
        return None
    return _join(values)


def _join(values: list[Term]) -> Term:
    """One of ``values``. A pointer parameter every value adds is taken out of the join
    (``Join(p + a, p + b)`` is ``p + Join(a, b)``, the same set of values), so an address
    merged from two paths keeps its base: a pointer advanced by an unrolled loop and by
    its remainder, as SASS keeps it."""
    if len(values) == 1:
        return values[0]
    parts = [v.args if type(v) is Add else (v,) for v in values]
    common = [t for t in parts[0] if type(t) is Param and t.size == 8
              and all(t in p for p in parts[1:])]
    if len(common) != 1:
        return Join(tuple(values))
    rests = []
    for p in parts:
        rest = list(p)
        rest.remove(common[0])
        term = add(*rest)
        if term not in rests:
            rests.append(term)
    return add(common[0], rests[0] if len(rests) == 1 else Join(tuple(rests)))


def _conjuncts(literal: Pred) -> list[Pred]:
    """The conjuncts of a predicate: ``a && b`` and ``!(a || b)`` split, others whole."""
    out, stack = [], [literal]
    while stack:
        p = stack.pop()
        if type(p) is PAnd:
            stack.extend((p.b, p.a))
        elif type(p) is PNot and type(p.p) is POr:
            stack.extend((pred_not(p.p.b), pred_not(p.p.a)))
        else:
            out.append(p)
    return out


def _loop_test(literal: Pred, key: int):
    """``(x, bound, mode)`` when ``literal`` says ``x <mode> bound`` with ``x`` varying in
    loop ``key`` and ``bound`` not: ``lt`` (``x < bound``), ``gt`` (``x > bound``) or ``ne``.
    """
    if type(literal) is not Cmp:
        return None

    def varies(t):
        return _has_loop_var(t, key)

    a, b, op = literal.a, literal.b, literal.op
    if varies(b) and not varies(a):
        a, b = b, a
        op = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le"}.get(op, op)
    if not varies(a) or varies(b) or type(a) is not Wrap:
        return None
    if op == "lt":
        return a, b, "lt"
    if op == "le":
        return a, add(b, Const(1)), "lt"
    if op == "gt":
        return a, b, "gt"
    if op == "ge":
        return a, add(b, Const(-1)), "gt"
    if op == "ne":
        return a, b, "ne"
    return None


def _iv_offset(x, ivs: dict, key: int):
    """``(iv var, c)`` when the wrapped value ``x`` is ``iv + c`` with ``c`` loop-invariant.

    A 64-bit induction variable kept in two 32-bit loop registers (:func:`_word_pairs`)
    counts as the pair ``Wrap(lo, 32, u) + 2**32 * Wrap(hi, 32, u)``: the pair's value is
    congruent to the variable modulo ``2**64``, so a test of ``x`` wrapped to 64 bits is a
    test of ``iv + c`` (the SASS lift's count-down of a 64-bit remainder count)."""
    inner = x.arg
    parts = inner.args if type(inner) is Add else (inner,)
    if x.bits == 64:
        for var in ivs:
            if var.header != key or var.register.count(":") != 1:
                continue
            lo, hi = (LoopVar(key, name) for name in var.register.split(":"))
            words = (wrap(lo, 32, False), mul(Const(1 << 32), wrap(hi, 32, False)))
            if all(w in parts for w in words):
                rest = list(parts)
                for w in words:
                    rest.remove(w)
                # A constant matters modulo 2**64 only (x is wrapped to 64 bits).
                rest = [wrap(r, 64, True) if type(r) is Const else r for r in rest]
                parts = (var, *rest)
                break
    for var in ivs:
        if var.header != key or var not in parts:
            continue
        rest = list(parts)
        rest.remove(var)
        c = add(*rest)
        if _has_loop_var(c, key):
            continue
        return var, c
    # x may be the updated value of an IV: iv + step folded into one sum.
    return None


def symbolic_kernel(module: Module, function: Function) -> SymbolicKernel:
    """Symbolically evaluate ``function`` (a kernel) and collect its global accesses.

    Parameters
    ----------
    module : Module
        The module holding ``function`` and the device functions it calls.
    function : Function
        A ``.entry`` with a body.

    Returns
    -------
    SymbolicKernel
        Accesses with address terms, guards and values; ``unmodelled`` lists what the
        analysis cannot model (each is a reason the kernel is not proven).

    Examples
    --------
    >>> from kernelcheck.ptx.parser import parse_ptx
    >>> m = parse_ptx(".version 8.0\\n.target sm_80\\n.address_size 64\\n"
    ...     ".visible .entry k(.param .u64 k_param_0) { .reg .b64 %rd<3>; .reg .b32 %r<2>;"
    ...     " ld.param.u64 %rd1, [k_param_0]; cvta.to.global.u64 %rd2, %rd1;"
    ...     " st.global.u32 [%rd2], 7; ret; }")
    >>> [a.kind for a in symbolic_kernel(m, m.get_function("k")).accesses]
    ['write']
    """
    walker = _Walker(module, function, 0, 0, None, ())
    walker.run()
    unmodelled = tuple(dict.fromkeys(walker.unmodelled))
    hoisted: dict = {}
    accesses = tuple(a if type(a.address) not in (Wrap, Add, Join) else SymbolicAccess(
        a.instr, a.function, a.kind, a.space, _hoist_base(a.address, hoisted), a.width,
        a.guard, a.value, a.atomic_op, a.result_used, a.call_path) for a in walker.accesses)
    return SymbolicKernel(function, accesses, unmodelled, frozenset(walker.assumed),
                          tuple(walker.loads))


def _hoist_base(term: Term, memo: dict | None = None) -> Term:
    """``term`` with the pointer parameter common to every value of a join taken out of it
    (through sums and wraps only), so an address merged from paths, or resolved from a loop
    variable after the loop, keeps its base (see :func:`_join`).

    ``memo`` maps the ``id`` of each sub-term already rewritten to its result: the terms
    of a kernel share their sub-terms (a join of sums of joins, from paths merged one after
    the other), and a rewrite that followed every path through them again would take time
    exponential in their depth. Each entry keeps its term alive, so an ``id`` names one
    term while ``memo`` lives.
    """
    kind = type(term)
    if kind is not Wrap and kind is not Add and kind is not Join:
        return term
    if memo is None:
        memo = {}
    done = memo.get(id(term))
    if done is not None:
        return done[1]
    if kind is Wrap:
        inner = _hoist_base(term.arg, memo)
        result = term if inner is term.arg else Wrap(inner, term.bits, term.signed)
    elif kind is Add:
        args = [_hoist_base(a, memo) for a in term.args]
        result = term if all(a is b for a, b in zip(args, term.args, strict=True)) else add(
            *args)
    else:
        result = _join(list(dict.fromkeys(_hoist_base(a, memo) for a in term.args)))
    memo[id(term)] = (term, result)
    return result


_ = (neg, Special, VectorOperand, PConst)
