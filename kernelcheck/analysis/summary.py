"""Access summaries, kernel classes and LaunchChecks: the idempotency analysis of a kernel.

:func:`analyze_kernel` runs the symbolic evaluation (:mod:`kernelcheck.analysis.symbolic`)
and decides the kernel class:

* ``not_proven``: the kernel uses something the analysis does not model, or writes global
  memory at an address with no known base pointer.
* ``never``: some clobber holds for every instance that performs the access: a
  non-idempotent atomic on global memory (:func:`atomic_rule`), or a read and a later write
  of the very same address term by the same thread under the same guard (``a[i] = a[i] + 1``).
* ``always``: no write can overlap any read for any arguments: there are no (write, read)
  pairs left after the residue test (:func:`residue_disjoint`).
* ``conditional`` otherwise; the :class:`~kernelcheck.launch.check.LaunchCheck` decides each
  instance.

Atomic rules (``atom``/``red`` on global or generic memory): ``add``, ``sub``, ``inc``,
``dec``, ``cas`` and ``xor`` change the location on every application, so re-running one
changes the result: non-idempotent. ``max``, ``min``, ``and`` and ``or`` are idempotent in
effect (applying them twice with the same operand gives the same value); the operand may come
from memory, because the pair test already reports any read that a write of the instance
could change. ``exch`` is idempotent in effect only with an operand that is the same in
every thread and every run: built from parameters, launch dimensions and constants only (no
value from memory, no thread index, no clock or other unmodelled value), so that re-running
it stores the same value. Any atomic whose returned old value is used is treated as
non-idempotent: that value differs on a re-execution.

An atomic that is idempotent in effect still reads its location. It is paired like a read
with every plain write and every other atomic that may touch the same bytes; only two
atomics of the same operation among ``max``, ``min``, ``and``, ``or`` (and an access with
itself) commute and are not paired. A plain store racing with an atomic on the same bytes
is thereby counted as a possible clobber, as the dynamic oracle counts it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import lru_cache

from kernelcheck.analysis.bases import (
    base_param,
    forget_parts,
    module_base,
    narrowing_base,
    rebased_base,
    split_base,
)
from kernelcheck.analysis.collector import paused_collector
from kernelcheck.analysis.describe import byte_range_text, merged_conditions
from kernelcheck.analysis.induction import linear
from kernelcheck.analysis.lower import (
    ProgramBuilder,
    affine_form,
    apply_guards,
    guard_literals,
    residue_bits,
)
from kernelcheck.analysis.semantics import is_memory_value
from kernelcheck.analysis.smt import prove_never_overlap, prove_same_address
from kernelcheck.analysis.symbolic import SymbolicAccess, symbolic_kernel
from kernelcheck.analysis.tables import expansion_axis, table_entry
from kernelcheck.analysis.terms import (
    THREAD_VARS,
    Add,
    Bound,
    Const,
    Join,
    Mul,
    Occurrences,
    Opaque,
    Param,
    Special,
    Term,
    Wrap,
    children,
    contains,
    forget_equalities,
    has_kind,
    is_launch_constant,
    pred_not,
    render,
)
from kernelcheck.errors import UnsupportedFeature
from kernelcheck.ir.nodes import Function, Instruction, Module
from kernelcheck.launch.check import (
    ATOMIC_BAD,
    ATOMIC_OK,
    IN_MODULE,
    MAX_ATOMS,
    READ,
    WRITE,
    AccessRecord,
    LaunchCheck,
)

__all__ = ["NON_IDEMPOTENT_ATOMICS", "MemoryAccess", "KernelSummary", "analyze_kernel",
           "analyze_module", "atomic_rule",
           "forget_kernel_caches", "residue_disjoint", "unanalysed_summary"]

#: Atomic operations that are not idempotent in effect whatever their operands.
NON_IDEMPOTENT_ATOMICS = frozenset({"add", "sub", "inc", "dec", "cas", "xor", "unknown"})
_OK_ATOMICS = {"max", "min", "and", "or"}
_SAME_ADDRESS_QUERIES = 4  # Z3 queries per kernel for the never class
#: Spaces of recorded reads whose bytes are unknown (kernelcheck.analysis.symbolic).
_OPAQUE_SPACES = ("texture", "surface", "tensor", "matrix")
_MAX_GUARDS = 6  # path-guard comparisons per access kept for the launch check


@dataclass(frozen=True, slots=True)
class MemoryAccess:
    """One global access in a :class:`KernelSummary`: what a person reads in a report."""

    kind: str
    instruction: str
    index: int
    line: int | None
    width: int
    address: str
    guard: str
    base: str | None
    rule: str = ""
    byte_range: str | None = None
    function: str = ""
    call_path: tuple[int, ...] = ()
    space: str = "global"

    def to_json(self) -> dict:
        return {"kind": self.kind, "instruction": self.instruction, "index": self.index,
                "line": self.line, "width": self.width, "address": self.address,
                "guard": self.guard, "base": self.base or "unknown base", "rule": self.rule,
                "byte_range": self.byte_range, "function": self.function,
                "space": self.space,
                "call_path": list(self.call_path)}


@dataclass(frozen=True, slots=True)
class KernelSummary:
    """The idempotency analysis of one kernel: class, reasons, accesses and LaunchCheck."""

    name: str
    kernel_class: str
    reasons: tuple[str, ...]
    accesses: tuple[MemoryAccess, ...]
    launch_check: LaunchCheck
    conditions: tuple[str, ...] = ()
    seconds: float = 0.0
    z3_seconds: float = 0.0
    params: tuple[tuple[str, int, int], ...] = field(default=())

    def to_json(self) -> dict:
        return {"name": self.name, "class": self.kernel_class, "reasons": list(self.reasons),
                "conditions": list(self.conditions),
                "accesses": [a.to_json() for a in self.accesses],
                "launch_check": self.launch_check.to_json()}


def atomic_rule(access: SymbolicAccess, loads=None) -> tuple[bool, str]:
    """``(idempotent_in_effect, rule)`` for a global atomic (see the module documentation).

    ``loads`` maps the opaque value of each load to the address it reads
    (:attr:`~kernelcheck.analysis.symbolic.SymbolicKernel.loads`); without it an ``exch``
    of a loaded value is never idempotent in effect.
    """
    op = access.atomic_op or "unknown"
    if access.result_used:
        return False, f"atom.{op} whose returned old value is used: not idempotent in effect"
    if op in NON_IDEMPOTENT_ATOMICS:
        return False, f"atomic {op}: non-idempotent read-modify-write"
    if op in _OK_ATOMICS:
        return True, f"atomic {op}: idempotent in effect (applying it again changes nothing)"
    if op == "exch":
        values = access.value if isinstance(access.value, tuple) else (access.value,)
        if any(v is None for v in values):
            return False, "atomic exch of an unknown value: counted as non-idempotent"
        if any(not _launch_invariant_load(v, loads or {}) for v in values
               if is_memory_value(v)):
            return False, ("atomic exch of a value loaded from an address that differs "
                           "between threads: non-idempotent")
        if any(contains(v, _varies_between_threads_or_runs) for v in values):
            return False, ("atomic exch of a value that differs between threads or runs: "
                           "counted as non-idempotent")
        return True, "atomic exch of a launch-invariant value: idempotent in effect"
    return False, f"atomic {op}: not modelled, counted as non-idempotent"


def _launch_invariant_load(value: Term, loads: dict) -> bool:
    """Whether every value loaded from memory in ``value`` was loaded by a load whose address
    is a launch constant.

    Soundness (the definition of an idempotent instance): such a load reads the same bytes
    in every thread and every run. The load is a read of the instance, paired with every
    write it makes (the ``exch`` included); if none of them may touch those bytes, they keep
    their value in every run from any partly executed state, so every thread, and every
    re-execution, exchanges the same value (``atomicExch(flag, *src)``). If one may, the
    pair already decides the instance.
    """
    return not contains(value, lambda t: type(t) is Opaque and t.memory and not (
        t in loads and is_launch_constant(loads[t])))


def _varies_between_threads_or_runs(term: Term) -> bool:
    return (type(term) is Opaque and not term.memory) or (
        type(term) is Special and term.name in THREAD_VARS)


def _commuting_atomics(a: SymbolicAccess, b: SymbolicAccess) -> bool:
    """Whether two idempotent-in-effect atomics need no pairing: the same access (one
    operation applied by many threads), or two of the same commuting operation."""
    if a is b:
        return True
    return a.atomic_op == b.atomic_op and a.atomic_op in _OK_ATOMICS


@lru_cache(maxsize=8192)
def _base(address: Term) -> Param | None:
    """The pointer parameter an address is named after (:func:`base_param`)."""
    return base_param(address)


def _residue(t, memo: dict | None = None) -> tuple[int, int]:
    """``(m, r)``: ``t`` is congruent to ``r`` modulo ``2**m`` whatever the arguments.

    ``memo`` holds, by ``id``, each sub-term already seen with its residue (and the term
    itself, so the ``id`` cannot be reused while ``memo`` lives): the addresses of a kernel
    share their sub-terms, and a walk along every path through them takes time exponential
    in their depth (a join of sums of joins, from paths merged one after the other).
    """
    kind = type(t)
    if kind is Const:
        return 64, t.value % (1 << 64)
    if kind is not Add and kind is not Mul and kind is not Wrap and kind is not Bound and (
            kind is not Join):
        return 0, 0
    if memo is None:
        memo = {}
    seen = memo.get(id(t))
    if seen is not None:
        return seen[1]
    result = _residue_of(t, kind, memo)
    memo[id(t)] = (t, result)
    return result


def _residue_of(t, kind, memo: dict) -> tuple[int, int]:
    if kind is Add:
        m, r = 64, 0
        for a in t.args:
            am, ar = _residue(a, memo)
            m = min(m, am)
            r += ar
        return m, r % (1 << m) if m else 0
    if kind is Mul and type(t.args[0]) is Const:
        c = t.args[0].value
        v = (c & -c).bit_length() - 1 if c else 64
        rest = Mul(t.args[1:]) if len(t.args) > 2 else t.args[1]
        m, r = _residue(rest, memo)
        m = min(64, m + v)
        return m, (c * r) % (1 << m) if m else 0
    if kind is Wrap:
        # Wrapping modulo 2**bits keeps every residue modulo 2**m for m <= bits.
        m, r = _residue(t.arg, memo)
        m = min(m, t.bits)
        return m, r % (1 << m) if m else 0
    if kind is Bound:
        return _residue(t.arg, memo)
    if kind is Join:
        residues = {_residue(a, memo) for a in t.args}
        return residues.pop() if len(residues) == 1 else (0, 0)
    return 0, 0


def residue_disjoint(write: SymbolicAccess, read: SymbolicAccess) -> bool:
    """Whether the two accesses can never share a byte, for any arguments and threads.

    Both addresses must be ``P + rest`` with the same pointer parameter ``P``; the rests'
    residues modulo a power of two ``2**m`` (valid modulo ``2**64``, so wrap-around cannot
    break it) must leave no difference in ``[-(w_write-1), w_read-1]``: ``a[2i+1]`` never
    meets ``a[2i]``.
    """
    bw, br = _base(write.address), _base(read.address)
    if bw is None or bw != br:
        return False
    return _residues_apart(write.width, _based_residue(write.address, bw),
                           read.width, _based_residue(read.address, br))


def _residues_apart(write_width: int, rw: tuple[int, int], read_width: int,
                    rr: tuple[int, int]) -> bool:
    """The test of :func:`residue_disjoint` on the two rests' residues ``(m, r)``."""
    m = min(rw[0], rr[0], 62)
    if m <= 0:
        return False
    mod = 1 << m
    diff = (rw[1] - rr[1]) % mod
    lo, hi = -(write_width - 1), read_width - 1
    if hi - lo + 1 >= mod:
        return False
    return not any((x % mod) == diff for x in range(lo, hi + 1))


