"""LaunchChecks compiled to Python functions: the fast path of instance evaluation.

:func:`compile_check` turns the flat interval program of a
:class:`~kernelcheck.launch.check.LaunchCheck` into the source of one Python function, with
each slot held as two local ints (the lowest and highest value) instead of a list of ranges.
The function computes exactly what :func:`kernelcheck.launch.evaluate.evaluate_general`
computes, as long as every slot is one non-empty range and every wrap is the identity or
folds one launch constant: the formulas are the same, only the representation differs.
Whenever a slot would become anything else (two pieces, empty, invalid, a wrap that moves a
range), the function gives up and calls the general evaluator, so verdicts, rules and
clobbered sets are always the general evaluator's (a test checks this on random instances).

The verdict is settled by the first (write, read) pair that may overlap, so the function
returns there. Its clobbered set covers every pair, as the general evaluator's does: when
later pairs remain it is a :class:`~kernelcheck.analysis.intervals.DeferredIntervalSet`
that runs the same slot code over all pairs on first use (recovery reads it; deciding the
verdict does not), otherwise the one overlapping range. Ranges that are copies of others
(an identity ``WRAP``, a ``BOUND`` on one side, ``ITER``) are not copied but aliased, and
the lattice test of two accesses with the same single affine atom is decided in closed form.

The compiled function is built once per LaunchCheck and cached on it.
"""

from __future__ import annotations

import struct

from kernelcheck.analysis.intervals import DeferredIntervalSet, IntervalSet
from kernelcheck.launch.check import (
    ATOMIC_BAD,
    LaunchCheck,
    and_clearing_low_bits,
    bitwise_point,
)

__all__ = ["compile_check", "compiled_source"]


class _Fallback(Exception):
    """The instance leaves the single-range case: use the general evaluator."""


def _tdiv(p, q):
    r = abs(p) // abs(q)
    return r if (p >= 0) == (q > 0) else -r


def _mul(a, b, c, d):
    ps = (a * c, a * d, b * c, b * d)
    return min(ps), max(ps)


def _div(a, b, c, d):
    if c > 0 or d < 0:
        ps = [_tdiv(p, q) for p in (a, b) for q in (c, d)]
        return min(ps), max(ps)
    raise _Fallback


def _rem(a, b, c, d):
    if a == b and c == d and c != 0:
        return _point(bitwise_point(12, a, c))
    if c <= 0 <= d:
        raise _Fallback
    m = max(abs(c), abs(d)) - 1
    return (0 if a >= 0 else -m), (m if b > 0 else 0)


def _point(v):
    return v, v


def _and(a, b, c, d):
    if a == b and c == d:
        return _point(a & c)
    cleared = (and_clearing_low_bits(a, b, c) if c == d else
               and_clearing_low_bits(c, d, a) if a == b else None)
    if cleared is not None:
        return cleared
    if a >= 0 and c >= 0:
        return 0, min(b, d)
    if a >= 0:
        return 0, b
    if c >= 0:
        return 0, d
    raise _Fallback


def _or(a, b, c, d):
    if a == b and c == d:
        return _point(a | c)
    if a >= 0 and c >= 0:
        return 0, (1 << max(b, d).bit_length()) - 1
    raise _Fallback


def _xor(a, b, c, d):
    if a == b and c == d:
        return _point(a ^ c)
    return _or(a, b, c, d)


def _wrap(lo, hi, lo_r, hi_r, mod):
    if lo >= lo_r and hi <= hi_r:
        return lo, hi
    if lo == hi:
        x = (lo - lo_r) % mod + lo_r
        return x, x
    raise _Fallback


def _bound(lo, hi, lo_cap, hi_cap):
    lo, hi = max(lo, lo_cap), min(hi, hi_cap)
    if lo > hi:
        raise _Fallback
    return lo, hi


def _neq(lo, hi, clo, chi):
    if clo != chi:
        return lo, hi
    if lo == clo:
        lo += 1
    if hi == clo:
        hi -= 1
    if lo > hi or lo < clo < hi:
        raise _Fallback  # empty, or split in two
    return lo, hi