#: The residues of the sub-terms of one kernel's addresses (see :func:`_residue`), emptied
#: with the other tables of a kernel (:func:`forget_kernel_caches`), and when it grows past
#: :data:`_RESIDUES_LIMIT` entries (callers outside an analysis, such as the regions, do
#: not empty it).
_RESIDUES: dict = {}
_RESIDUES_LIMIT = 1 << 18


@lru_cache(maxsize=8192)
def _based_residue(address: Term, base: Param) -> tuple[int, int]:
    if len(_RESIDUES) > _RESIDUES_LIMIT:
        _RESIDUES.clear()
    return _residue(_strip_base(address, base), _RESIDUES)


def _strip_base(address: Term, base: Param) -> Term:
    split = split_base(address)
    assert split is not None and split[0] == base  # base is _base(address)
    return split[1]


def _literal_operands(accesses) -> Occurrences:
    """What finds the operands of the accesses' guard literals in their addresses (one
    for all accesses of a kernel: their addresses share most of their terms)."""
    return Occurrences(x for a in accesses for lit in guard_literals(a.guard)
                       for x in (lit.a, lit.b))


def _launch_literals(a: SymbolicAccess, guarded: Term,
                     operands: Occurrences | None = None) -> list:
    """The path-guard comparisons of ``a`` kept for the launch check, at most
    :data:`_MAX_GUARDS`: first those that bound no part of its address, then those of two
    launch constants that do.

    A literal whose operand occurs in the address mostly narrows the address range already
    (an empty range says the access cannot run), but not wherever the operand sits: in the
    count of a loop whose value after the loop is joined with the value of the path that
    skips it, an empty count leaves the join non-empty. ``k % 4 != 0`` before a remainder
    loop, false at a launch with ``k = 8``, keeps its reads from being counted then.

    Soundness: every literal of the path guard holds whenever the access runs (it is a
    condition of every path to it), so an instance for which the evaluator finds a literal
    false for every value its operands may take cannot run the access. ``if (flag)`` with
    ``flag == 0`` at launch, or ``if (i < n)`` with ``n == 0`` before an atomic that does
    not index by ``i``, decide so.
    """
    out = []
    literals = [lit for lit in guard_literals(a.guard)
                if not (type(lit.a) is Const and type(lit.b) is Const)]
    # One walk of the (often large) address finds every operand it holds.
    if operands is None:
        operands = Occurrences(x for lit in literals for x in (lit.a, lit.b))
    present = set(operands.within(guarded))
    narrowing = [lit for lit in literals if lit.a in present or lit.b in present]
    ordered = [lit for lit in literals if lit not in narrowing] + [
        lit for lit in narrowing if is_launch_constant(lit.a) and is_launch_constant(lit.b)]
    for lit in ordered:
        if lit not in out:
            out.append(lit)
        if len(out) == _MAX_GUARDS:
            break
    return out


def _site(a: SymbolicAccess, locate: Callable[[Instruction], tuple[str, str, str]] | None = None
          ) -> tuple[str, str, str]:
    """Where an access is, as ``(opcode, instruction, rest)``: ``("st.global.f32", "#20",
    ", line 14")`` for PTX, or what ``locate`` gives (the SASS analysis names the SASS offset:
    ``("STG.E", "/*0120*/", ", line 14")``)."""
    via = f" (inlined from {a.function})" if a.call_path else ""
    if locate is not None:
        opcode, ident, rest = locate(a.instr)
        return opcode, ident, rest + via
    line = f", line {a.instr.loc.line}" if a.instr.loc is not None else ""
    return a.instr.full_opcode, f"#{a.instr.index}", line + via


def _where(a: SymbolicAccess, locate=None) -> str:
    opcode, ident, rest = _site(a, locate)
    return f"{opcode} {ident}{rest}"


def _self_clobber(reads, writes, guarded_by, assumed=frozenset()) -> tuple[tuple, float]:
    """``((read, write) or None, seconds in Z3)``: a read and a later write of the same
    bytes by the same thread, the write's guard implying the read's (the read's literals
    are among the write's: whenever the write runs, the read ran before it), in every
    instance that runs the write. The write may be guarded by the value read
    (``if (mask[i]) mask[i] = false``).

    Addresses a constant apart (equal ones included) decide at once; otherwise Z3 may
    prove the two address terms equal for every thread that satisfies the guard
    (:func:`kernelcheck.analysis.smt.prove_same_address`: ``mul.wide`` versus ``shl`` of
    the same index, a sum in another order). Guard literals in ``assumed`` hold in every
    run that completes (a failing assertion aborts the launch) and are not compared.
    """
    candidates = []
    # Each access's position and guard literals, computed once for all pairs.
    position = {id(a): a.call_path + (a.instr.index,) for a in (*reads, *writes)}
    literals = {id(a): frozenset(a.guard) - assumed for a in (*reads, *writes)}
    offsets = {id(a): _offset_form(a.address) for a in (*reads, *writes)}
    bases = {id(a): _base(a.address) for a in (*reads, *writes)}
    # Only reads whose address differs from the write's by a constant can overlap it
    # whatever the arguments, and only reads of the write's base are worth a query:
    # each write meets those reads alone, in program order.
    by_terms: dict[frozenset, list] = {}
    by_base: dict[Param, list] = {}
    for r in reads:
        by_terms.setdefault(offsets[id(r)][0], []).append(r)
        if bases[id(r)] is not None:
            by_base.setdefault(bases[id(r)], []).append(r)

    def before(r, w) -> bool:
        # Program order across inlined calls: the positions (call site indices, then
        # the instruction's index) compare as tuples, so at the first level where they
        # differ both indices are of one function, as for two accesses of one body
        # (a read inside a call at #5 comes before a write at #7 of the caller).
        return position[id(r)] < position[id(w)] and literals[id(r)] <= literals[id(w)]

    for w in writes:
        terms, offset = offsets[id(w)]
        for r in by_terms.get(terms, ()):
            if before(r, w) and -w.width < offset - offsets[id(r)][1] < r.width:
                return (r, w), 0.0
        if bases[id(w)] is not None:
            candidates.extend((r, w) for r in by_base.get(bases[id(w)], ()) if before(r, w))
    seconds = 0.0
    # Pairs whose addresses name the same parameters and special registers first: the
    # likely equal ones (an element of a row read among the reads of another block) get
    # the few queries there are.
    leaves: dict[int, frozenset] = {}
    for r, w in candidates:
        for a in (r, w):
            if id(a) not in leaves:
                leaves[id(a)] = _leaves(a.address)
    candidates.sort(key=lambda pair: leaves[id(pair[0])] != leaves[id(pair[1])])
    for r, w in candidates[:_SAME_ADDRESS_QUERIES]:
        # The same bytes, or (widths differing) bytes of the read that the write covers:
        # first for every value of the terms (the guards' facts not needed; a guard on a
        # loop's exit value can leave Z3 undecided), then under the guards' facts.
        window = dict(lo=-(w.width - 1) if r.width != w.width else 0,
                      hi=r.width - 1 if r.width != w.width else 0)
        tries = [(r.address, w.address)]
        if (guarded_by[id(r)], guarded_by[id(w)]) != tries[0]:
            tries.append((guarded_by[id(r)], guarded_by[id(w)]))
        for read_address, write_address in tries:
            result = prove_same_address(read_address, write_address, **window)
            seconds += result.seconds
            if result.proved:
                return (r, w), seconds
    return None, seconds