def _lattice_sym(d, c, w, lo, hi):
    """``lattice_may_overlap(d, ((c, l, h), (-c, l, h)), lo, hi)`` with ``w = h - l``:
    whether ``lo <= d + c*t <= hi`` for some integer ``t`` in ``[-w, w]``."""
    if c == 0:
        return lo <= d <= hi
    if c < 0:
        c = -c
    return max(-w, -((d - lo) // c)) <= min(w, (hi - d) // c)


def _tripmax(xlo, xhi, slo, shi, blo, bhi, bits, signed, mode):
    from kernelcheck.launch.evaluate import _tripmax as general

    v = general([(xlo, xhi)], [(slo, shi)], [(blo, bhi)], bits, signed, mode)
    if v is None:
        raise _Fallback
    return v[0]


_BINARY = {8: "MIN", 9: "MAX", 10: "JOIN", 11: "_div", 12: "_rem", 14: "_and", 15: "_or",
           16: "_xor"}


def _cmp(alo, ahi, blo, bhi, op):
    """``kernelcheck.launch.evaluate._cmp`` on single ranges."""
    if op == 0:
        true, false = ahi < blo, alo >= bhi
    elif op == 1:
        true, false = ahi <= blo, alo > bhi
    elif op == 2:
        true, false = alo > bhi, ahi <= blo
    elif op == 3:
        true, false = alo >= bhi, ahi < blo
    else:
        same = alo == ahi == blo == bhi
        apart = ahi < blo or bhi < alo
        true, false = (same, apart) if op == 4 else (apart, same)
    return (1, 1) if true else (0, 0) if false else (0, 1)


def _pow2(lo, hi, width):
    if lo < 0:
        raise _Fallback
    return 1 << min(lo, width), 1 << min(hi, width)


def _shrv(lo, hi, slo, shi, width):
    if slo < 0:
        raise _Fallback
    ds = (1 << min(slo, width), 1 << min(shi, width))
    qs = [x // d for x in (lo, hi) for d in ds]
    return min(qs), max(qs)


def _needed(check: LaunchCheck) -> set[int]:
    """Slots the verdict reads: addresses, guards and affine forms of paired accesses."""
    roots = []
    for w, r in check.pairs:
        for k in (w, r):
            a = check.accesses[k]
            roots.append(a.addr_slot)
            roots.append(a.guard_slot)
            if a.const_slot >= 0:
                roots.append(a.const_slot)
                roots.extend(x for pair in a.atoms for x in pair)
    return _needed_slots(check, roots)


def _needed_slots(check: LaunchCheck, roots) -> set[int]:
    """``roots`` and every slot they are computed from."""
    seen: set[int] = set()
    stack = [r for r in roots if r >= 0]
    while stack:
        k = stack.pop()
        if k in seen:
            continue
        seen.add(k)
        op, a, b, c, _ = check.program[k]
        refs = {5: (a, b), 6: (a, b), 7: (a,), 8: (a, b), 9: (a, b), 10: (a, b),
                11: (a, b), 12: (a, b), 13: (a,), 14: (a, b), 15: (a, b), 16: (a, b),
                17: (a, b, c), 18: (a,), 19: (a, b, c), 20: (a, b), 21: (a, b), 22: (a,),
                23: (a, b), 24: (a, b)}.get(op, ())
        stack.extend(x for x in refs if x >= 0)
    return seen


def compiled_source(check: LaunchCheck) -> str | None:
    """The Python source of ``check``'s fast function, or ``None`` when it has no fast path.

    Slots whose value is one point for the whole launch (constants, parameters, launch
    dimensions and arithmetic on them) are held as one int ``v<k>``; the others as a range
    ``l<k>``, ``h<k>``. Only the slots the verdict reads are computed. Checks with indirect
    accesses (their byte sets come from the allocation table), expanded accesses or
    parameter-table reads (``PARAMX``), non-idempotent atomics or unbounded loops have no
    fast path.
    """
    if check.not_proven or any(a.indirect or a.expand_slot >= 0 for a in check.accesses):
        return None
    if any(op == 25 for op, *_ in check.program):
        return None  # PARAMX: sets of values read from the buffer, the general evaluator
    bad_atomics = [k for k, a in enumerate(check.accesses) if a.kind == ATOMIC_BAD]
    if len(bad_atomics) > 1 or (bad_atomics and check.pairs):
        # The clobbered set then joins several atomics and pairs: the general evaluator.
        return None
    bad = bad_atomics[0] if bad_atomics else None
    needed = _needed(check) if bad is None else _needed_slots(
        check, [check.accesses[bad].addr_slot, check.accesses[bad].guard_slot])
    # The body runs inside fast() itself (one Python call per evaluation): every line
    # emitted below is indented one more level by the wrapper at the end.
    lines = ["    b0, b1, b2 = block",
             "    g0, g1, g2 = grid",
             "    if not (b0 > 0 and b1 > 0 and b2 > 0 and g0 > 0 and g1 > 0 and g2 > 0):",
             "        raise _Fallback"]
    emit = lines.append
    reads = sorted({(a, b) for k, (op, a, b, _, _) in enumerate(check.program)
                    if op == 1 and k in needed})
    fields = _param_struct(reads)
    if fields is not None:
        fmt, names = fields
        emit(f"    {', '.join(names)}, = _unpack('{fmt}', params)")
    dims = ("b0", "b1", "b2", "g0", "g1", "g2")
    point: dict[int, str] = {}  # slot -> expression of its single value
    consts: dict[int, int] = {}  # slot -> compile-time constant

    alias: dict[int, tuple[str, str]] = {}  # slot -> the names of an equal range

    def lo(k):
        return point.get(k) or alias.get(k, (f"l{k}",))[0]

    def hi(k):
        return point.get(k) or alias.get(k, ("", f"h{k}"))[1]

    def op_of(k):
        return check.program[k][0]

    for k, (op, a, b, c, d) in enumerate(check.program):
        if k not in needed:
            continue
        if op == 0:
            point[k] = f"({c})"
            consts[k] = c
        elif op == 1:
            if fields is not None:
                point[k] = f"p{a}_{b}"
            else:
                emit(f"    v{k} = int.from_bytes(params[{a}:{a + b}], 'little')")
                point[k] = f"v{k}"
        elif op == 2:
            point[k] = dims[a]
        elif op == 3:
            # Thread and block indices start at 0: the literal, folded where it is used.
            emit(f"    h{k} = {'31' if a == 6 else dims[a] + ' - 1'}")
            alias[k] = "0", f"h{k}"
        elif op == 4:
            emit(f"    h{k} = {(1 << a) - 1}")
            alias[k] = "0", f"h{k}"
        elif op == 5:
            if a in point and b in point:
                emit(f"    v{k} = {point[a]} + {point[b]}")
                point[k] = f"v{k}"
            elif lo(a) == "0" or lo(b) == "0":
                emit(f"    h{k} = {hi(a)} + {hi(b)}")
                alias[k] = lo(b) if lo(a) == "0" else lo(a), f"h{k}"
            else:
                emit(f"    l{k}, h{k} = {lo(a)} + {lo(b)}, {hi(a)} + {hi(b)}")
        elif op == 6:
            if a in point and b in point:
                emit(f"    v{k} = {point[a]} * {point[b]}")
                point[k] = f"v{k}"
            elif a in consts or b in consts:
                f, x = (consts[a], b) if a in consts else (consts[b], a)
                if f >= 0:
                    emit(f"    l{k}, h{k} = {f} * {lo(x)}, {f} * {hi(x)}")
                else:
                    emit(f"    l{k}, h{k} = {f} * {hi(x)}, {f} * {lo(x)}")
            elif (a in point or b in point) and (point.get(a) in dims or
                                                 point.get(b) in dims):
                # A launch dimension: positive here (checked on entry).
                f, x = (point[a], b) if point.get(a) in dims else (point[b], a)
                if lo(x) == "0":
                    emit(f"    h{k} = {f} * {hi(x)}")
                    alias[k] = "0", f"h{k}"
                else:
                    emit(f"    l{k}, h{k} = {f} * {lo(x)}, {f} * {hi(x)}")
            elif a in point or b in point:
                f, x = (point[a], b) if a in point else (point[b], a)
                emit(f"    l{k}, h{k} = ({f} * {lo(x)}, {f} * {hi(x)}) if {f} >= 0 else "
                     f"({f} * {hi(x)}, {f} * {lo(x)})")
            else:
                emit(f"    l{k}, h{k} = _mul({lo(a)}, {hi(a)}, {lo(b)}, {hi(b)})")
        elif op == 7:
            lo_r = -(1 << (b - 1)) if c else 0
            hi_r = lo_r + (1 << b) - 1
            if a in point:
                # One launch-constant value: wrapping it is exact.
                x = point[a]
                if op_of(a) == 1 and c and check.program[a][2] * 8 == b:
                    # An unsigned parameter of this width read as signed.
                    emit(f"    v{k} = {x} - {1 << b} if {x} > {hi_r} else {x}")
                else:
                    emit(f"    v{k} = {x} if {lo_r} <= {x} <= {hi_r} else "
                         f"({x} - {lo_r}) % {1 << b} + {lo_r}")
                point[k] = f"v{k}"
            else:
                emit(f"    if {lo(a)} < {lo_r} or {hi(a)} > {hi_r}:")
                emit("        raise _Fallback")
                alias[k] = lo(a), hi(a)  # the identity: no copy
        elif op in (8, 9):
            f = "min" if op == 8 else "max"
            if a in point and b in point:
                emit(f"    v{k} = {f}({point[a]}, {point[b]})")
                point[k] = f"v{k}"
            else:
                emit(f"    l{k}, h{k} = {f}({lo(a)}, {lo(b)}), {f}({hi(a)}, {hi(b)})")
        elif op == 10:
            # The general evaluator keeps two pieces unless they touch or overlap.
            emit(f"    if {lo(b)} > {hi(a)} + 1 or {lo(a)} > {hi(b)} + 1:")
            emit("        raise _Fallback")
            emit(f"    l{k}, h{k} = min({lo(a)}, {lo(b)}), max({hi(a)}, {hi(b)})")
        elif op in (11, 12, 14, 15, 16):
            emit(f"    l{k}, h{k} = {_BINARY[op]}({lo(a)}, {hi(a)}, {lo(b)}, {hi(b)})")
        elif op == 13:
            if a in point:
                emit(f"    v{k} = {point[a]} >> {b}")
                point[k] = f"v{k}"
            else:
                emit(f"    l{k}, h{k} = {lo(a)} >> {b}, {hi(a)} >> {b}")
        elif op == 17:
            new_lo, new_hi = lo(a), hi(a)
            if b >= 0:
                emit(f"    l{k} = {lo(a)} if {lo(a)} > {lo(b)} else {lo(b)}")
                new_lo = f"l{k}"
            if c >= 0:
                emit(f"    h{k} = {hi(a)} if {hi(a)} < {hi(c)} else {hi(c)}")
                new_hi = f"h{k}"
            emit(f"    if {new_lo} > {new_hi}:")
            emit("        raise _Fallback")
            alias[k] = new_lo, new_hi
        elif op == 18:
            if a < 0:
                return None  # unbounded iteration count: never a single finite range
            alias[k] = lo(a), hi(a)
        elif op == 19:
            emit(f"    l{k}, h{k} = _tripmax({lo(a)}, {hi(a)}, {lo(b)}, {hi(b)}, {lo(c)}, "
                 f"{hi(c)}, {d & 0xFF}, {bool((d >> 8) & 1)}, {d >> 9})")
        elif op == 20:
            emit(f"    l{k}, h{k} = _neq({lo(a)}, {hi(a)}, {lo(b)}, {hi(b)})")
        elif op == 21:
            emit(f"    l{k}, h{k} = _cmp({lo(a)}, {hi(a)}, {lo(b)}, {hi(b)}, {c})")
        elif op == 22:
            emit(f"    l{k}, h{k} = _pow2({lo(a)}, {hi(a)}, {b})")
        elif op == 23:
            emit(f"    l{k}, h{k} = _shrv({lo(a)}, {hi(a)}, {lo(b)}, {hi(b)}, {c})")
        elif op == 24:
            # A gated value with its condition false is empty: the general evaluator.
            emit(f"    if {hi(b)} <= 0:")
            emit("        raise _Fallback")
            alias[k] = lo(a), hi(a)
        else:
            return None
    if bad is not None:
        # The general evaluator stops at the first non-idempotent atomic that may run; one
        # whose guard is false for the instance runs nowhere: the general evaluator says so.
        slot, guard = check.accesses[bad].addr_slot, check.accesses[bad].guard_slot
        if guard >= 0:
            emit(f"    if {hi(guard)} <= 0:")
            emit("        raise _Fallback")
        emit(f"    return _atomic({lo(slot)}, {hi(slot)} + {check.accesses[bad].width})")
        return _wrap_body(lines) + _NO_HITS
    # The verdict is settled by the first pair that may overlap: return at once, with the
    # clobbered set of every pair computed on first use by _all_hits (the same slots, and
    # the same tests over all pairs). The last pair's hit is the whole clobbered set.
    slot_lines = list(lines)
    last = len(check.pairs) - 1
    for index, (w, r) in enumerate(check.pairs):
        ws, we, rs, re_, test = _pair_exprs(check, w, r, lo, hi)
        emit(f"    if {_runs(check, (w, r), hi)}{ws} < {re_} and {rs} < {we}:")
        emit(f"        if not {test}:")
        if index == last:
            emit(f"            return _only({index}, max({ws}, {rs}), min({we}, {re_}))")
        else:
            emit(f"            return _deferred({index}, params, grid, block)")
    emit("    return _IDEMPOTENT")
    hits = ["def _all_hits(params, grid, block):"] + slot_lines + ["    hits = []"]
    for w, r in check.pairs:
        ws, we, rs, re_, test = _pair_exprs(check, w, r, lo, hi)
        hits.append(f"    if {_runs(check, (w, r), hi)}{ws} < {re_} and {rs} < {we}:")
        hits.append(f"        if not {test}:")
        hits.append(f"            hits.append((max({ws}, {rs}), min({we}, {re_})))")
    hits.append("    return hits")
    return _wrap_body(lines) + "\n\n" + "\n".join(hits) + "\n"


def _runs(check: LaunchCheck, accesses, hi) -> str:
    """A condition prefix: every access with a guard may run (its guard is not false)."""
    guards = [check.accesses[k].guard_slot for k in accesses]
    return "".join(f"{hi(g)} > 0 and " for g in guards if g >= 0)


def _pair_exprs(check: LaunchCheck, w: int, r: int, lo, hi):
    """Python expressions of a pair: write start and stop, read start and stop, and the
    lattice test proving the pair's bytes disjoint."""
    aw, ar = check.accesses[w], check.accesses[r]
    ws, we = lo(aw.addr_slot), f"{hi(aw.addr_slot)} + {aw.width}"
    rs, re_ = lo(ar.addr_slot), f"{hi(ar.addr_slot)} + {ar.width}"
    return ws, we, rs, re_, _lattice_expr(check, w, r, lo, hi)


def _wrap_body(lines: list[str]) -> str:
    """``fast()``: the general evaluator for allocation tables, else the body, falling back
    to the general evaluator whenever the body leaves its single-range case."""
    head = ["def fast(params, grid, block, allocations=None):",
            "    if allocations is not None:",
            "        return _general(params, grid, block, allocations)",
            "    try:"]
    tail = ["    except (_Fallback, ValueError, TypeError):",
            "        return _general(params, grid, block, None)"]
    return "\n".join(head + ["    " + line for line in lines] + tail) + "\n"


_NO_HITS = "\n\ndef _all_hits(params, grid, block):\n    return []\n"
_FORMATS = {1: "B", 2: "H", 4: "I", 8: "Q"}


def _param_struct(reads):
    """``(struct format, names)`` reading every ``(offset, size)`` at once, or ``None``."""
    fmt, names, pos = "<", [], 0
    for offset, size in reads:
        if size not in _FORMATS or offset < pos:
            return None
        fmt += f"{offset - pos}x" if offset > pos else ""
        fmt += _FORMATS[size]
        names.append(f"p{offset}_{size}")
        pos = offset + size
    return (fmt, names) if names else None


def _lattice_expr(check: LaunchCheck, w: int, r: int, lo, hi) -> str:
    """A Python expression: the exact lattice test proves the pair's bytes disjoint.

    It mirrors :func:`kernelcheck.launch.evaluate._lattice_disjoint`: every constant and
    coefficient must be one point, and the atoms' ranges bound the variables.
    """
    aw, ar = check.accesses[w], check.accesses[r]
    if aw.const_slot < 0 or ar.const_slot < 0:
        return "False"
    diff = f"{lo(aw.const_slot)} - {lo(ar.const_slot)}"
    # Equal atoms with equal coefficients on both sides: equal values cancel them, so the
    # lattice test answers "may overlap" exactly when the constant difference is in range.
    shortcut = (f"not ({-(aw.width - 1)} <= {diff} <= {ar.width - 1}) and "
                if aw.atoms == ar.atoms else "")
    points = [aw.const_slot, ar.const_slot] + [c for a in (aw, ar) for c, _ in a.atoms]
    conds = [f"{lo(p)} == {hi(p)}" for p in dict.fromkeys(points) if lo(p) != hi(p)]
    if aw.atoms == ar.atoms and len(aw.atoms) == 1:
        # c*x - c*y with x, y in [l, h]: one term c*t, t in [l - h, h - l] (the merge
        # lattice_may_overlap makes), decided in closed form by _lattice_sym.
        (coef, atom), = aw.atoms
        c = check.program[coef][3] if check.program[coef][0] == 0 else None
        span, low, high = f"{hi(atom)} - {lo(atom)}", -(aw.width - 1), ar.width - 1
        if c:
            # The coefficient is a compile-time constant: _lattice_sym inlined.
            c = abs(c)
            call = (f"max(-({span}), -(({diff} - ({low})) // {c})) > "
                    f"min({span}, ({high} - ({diff})) // {c})")
        else:
            call = f"not _lattice_sym({diff}, {lo(coef)}, {span}, {low}, {high})"
        return "(" + " and ".join(conds + [call]) + ")"
    terms = []
    for sign, acc in ((1, aw), (-1, ar)):
        for coef, atom in acc.atoms:
            s = lo(coef) if sign > 0 else f"-{lo(coef)}"
            terms.append(f"({s}, {lo(atom)}, {hi(atom)})")
    call = (f"{shortcut}not _lattice({diff}, "
            f"({', '.join(terms)}{',' if len(terms) == 1 else ''}), "
            f"{-(aw.width - 1)}, {ar.width - 1})")
    return "(" + " and ".join(conds + [call]) + ")"


def compile_check(check: LaunchCheck):
    """A verdict function ``f(params, grid, block, allocations=None)`` for ``check``.

    ``grid`` and ``block`` must be 3-tuples of positive ints. The function is compiled
    once and cached on ``check``.

    Examples
    --------
    >>> from kernelcheck.launch.check import LaunchCheck
    >>> compile_check(LaunchCheck("empty", 0, (), (), ()))(b"", (1, 1, 1), (1, 1, 1)).verdict
    'idempotent'
    """
    cached = check.compiled
    if cached is not None:
        return cached
    from kernelcheck.launch import evaluate as ev

    def general(params, grid, block, allocations=None):
        return ev.evaluate_general(check, params, grid, block, allocations)

    source = compiled_source(check)
    if source is None:
        run = general
    else:
        verdict_idem = ev.InstanceVerdict(
            "idempotent", "disjoint" if check.pairs else "no_clobber",
            "every written byte range is disjoint from every read range")

        labels = [f"{check.accesses[w].label} may overlap {check.accesses[r].label}"
                  for w, r in check.pairs]

        verdict_new = tuple.__new__  # InstanceVerdict(...) without its Python __new__
        verdict_type = ev.InstanceVerdict

        def only(index, start, stop):
            return verdict_new(verdict_type, ("not_idempotent", "overlap", labels[index],
                                              IntervalSet.single(start, stop)))

        def deferred(index, params, grid, block):
            clobbered = DeferredIntervalSet(namespace["_all_hits"], params, grid, block)
            return verdict_new(verdict_type, ("not_idempotent", "overlap", labels[index],
                                              clobbered))

        bad = next((a for a in check.accesses if a.kind == ATOMIC_BAD), None)
        atomic_detail = f"non-idempotent atomic {bad.label} may execute" if bad else ""

        def atomic(start, stop):
            return ev.InstanceVerdict("not_idempotent", "non_idempotent_atomic",
                                      atomic_detail, IntervalSet.single(start, stop))

        namespace = {"_mul": _mul, "_div": _div, "_rem": _rem, "_and": _and, "_or": _or,
                     "_xor": _xor, "_wrap": _wrap, "_bound": _bound, "_neq": _neq,
                     "_tripmax": _tripmax, "_cmp": _cmp, "_pow2": _pow2, "_shrv": _shrv,
                     "_Fallback": _Fallback, "_IDEMPOTENT": verdict_idem,
                     "_only": only, "_deferred": deferred,
                     "_lattice": ev.lattice_may_overlap, "_lattice_sym": _lattice_sym,
                     "_general": general, "_unpack": struct.unpack_from,
                     "_atomic": atomic}
        exec(compile(source, f"<launch check {check.kernel}>", "exec"), namespace)  # noqa: S102
        run = namespace["fast"]

    object.__setattr__(check, "compiled", run)
    return run