def _leaves(term: Term) -> frozenset:
    """The parameters and special registers a term names."""
    found, seen, stack = set(), set(), [term]
    while stack:
        t = stack.pop()
        if id(t) in seen:
            continue
        seen.add(id(t))
        if type(t) in (Param, Special):
            found.add(t)
        else:
            stack.extend(children(t))
    return frozenset(found)


def _switches(clobber, guarded_by) -> set:
    """The literals of a self-clobbering pair's launch-check guards that have one value for
    the whole launch (their operands are parameters, launch dimensions and constants)."""
    operands = _literal_operands(clobber)
    return {lit for a in clobber for lit in _launch_literals(a, guarded_by[id(a)], operands)
            if is_launch_constant(lit.a) and is_launch_constant(lit.b)}


def _clobbered_either_way(clobber, reads, writes, guarded_by, assumed) -> tuple:
    """``(second pair or None, seconds in Z3)``: a self-clobbering pair for the launches
    that skip ``clobber``. When the first pair's launch-constant literals are one
    comparison ``c`` (``0 <= n``, choosing a vector path over a scalar one), a pair among
    the writes that need ``not c`` whose own launch-constant literals are at most
    ``not c`` runs in every launch where ``c`` is false: every launch then runs one of the
    two, which is what :func:`_skipped_at_launch` asks of one pair."""
    switches = _switches(clobber, guarded_by)
    if len(switches) != 1:
        return None, 0.0
    opposite = pred_not(next(iter(switches)))
    other = [w for w in writes if opposite in guard_literals(w.guard)]
    if not other:
        return None, 0.0
    second, seconds = _self_clobber(reads, other, guarded_by, assumed)
    if second is None or not _switches(second, guarded_by) <= {opposite}:
        return None, seconds
    return second, seconds


def _skipped_at_launch(clobber, guarded_by, writes) -> bool:
    """Whether a launch may skip the self-clobbering ``(read, write)`` pair and still write:
    a literal of the pair's launch-check guard has one value for the whole launch
    (parameters, launch dimensions and constants only: ``mode == 0`` of ``@!p`` with
    ``setp.ne.s32 p, mode, 0``) and some global write does not need it. Such a kernel is
    "conditional", not "never": the pair stays in the LaunchCheck, which finds the literal
    false at launch and drops the pair only then. A literal that every write needs
    (``0 < n`` before all of a grid-stride loop) leaves the class "never", as ``i < n``
    does (a launch that writes nothing is not a reason to call the kernel conditional)."""
    operands = _literal_operands(clobber)
    literals = [lit for a in clobber
                for lit in _launch_literals(a, guarded_by[id(a)], operands)
                if is_launch_constant(lit.a) and is_launch_constant(lit.b)]
    return any(lit not in guard_literals(w.guard) for lit in literals for w in writes)


def _offset_form(address: Term) -> tuple[frozenset, int]:
    """An address as ``(its non-constant linear terms, its constant)``, unwrapped from its
    64-bit wrap.

    Two accesses whose addresses have equal non-constant terms are ``c`` bytes apart,
    ``c`` the difference of their constants: the write at ``c`` shares a byte with the
    read when ``-write.width < c < read.width`` (a word read as a vector and one of its
    elements written back, the same thread's bytes whatever the arguments). Both
    addresses are 64-bit unsigned wraps of terms that differ by ``c`` exactly, so the two
    addresses differ by ``c`` unless one of them wraps past ``2**64``, which no access of
    an allocation does."""
    form = linear(address.arg if type(address) is Wrap else address)
    offset = form.pop(Const(1), 0)
    return frozenset(form.items()), offset


def analyze_kernel(module: Module, function: Function,
                   locate: Callable[[Instruction], tuple[str, str, str]] | None = None
                   ) -> KernelSummary:
    """Analyze one kernel: its class, the reasons, its accesses and its LaunchCheck.

    ``locate`` says where an instruction is in the reasons and LaunchCheck labels, as
    ``(opcode, instruction, rest)`` (default: the PTX opcode, ``#index`` and ``, line N``);
    it changes words, never a verdict.

    Examples
    --------
    >>> from kernelcheck.ptx.parser import parse_ptx
    >>> m = parse_ptx(".version 8.0\\n.target sm_80\\n.address_size 64\\n"
    ...     ".visible .entry k(.param .u64 k_param_0) { .reg .b64 %rd<3>;"
    ...     " ld.param.u64 %rd1, [k_param_0]; cvta.to.global.u64 %rd2, %rd1;"
    ...     " st.global.u32 [%rd2], 7; ret; }")
    >>> analyze_kernel(m, m.get_function("k")).kernel_class
    'always'
    """
    with paused_collector(release=forget_kernel_caches):
        return _analyze_kernel(module, function, locate)


def _analyze_kernel(module: Module, function: Function,
                    locate: Callable[[Instruction], tuple[str, str, str]] | None
                    ) -> KernelSummary:
    start = time.perf_counter()

    def where(a: SymbolicAccess) -> str:
        return _where(a, locate)

    forget_kernel_caches()
    params = tuple((p.name, p.offset, p.size) for p in function.params)
    try:
        sym = symbolic_kernel(module, function)
    except UnsupportedFeature as error:
        # Something of this one kernel the front end cannot represent (an indirect branch
        # without its target list): this kernel is not proven, the others are analysed.
        summary = unanalysed_summary(function, str(error))
        return replace(summary, seconds=time.perf_counter() - start)
    if sym.unmodelled:
        check = LaunchCheck(function.name, function.param_size, (), (), (),
                            "; ".join(sym.unmodelled))
        return KernelSummary(function.name, "not_proven", sym.unmodelled, (), check,
                             seconds=time.perf_counter() - start, params=params)
    reads = [a for a in sym.accesses if a.kind == "read"]
    writes = [a for a in sym.accesses if a.kind == "write"]
    reasons: list[str] = []
    bad_atomics = []
    access_rules: dict[int, str] = {}
    loads = dict(sym.loads)
    for a in sym.accesses:
        if a.kind != "atomic":
            continue
        ok, rule = atomic_rule(a, loads)
        access_rules[id(a)] = rule
        if ok:
            writes.append(a)
        else:
            bad_atomics.append(a)
            reasons.append(f"{rule} on {_describe_base(a)} at {where(a)}")
    unknown_writes = [w for w in writes if _base(w.address) is None and has_kind(
        w.address, Opaque)]
    builder = ProgramBuilder()
    records: list[AccessRecord] = []
    index_of: dict[int, int] = {}
    guarded_of = []
    guard_cache: dict = {}
    bases_of: dict[Term, tuple] = {}
    operands = _literal_operands(sym.accesses)
    for a in sym.accesses:
        kind = READ if a.kind == "read" else WRITE if a.kind == "write" else (
            ATOMIC_BAD if a in bad_atomics else ATOMIC_OK)
        guarded = apply_guards(a.address, a.guard, guard_cache)
        guarded_of.append(guarded)
        addr_slot = builder.slot(guarded)
        # Only a base the in-bounds assumption can be tied to may bound the access by its
        # allocation at launch (kernelcheck.analysis.bases); the record names no base
        # otherwise, so an opaque offset leaves the bytes unknown. Or a base whose offset
        # also adds other pointer-wide parameters as indices: the launch check bounds the
        # access by the base's allocation only once that part keeps the base inside it
        # (rebase_slot). Accesses share their address terms (the cases of a switch, the
        # loads and stores of one element): each distinct address is asked once.
        bases = bases_of.get(a.address)
        if bases is None:
            base = narrowing_base(a.address)
            bases = bases_of[a.address] = (
                base, rebased_base(a.address) if base is None else None)
        base, rebased = bases
        rebase_slot = -1
        if rebased is not None:
            base, rebase_slot = rebased[0], builder.slot(rebased[1])
        indirect = int(has_kind(guarded, Opaque))
        if module_base(a.address) is not None:
            indirect = IN_MODULE
        const_slot, atoms = -1, ()
        form = affine_form(guarded)
        # The binary LaunchCheck holds at most four (coefficient, atom) pairs per access; a
        # longer affine form is dropped, which leaves only the interval test (less precise,
        # never less sound), the same in every evaluator.
        if form is not None and len(form[1]) > MAX_ATOMS:
            form = None
        bits = 0
        if form is not None:
            # Indirect accesses keep their form for the residue test only (the lattice test
            # needs exact ranges, which their opaque atoms do not have).
            const_slot = builder.slot(form[0])
            atoms = tuple((builder.slot(c), builder.slot(t)) for c, t in form[1])
            bits = residue_bits(guarded)
        literals = _launch_literals(a, guarded, operands)
        # Tables of pointers and sizes in the parameter buffer read at a block-dependent
        # offset: the launch computes the access's bytes block by block
        # (kernelcheck.analysis.tables).
        axis = expansion_axis([guarded, *literals])
        index_of[id(a)] = len(records)
        records.append(AccessRecord(kind, a.width, addr_slot, base.offset if base else -1,
                                    base.size if base else 0, indirect, const_slot, atoms,
                                    f"{a.kind} of {_describe_base(a)} ({where(a)})",
                                    builder.guard(literals), bits,
                                    builder.slot(Special(axis)) if axis else -1,
                                    rebase_slot))
    pairs = []
    z3_seconds = 0.0
    smt_proved = 0
    smt_cache: dict = {}
    guarded_by = {id(a): g for a, g in zip(sym.accesses, guarded_of, strict=True)}
    clobber = None
    if not bad_atomics:
        plain_writes = [w for w in writes if w.kind == "write"]
        clobber, seconds = _self_clobber(reads, plain_writes, guarded_by, sym.assumed)
        z3_seconds += seconds
        if clobber is not None and _skipped_at_launch(clobber, guarded_by, writes):
            second, seconds = _clobbered_either_way(clobber, reads, plain_writes, guarded_by,
                                                    sym.assumed)
            z3_seconds += seconds
            clobber = (clobber, second) if second is not None else clobber
    # Reads whose bytes are not modelled: texture and surface fetches, tensor-map (TMA) and
    # unknown-size bulk copies, wmma matrix loads.
    opaque_reads = [r for r in reads if r.space in _OPAQUE_SPACES] if writes else []
    # A proven same-thread clobber decides "never" unless a launch may skip its write.
    clobbers = clobber is not None and (
        type(clobber[0]) is tuple or not _skipped_at_launch(clobber, guarded_by, writes))
    # The pairs a launch must decide: none when the kernel is not proven whatever they are
    # (a not-proven LaunchCheck decides no instance), so no solver time goes to them.
    if bad_atomics or clobbers or not (unknown_writes or opaque_reads):
        smt_proved, seconds = _overlapping_pairs(reads, writes, guarded_by, index_of,
                                                 smt_cache, pairs)
        z3_seconds += seconds
    conditions: list[str] = []
    # A non-idempotent atomic or a proven same-thread clobber decides "never" whatever
    # else the kernel writes: more writes cannot make an instance idempotent again.
    if bad_atomics:
        kernel_class = "never"
    elif clobbers and type(clobber[0]) is tuple:
        kernel_class = "never"
        (r, w), (r2, w2) = clobber
        reasons.append(f"{_describe_base(w)}[...] is read ({where(r)}) and then written "
                       f"({where(w)}) at the same address by the same thread, and on the "
                       f"other path of a launch-wide choice read ({where(r2)}) and then "
                       f"written ({where(w2)})")
    elif clobbers:
        kernel_class = "never"
        r, w = clobber
        reasons.append(f"{_describe_base(w)}[...] is read ({where(r)}) and then written "
                       f"({where(w)}) at the same address by the same thread")
    elif unknown_writes or opaque_reads:
        kernel_class = "not_proven"
        reasons.extend(f"write at an unknown address: {where(w)}" for w in unknown_writes)
        reasons.extend(f"{r.space} read at {where(r)} may read bytes the kernel writes "
                       f"(the bytes it reads are not modelled)" for r in opaque_reads)
    elif not pairs:
        kernel_class = "always"
        if not writes:
            reasons.append("no global write")
        elif not reads:
            reasons.append("only global writes, no global read")
        else:
            reasons.append("every write is provably disjoint from every read "
                           + ("(address residues never meet)" if not smt_proved else
                              f"(address residues, and Z3 for {smt_proved} pair(s))"))
    else:
        kernel_class = "conditional"
    ranges = {id(a): byte_range_text(g, a.width) for a, g in zip(sym.accesses, guarded_of,
                                                                 strict=True)}
    by_record = {index_of[id(a)]: a for a in sym.accesses}
    conditions = merged_conditions(
        [(by_record[w], by_record[r]) for w, r in pairs],
        base=_describe_base, byte_range=lambda a: ranges[id(a)],
        site=lambda a: _site(a, locate))
    if kernel_class == "conditional":
        reasons.extend(conditions)
    names: dict = {}
    memo: dict = {}
    accesses = tuple(MemoryAccess(
        a.kind, a.instr.full_opcode, a.instr.index, a.instr.loc.line if a.instr.loc else None,
        a.width, render(a.address, names, memo),
        " && ".join(render(g, names, memo) for g in a.guard),
        _base(a.address).name if _base(a.address) else None, access_rules.get(id(a), ""),
        ranges[id(a)], a.function, a.call_path, a.space)
        for a in sym.accesses)
    reasons, conditions = _readable(function.name, reasons), _readable(function.name,
                                                                      conditions)
    check = LaunchCheck(function.name, function.param_size, tuple(builder.records),
                        tuple(records), tuple(pairs),
                        "; ".join(reasons) if kernel_class == "not_proven" else "")
    return KernelSummary(function.name, kernel_class, tuple(reasons), accesses, check,
                         tuple(conditions), time.perf_counter() - start, z3_seconds, params)


def _readable(kernel: str, texts: list[str]) -> list[str]:
    """Reasons with a C++ kernel's PTX parameter names shortened: nvcc names them after the
    mangled kernel (``_Z5axpbyIfEvPT_PKS0_S3_S0_S0_i_param_0``), which a reader cannot
    read; ``param_0`` names the same parameter (as in SASS, and ``p0`` in ``--instance``)."""
    if not kernel.startswith("_Z"):
        return texts
    prefix = f"{kernel}_param_"
    return [t.replace(prefix, "param_") for t in texts]


def forget_kernel_caches() -> None:
    """Empty the memo tables one kernel's analysis fills (called as each analysis starts,
    and after an analysis stopped part-way, :mod:`kernelcheck.analysis.budget`).

    They hold terms of one kernel: equal terms of another kernel are other objects, and
    comparing two large shared-subterm graphs node by node is what the tables save.
    """
    _base.cache_clear()
    _based_residue.cache_clear()
    _RESIDUES.clear()
    forget_parts()
    forget_equalities()


def unanalysed_summary(function: Function, reason: str) -> KernelSummary:
    """A ``not_proven`` summary for a kernel the analysis cannot read (e.g. SASS only)."""
    params = tuple((p.name, p.offset, p.size) for p in function.params)
    check = LaunchCheck(function.name, function.param_size, (), (), (), reason)
    return KernelSummary(function.name, "not_proven", (reason,), (), check, params=params)


def _overlapping_pairs(reads, writes, guarded_by, index_of, smt_cache, pairs
                       ) -> tuple[int, float]:
    """Append to ``pairs`` the ``(write, read)`` record indices whose bytes may meet (the
    residues or Z3 do not keep them apart); returns how many pairs Z3 proved apart and its
    seconds."""
    smt_proved, z3_seconds = 0, 0.0
    ok_atomics = [a for a in writes if a.kind == "atomic"]
    # Each access's base and residue, found once (residue_disjoint on every pair would
    # find them again for each).
    based = {}
    for a in (*writes, *reads):
        base = _base(a.address)
        based[id(a)] = (base, None if base is None else _based_residue(a.address, base))
    for w in writes:
        bw, rw = based[id(w)]
        for r in reads + ok_atomics:
            if r.kind == "atomic" and w.kind == "atomic" and _commuting_atomics(w, r):
                continue
            br, rr = based[id(r)]
            same_base = bw is not None and bw == br
            if same_base and _residues_apart(w.width, rw, r.width, rr):
                continue
            if same_base:
                # Same base pointer: Z3 may prove the bytes never meet for any instance.
                result = prove_never_overlap(guarded_by[id(w)], w.width, guarded_by[id(r)],
                                             r.width, cache=smt_cache)
                z3_seconds += result.seconds
                if result.proved:
                    smt_proved += 1
                    continue
            pairs.append((index_of[id(w)], index_of[id(r)]))
    return smt_proved, z3_seconds


def _describe_base(a: SymbolicAccess) -> str:
    base = _base(a.address)
    if base is not None:
        return base.name
    entry = table_entry(a.address)
    if entry is not None:
        return f"the pointer at parameter byte {render(entry.offset)}"
    return "an unknown base"


def analyze_module(module: Module) -> tuple[KernelSummary, ...]:
    """:func:`analyze_kernel` for every kernel of ``module``, in order."""
    return tuple(analyze_kernel(module, k) for k in module.kernels)
