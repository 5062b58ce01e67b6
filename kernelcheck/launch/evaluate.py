"""Evaluate a :class:`~kernelcheck.launch.check.LaunchCheck` for one kernel instance.

:func:`evaluate` runs the interval program over the instance's parameter bytes and launch
dimensions, turns each access into the set of bytes it may touch, and decides:

* ``not_idempotent`` (rule ``non_idempotent_atomic``) when a non-idempotent global atomic
  may execute;
* ``not_idempotent`` (rule ``overlap``) when some (write, read) pair may share a byte that
  neither the interval test nor the exact lattice test excludes; ``clobbered`` holds those
  bytes (a superset of the bytes both read and written, which is what recovery must save);
* ``not_proven`` when some access of a pair has no known byte set (an index may wrap, or
  an indirect access without an allocation table);
* ``idempotent`` otherwise.

Soundness: every slot evaluates to a superset of the values its term takes over all threads
that execute the access (interval arithmetic over thread ranges; ``BOUND`` intersects with
path-guard facts; ``WRAP`` is the identity when the range fits, splits in two when it crosses
one boundary, and is invalid otherwise). Two accesses whose byte supersets are disjoint
cannot clobber. The lattice test (:func:`lattice_may_overlap`) decides exactly whether the
affine forms can meet over the atom ranges, and answers "may overlap" past its budget.
"""

from __future__ import annotations

from math import gcd
from typing import NamedTuple

from kernelcheck.analysis.intervals import IntervalSet
from kernelcheck.launch.check import (
    ATOMIC_BAD,
    EXPAND_TVARS,
    IN_MODULE,
    LaunchCheck,
    and_clearing_low_bits,
    bitwise_point,
    slot_refs,
)

__all__ = ["InstanceVerdict", "evaluate", "evaluate_general", "compile_check",
           "lattice_may_overlap", "residue_disjoint_at_launch", "expanded_byte_sets",
           "pack_params", "sharp_clobbered", "affine_images", "AFFINE_BUDGET", "EXPAND_MAX",
           "PARAMX_SPAN"]

INF = 1 << 256
_BUDGET = 4096
#: Addresses :func:`sharp_clobbered` may enumerate per access (beyond it, the interval byte
#: set of the access stands).
AFFINE_BUDGET = 1 << 18
#: Byte ranges an image keeps at most (the narrowest holes close first).
AFFINE_RANGES = 1024


class InstanceVerdict(NamedTuple):
    """The verdict of one instance: ``verdict``, the rule that ``decided_by``, ``detail``
    (words for people), and ``clobbered`` (bytes recovery must save; ``None`` if unknown).

    ``clobbered`` is always a complete set when not ``None``; the compiled evaluator may
    hand a :class:`~kernelcheck.analysis.intervals.DeferredIntervalSet`, which computes its
    ranges the first time they are read.

    Immutable, hashable and compared by value. A named tuple rather than a frozen
    dataclass: it is built on every launch, and a frozen dataclass costs about four times
    as much to construct (one guarded ``__setattr__`` per field).
    """

    verdict: str
    decided_by: str
    detail: str = ""
    clobbered: IntervalSet | None = None


def pack_params(layout, values) -> bytes:
    """Build a parameter buffer from ``(offset, size, value)`` triples (little-endian)."""
    size = max((o + s for o, s, _ in layout), default=0)
    buf = bytearray(size)
    for offset, width, value in layout:
        buf[offset:offset + width] = (int(value) & ((1 << (8 * width)) - 1)).to_bytes(
            width, "little")
    del values
    return bytes(buf)


def _norm(pieces):
    pieces.sort()
    out = []
    for lo, hi in pieces:
        if out and lo <= out[-1][1] + 1:
            if hi > out[-1][1]:
                out[-1] = (out[-1][0], hi)
        else:
            out.append((lo, hi))
    if len(out) > 8:
        out = [(out[0][0], max(h for _, h in out))]
    return out


def _hull(v):
    return v[0][0], max(h for _, h in v)


def _run(program, params: bytes, grid, block):
    """Evaluate every slot: a list of (lo, hi) closed ranges, [] (empty) or None (invalid).

    Also returns ``exact``: per slot, whether every WRAP below it was the identity on the
    values of its thread-dependent operand. The affine forms of the lattice test look
    through wraps of thread-dependent terms, so such a wrap must change no value; a wrap of
    a launch constant (one value for every thread, ``fixed`` below) may fold its point: the
    form keeps that term whole in its constant part, computed by the program as it is.
    A thread-dependent value can be one point too (one thread, a narrowed range): folding
    it is not the identity, and the form's value would differ from the address.
    """
    vals, exact, _ = _run_all(program, params, grid, block)
    return vals, exact


def _run_all(program, params: bytes, grid, block):
    """:func:`_run`, also returning ``fixed``: per slot, computed from parameters,
    dimensions and constants only."""
    dims = (block[0], block[1], block[2], grid[0], grid[1], grid[2])
    vals: list = []
    exact: list = []
    fixed: list = []
    for record in program:
        v, ex, fx = _step(record, vals, exact, fixed, params, dims, grid, block)
        vals.append(v)
        exact.append(ex)
        fixed.append(fx)
    return vals, exact, fixed


def _step(record, vals, exact, fixed, params, dims, grid, block):
    """``(value, exact, fixed)`` of one program record over the slots before it."""
    op, a, b, c, d = record
    ex = True
    if op in (0, 1, 2):
        fx = True
    elif op in (3, 4, 10, 18):
        fx = False
    elif op in (13, 22, 7, 25):
        fx = fixed[a]
    elif op == 17:
        # A bound is its argument's value, but the affine forms (is_launch_constant) count
        # the bounds' terms too: a bound by a thread's index is not one launch constant,
        # and a wrap that folds it is not the identity on the form.
        fx = fixed[a] and (b < 0 or fixed[b]) and (c < 0 or fixed[c])
    elif op == 19:
        fx = fixed[a] and fixed[b] and fixed[c]
    else:
        fx = fixed[a] and fixed[b]
    if op == 0:
        v = [(c, c)]
    elif op == 1:
        x = int.from_bytes(params[a:a + b], "little")
        v = [(x, x)]
    elif op == 2:
        v = [(dims[a], dims[a])]
    elif op == 3:
        top = 31 if a == 6 else (block[a] if a < 3 else grid[a - 3]) - 1
        v = [(0, top)] if top >= 0 else []
    elif op == 4:
        v = [(0, (1 << a) - 1)]
    elif op == 7:
        v, ex = _wrap(vals[a], b, c)
        ex = (ex or fixed[a]) and exact[a]
    elif op == 17:
        v = _bound(vals[a], vals[b] if b >= 0 else None, vals[c] if c >= 0 else None)
        ex = exact[a]
    elif op == 13:
        v = _shr(vals[a], b)
        ex = exact[a]
    elif op == 18:
        v = [(0, INF)] if a < 0 else vals[a]
    elif op == 19:
        v = _tripmax(vals[a], vals[b], vals[c], d & 0xFF, bool((d >> 8) & 1), d >> 9)
    elif op == 20:
        v = _neq(vals[a], vals[b])
        ex = exact[a]
    elif op == 21:
        v = _cmp(vals[a], vals[b], c)
    elif op == 22:
        v = _pow2(vals[a], b)
        ex = exact[a]
    elif op == 23:
        v = _shrv(vals[a], vals[b], c)
        ex = exact[a] and exact[b]
    elif op == 24:
        v = [] if _cannot_run(vals, b) else vals[a]
        ex = exact[a]
    elif op == 25:
        v = _paramx(vals[a], b, params)
        ex = exact[a]
    else:
        v = _binary(op, vals[a], vals[b])
        ex = exact[a] and exact[b]
    return v, ex, fx


#: The most parameter-buffer offsets a ``PARAMX`` record reads one by one; a wider offset
#: range gives every value of the width (a superset of what any of those offsets holds).
PARAMX_SPAN = 1024


def _paramx(offsets, size, params):
    """The values of ``size`` bytes of ``params`` at every offset in ``offsets`` that is a
    multiple of ``size``.

    A load of the parameter buffer (``ld.param``, SASS ``LDC``) at an address that is not
    aligned to its size does not read: it faults (PTX ISA: addresses must be naturally
    aligned; the buffer itself starts 16-byte aligned), so a range of offsets ``8*k + 64``
    reads only its multiples of 8, not the bytes between table entries. Invalid when some
    offset of the range is outside the buffer: what the kernel reads there is not known
    (the table entries cannot be read exactly).
    """
    if offsets is None or not offsets:
        return offsets
    lo, hi = _hull(offsets)
    if lo < 0 or hi + size > len(params):
        return None
    if sum(h - lo_ + 1 for lo_, h in offsets) > PARAMX_SPAN:
        return [(0, (1 << (8 * size)) - 1)]
    seen = sorted({int.from_bytes(params[o:o + size], "little")
                   for lo_, h in offsets for o in range(lo_, h + 1) if o % size == 0})
    return _norm([(x, x) for x in seen])


def _wrap(v, bits, signed):
    if v is None:
        return None, False
    if not v:
        return v, True
    lo_r = -(1 << (bits - 1)) if signed else 0
    hi_r = lo_r + (1 << bits) - 1
    lo, hi = _hull(v)
    if lo >= lo_r and hi <= hi_r:
        return v, True
    if lo == hi:  # one value: wrapping it is exact, but not the identity
        x = (lo - lo_r) % (1 << bits) + lo_r
        return [(x, x)], False
    if hi - lo >= 1 << bits:
        # Every residue is possible: the whole range of the width (a later bound on the
        # wrapped value, from a guard, still narrows it).
        return [(lo_r, hi_r)], False
    mod = 1 << bits
    out = []
    for plo, phi in v:
        # Shift so plo lands in range; the piece then crosses at most one boundary.
        shift = ((plo - lo_r) // mod) * mod
        qlo, qhi = plo - shift, phi - shift
        if qhi <= hi_r:
            out.append((qlo, qhi))
        else:
            out.append((qlo, hi_r))
            out.append((lo_r, qhi - mod))
    return _norm(out), False


def _cmp(x, y, op):
    """``[(0, 0)]`` when no values of ``x`` and ``y`` satisfy comparison ``op`` (an index
    into :data:`~kernelcheck.launch.check.CMP_NAMES`), ``[(1, 1)]`` when all do, else
    ``[(0, 1)]``; ``[]`` when an operand has no value, ``None`` when one is invalid."""
    if x is None or y is None:
        return None
    if not x or not y:
        return []
    a, b = _hull(x)
    c, d = _hull(y)
    if op == 0:  # lt
        true, false = b < c, a >= d
    elif op == 1:  # le
        true, false = b <= c, a > d
    elif op == 2:  # gt
        true, false = a > d, b <= c
    elif op == 3:  # ge
        true, false = a >= d, b < c
    else:
        same = a == b == c == d
        apart = not any(lo <= h and l2 <= hi for lo, hi in x for l2, h in y)
        true, false = (same, apart) if op == 4 else (apart, same)
    return [(1, 1)] if true else [(0, 0)] if false else [(0, 1)]


def _cannot_run(vals, slot) -> bool:
    """Whether the guard in ``slot`` is false for every value: the access cannot run."""
    if slot < 0:
        return False
    g = vals[slot]
    return g is not None and (not g or _hull(g)[1] <= 0)


def _pow2(v, width):
    """``2**min(s, width)`` for shift amounts ``s`` in ``v`` (unsigned, already wrapped)."""
    if v is None or not v:
        return v
    lo, hi = _hull(v)
    if lo < 0:
        return None
    return [(1 << min(lo, width), 1 << min(hi, width))]


def _shrv(v, amount, width):
    """``floor(x / 2**min(s, width))`` for ``x`` in ``v`` and ``s`` in ``amount``: the
    quotient rises with ``x`` and moves toward 0 as the divisor grows, so the extremes are
    at the corners."""
    if v is None or amount is None:
        return None
    if not v or not amount:
        return []
    s_lo, s_hi = _hull(amount)
    if s_lo < 0:
        return None
    lo, hi = _hull(v)
    ds = (1 << min(s_lo, width), 1 << min(s_hi, width))
    qs = [x // d for x in (lo, hi) for d in ds]
    return [(min(qs), max(qs))]


def _bound(v, lo_v, hi_v):
    if v is None or not v:
        return v
    lo_cap, hi_cap = -INF, INF
    if lo_v is not None:
        if not lo_v:
            return []
        lo_cap = lo_v[0][0]
    if hi_v is not None:
        if not hi_v:
            return []
        hi_cap = _hull(hi_v)[1]
    out = [(max(lo, lo_cap), min(hi, hi_cap)) for lo, hi in v]
    return [p for p in out if p[0] <= p[1]]


def _neq(v, other):
    """``v`` without the single value ``other`` (a ``!=`` guard), when that is a point."""
    if v is None or not v or other is None or len(other) != 1 or other[0][0] != other[0][1]:
        return v
    c = other[0][0]
    out = []
    for lo, hi in v:
        if lo <= c <= hi:
            if lo < c:
                out.append((lo, c - 1))
            if c < hi:
                out.append((c + 1, hi))
        else:
            out.append((lo, hi))
    return out


def _tripmax(x0, step, bound, bits, signed, mode=0):
    """``[(0, kmax)]``: iteration ``k`` starts only if the test held for every ``j < k``.

    Mode 0 (``x < b``, step > 0): ``k <= (b - 1 - x0) // step + 1``. Mode 1 (``x > b``,
    step < 0): ``k <= (x0 - b - 1) // -step + 1``. Mode 2 (``x != b``, step exactly -1 with
    ``x0 >= b``, or +1 with ``x0 <= b``): ``k <= |x0 - b|``. ``None`` when a tested value
    may wrap around (the mathematical test then differs from the machine's).
    """
    if x0 is None or step is None or bound is None:
        return None
    if not x0 or not step or not bound:
        # No value reaches the loop's test (the guards of its header are false at this
        # launch): the loop does not run, and nothing that depends on its count does.
        return []
    x_lo, x_hi = _hull(x0)
    s_lo, s_hi = _hull(step)
    b_lo, b_hi = _hull(bound)
    if max(abs(x_lo), abs(x_hi), abs(b_lo), abs(b_hi), abs(s_lo), abs(s_hi)) >= INF // 2:
        return None
    lo_r = -(1 << (bits - 1)) if signed else 0
    hi_r = lo_r + (1 << bits) - 1
    if x_lo < lo_r or x_hi > hi_r:
        return None
    if mode == 0:
        if s_lo <= 0:
            return None
        kmax = max(0, (b_hi - 1 - x_lo) // s_lo + 1)
        if x_hi + kmax * s_hi > hi_r:
            return None  # a tested value may wrap around: the trip count is not modelled
        return [(0, kmax)]
    if mode == 1:
        if s_hi >= 0:
            return None
        kmax = max(0, (x_hi - b_lo - 1) // -s_hi + 1)
        if x_lo + kmax * s_lo < lo_r:
            return None
        return [(0, kmax)]
    if mode == 2 and s_lo == s_hi == -1 and x_lo >= b_hi:
        return [(0, x_hi - b_lo)]
    if mode == 2 and s_lo == s_hi == 1 and x_hi <= b_lo:
        return [(0, b_hi - x_lo)]
    if mode == 2 and s_lo == s_hi and x_lo == x_hi and b_lo == b_hi and s_lo:
        # A count by ``s`` toward the bound (``k - k % 4`` down by 4 to 0): the test fails
        # at iteration ``(b - x0) / s`` when ``s`` divides the distance; otherwise the
        # value steps over the bound and wraps around, which is not modelled.
        distance = b_lo - x_lo
        if distance % s_lo or (distance and (distance > 0) != (s_lo > 0)):
            return None
        return [(0, distance // s_lo)]
    return None


def _binary(op, x, y):
    if x is None or y is None:
        return None
    if op == 10:  # JOIN
        return _norm(list(x) + list(y))
    if not x or not y:
        return []
    if op == 5:
        if len(x) == 1 and len(y) == 1:
            return [(x[0][0] + y[0][0], x[0][1] + y[0][1])]
        return _norm([(a + c, b + d) for a, b in x for c, d in y])
    if op == 6:
        out = []
        for a, b in x:
            for c, d in y:
                ps = (a * c, a * d, b * c, b * d)
                out.append((min(ps), max(ps)))
        return _norm(out)
    a, b = _hull(x)
    c, d = _hull(y)
    if a == b and c == d and op in (12, 14, 15, 16):
        # Two points (a launch constant, or one block's entry of a table): the exact value
        # (`n % 4` of this block's `n`, as the kernel computes it).
        point = bitwise_point(op, a, c)
        return None if point is None else [(point, point)]
    if op == 8:
        return [(min(a, c), min(b, d))]
    if op == 9:
        return [(max(a, c), max(b, d))]
    if op == 11:  # DIV, truncating
        if c > 0 or d < 0:
            ps = [_tdiv(p, q) for p in (a, b) for q in (c, d)]
            return [(min(ps), max(ps))]
        return None
    if op == 12:  # REM (sign of the dividend)
        if c <= 0 <= d:
            return None
        m = max(abs(c), abs(d)) - 1
        return [(0 if a >= 0 else -m, m if b > 0 else 0)]
    if op == 14:  # AND
        cleared = (and_clearing_low_bits(a, b, c) if c == d else
                   and_clearing_low_bits(c, d, a) if a == b else None)
        if cleared is not None:
            return [cleared]
        if a >= 0 and c >= 0:
            return [(0, min(b, d))]
        if a >= 0:
            return [(0, b)]
        if c >= 0:
            return [(0, d)]
        return None
    if op in (15, 16):
        if a >= 0 and c >= 0:
            return [(0, (1 << max(b, d).bit_length()) - 1)]
        return None
    return None


def _tdiv(p, q):
    r = abs(p) // abs(q)
    return r if (p >= 0) == (q > 0) else -r


def _shr(v, k):
    if v is None or not v:
        return v
    return [(lo >> k, hi >> k) for lo, hi in v]


def lattice_may_overlap(d: int, terms, lo: int, hi: int, budget: int = _BUDGET) -> bool:
    """Whether ``d + sum(s*z)`` can fall in ``[lo, hi]`` with each ``z`` in its range.

    Parameters
    ----------
    d : int
        The constant difference of the two addresses.
    terms : sequence of (int, int, int)
        ``(coefficient, z_min, z_max)`` per independent integer variable.
    lo, hi : int
        The target range of the difference (``[-(w_write-1), w_read-1]`` for byte overlap).
    budget : int
        Enumeration steps before answering ``True`` (may overlap) without deciding.

    Returns
    -------
    bool
        ``False`` only when no assignment exists (exact); ``True`` when one exists or the
        budget ran out.

    Examples
    --------
    >>> lattice_may_overlap(4, [(8, 0, 100), (-8, 0, 100)], -3, 3)  # a[2i+1] vs a[2j]
    False
    """
    merged: dict[int, list[int]] = {}
    for s, zlo, zhi in terms:
        if s == 0 or zlo > zhi:
            if zlo > zhi:
                return False
            continue
        if s < 0:
            s, zlo, zhi = -s, -zhi, -zlo
        if s in merged:
            merged[s][0] += zlo
            merged[s][1] += zhi
        else:
            merged[s] = [zlo, zhi]
    if len(merged) == 1:
        ((s, (zlo, zhi)),) = merged.items()
        # lo <= d + s*z <= hi for some z in [zlo, zhi] (s > 0): exact, no enumeration.
        return max(zlo, -((d - lo) // s)) <= min(zhi, (hi - d) // s)
    items = _fold_multiples(merged)
    state = [budget]
    return _solve(d, items, lo, hi, state)


def _fold_multiples(merged: dict) -> list:
    """The terms, largest coefficient first, with contiguous multiples folded together.

    ``s*x + k*s*y`` with ``x`` in ``[a, b]``, ``y`` in ``[c, e]`` and ``b - a + 1 >= k``
    takes exactly the values ``s*t`` for ``t`` in ``[a + k*c, b + k*e]``: consecutive values
    of ``y`` shift ``[a, b]`` by ``k``, and the shifted ranges touch or overlap, so their
    union has no hole. Folding is therefore exact, and it turns the nested-stride forms
    of grid-stride and unrolled loops (``8*i + 8*n*k``) into one term.
    """
    items = sorted([s, r[0], r[1]] for s, r in merged.items())
    changed = True
    while changed and len(items) > 1:
        changed = False
        for i, (s, a, b) in enumerate(items):
            for j in range(len(items)):
                t = items[j]
                if j == i or t[0] <= s or t[0] % s:
                    continue
                k = t[0] // s
                if b - a + 1 >= k:
                    items[i] = [s, a + k * t[1], b + k * t[2]]
                    del items[j]
                    changed = True
                    break
            if changed:
                break
    return sorted((tuple(x) for x in items), reverse=True)


def _two_nested(d, items, lo, hi) -> bool:
    """``lo <= d + S*z + s*c <= hi`` for some ``z``, ``c`` in their ranges, when ``S = k*s``:
    exact and in closed form (a symbolic row pitch: ``m[r*n]`` against ``m[r*n + c]``).

    With ``u = k*z + c`` the test is ``u`` in ``U = [ceil((lo-d)/s), floor((hi-d)/s)]``; for
    one ``z`` the values of ``u`` fill ``[k*z + c_lo, k*z + c_hi]``, which meets ``U`` iff
    ``k*z + c_lo <= U_hi`` and ``k*z + c_hi >= U_lo``: an interval of ``z``.
    """
    (big, zlo, zhi), (s, clo, chi) = items
    k = big // s
    u_lo, u_hi = -((d - lo) // s), (hi - d) // s
    if u_lo > u_hi:
        return False
    return max(zlo, -((chi - u_lo) // k)) <= min(zhi, (u_hi - clo) // k)


def _solve(d, items, lo, hi, state) -> bool:
    if not items:
        return lo <= d <= hi
    g = 0
    for s, _, _ in items:
        g = gcd(g, s)
    # d + g*t in [lo, hi] for some integer t is necessary.
    if -((d - lo) // g) > (hi - d) // g:
        return False
    if len(items) == 2 and items[0][0] % items[1][0] == 0:
        return _two_nested(d, items, lo, hi)
    s, zlo, zhi = items[0]
    rest = items[1:]
    r_lo = sum(t * a for t, a, _ in rest)
    r_hi = sum(t * b for t, _, b in rest)
    # need lo - r_hi <= d + s*z <= hi - r_lo
    z_from = max(zlo, -((d + r_hi - lo) // s))
    z_to = min(zhi, (hi - r_lo - d) // s)
    if z_from > z_to:
        return False
    if not rest:
        return True
    if z_to - z_from + 1 > state[0]:
        return True
    for z in range(z_from, z_to + 1):
        state[0] -= 1
        if state[0] < 0:
            return True
        if _solve(d + s * z, rest, lo, hi, state):
            return True
    return False


def _byte_set(check: LaunchCheck, k: int, vals, params: bytes, allocations):
    a = check.accesses[k]
    if _cannot_run(vals, a.guard_slot):
        return IntervalSet()
    v = vals[a.addr_slot]
    if a.indirect == IN_MODULE:
        return IntervalSet() if v is not None and not v else None
    if a.indirect or v is None:
        if allocations is None or a.base_offset < 0:
            return None
        base = int.from_bytes(params[a.base_offset:a.base_offset + a.base_size], "little")
        if v is not None and not v:
            return IntervalSet()
        for start, size in allocations:
            if start <= base < start + size:
                if not _rebase_inside(a, vals, base, start, size):
                    return None
                if v is None:
                    return IntervalSet(((start, start + size),))
                # Both bound the access: the allocation of its base (the in-bounds
                # assumption), and the ranges of its (guard-bounded) address.
                inside = IntervalSet((max(lo, start), min(hi + a.width, start + size))
                                     for lo, hi in v
                                     if lo < start + size and hi + a.width > start)
                # ``v`` is a non-empty superset of the addresses the access takes when it
                # runs. If none of them lies in the allocation, every run of it leaves the
                # allocation: the launch contradicts the in-bounds assumption, and the
                # bytes are unknown (never "none").
                return inside if inside else None
        return None
    return IntervalSet((lo, hi + a.width) for lo, hi in v)


def _rebase_inside(a, vals, base: int, start: int, size: int) -> bool:
    """Whether the other pointer-wide parameters in the access's offset keep its base in the
    allocation ``[start, start + size]`` (end included) for every value (``rebase_slot``,
    :func:`kernelcheck.analysis.bases.rebased_base`); true without such a part.

    When they do, the access is an index from a pointer into the base's allocation and the
    in-bounds assumption bounds it by that allocation; when one value may leave it (a
    parameter that is a pointer difference), the allocation does not bound the access.
    """
    if a.rebase_slot < 0:
        return True
    t = vals[a.rebase_slot]
    if t is None:
        return False
    return all(start <= base + lo and base + hi <= start + size for lo, hi in t)


#: The most block indices an access is expanded over (``expand_slot``); in a larger grid
#: its byte set is computed once over all of them, as for any other access (a superset).
EXPAND_MAX = 4096


def _cone(program, slot: int) -> list[int]:
    """The slots after ``slot`` computed from it (directly or not), in program order."""
    dependent = {slot}
    out = []
    for k in range(slot + 1, len(program)):
        if any(r in dependent for r in slot_refs(program[k])):
            dependent.add(k)
            out.append(k)
    return out


def expanded_byte_sets(check: LaunchCheck, wanted, vals, exact, fixed, params: bytes, grid,
                       block, allocations=None) -> dict:
    """The byte sets of the accesses in ``wanted`` that name an expansion, by access index
    (``None``: unknown); accesses without one, or over more than :data:`EXPAND_MAX` blocks,
    are left out.

    Soundness: every thread that runs the access has one block index ``b`` along the
    expanded dimension. Re-running the slots computed from that ``TVAR`` with it held at
    ``b`` (every other slot keeps its value over the whole launch) gives, by the same
    interval rules as the whole program, a superset of the values each term takes in the
    threads of the blocks with index ``b``: the bytes those threads may touch. The union
    over every ``b`` of the grid covers every thread. A ``PARAMX`` record whose offsets
    are then one point reads exactly the entry the block's threads read (a table of
    pointers and sizes in the parameter buffer becomes one pointer and one size per
    block); an entry that cannot be read exactly (an offset outside the buffer) makes the
    value invalid and the byte set unknown.
    """
    dims = (block[0], block[1], block[2], grid[0], grid[1], grid[2])
    groups: dict[int, list[int]] = {}
    for k in sorted(wanted):
        slot = check.accesses[k].expand_slot
        if 0 <= slot < len(check.program) and check.program[slot][0] == 3 and (
                check.program[slot][1] in EXPAND_TVARS):
            groups.setdefault(slot, []).append(k)
    out: dict = {}
    for slot, ks in groups.items():
        count = dims[check.program[slot][1]]
        if count > EXPAND_MAX:
            continue
        cone = _cone(check.program, slot)
        pv, pe, pf = list(vals), list(exact), list(fixed)
        ranges: dict[int, list] = {k: [] for k in ks}
        unknown: set[int] = set()
        for index in range(count):
            pv[slot] = [(index, index)]
            for j in cone:
                pv[j], pe[j], pf[j] = _step(check.program[j], pv, pe, pf, params, dims, grid,
                                            block)
            for k in ks:
                if k in unknown:
                    continue
                got = _byte_set(check, k, pv, params, allocations)
                if got is None:
                    unknown.add(k)
                else:
                    ranges[k].extend(got.ranges)
        for k in ks:
            out[k] = None if k in unknown else IntervalSet(ranges[k])
    return out


def evaluate(check: LaunchCheck, params: bytes, grid, block,
             allocations=None) -> InstanceVerdict:
    """Decide one instance of the kernel ``check`` was built for.

    Runs the compiled fast path (:mod:`kernelcheck.launch.compiled`), which falls back to
    :func:`evaluate_general` whenever the instance leaves its single-range case; the
    verdict is always the general evaluator's. Parameters and result as for
    :func:`evaluate_general`.

    Examples
    --------
    >>> from kernelcheck.launch.check import LaunchCheck
    >>> evaluate_general(LaunchCheck("e", 0, (), (), ()), b"", (1, 1, 1), (1, 1, 1)).verdict
    'idempotent'
    """
    run = check.compiled
    if run is None:
        from kernelcheck.launch.compiled import compile_check as _compile

        run = _compile(check)
    return run(params, grid, block, allocations)


def evaluate_general(check: LaunchCheck, params: bytes, grid, block,
                     allocations=None) -> InstanceVerdict:
    """Decide one instance of the kernel ``check`` was built for.

    Parameters
    ----------
    check : LaunchCheck
        The kernel's launch check.
    params : bytes
        The kernel parameter buffer (at least ``check.param_size`` bytes).
    grid, block : tuple of 3 int
        Launch dimensions.
    allocations : sequence of (base, size), optional
        Live device allocations; indirect accesses then range over the allocation their base
        pointer points into (accesses are assumed to stay inside it).

    Returns
    -------
    InstanceVerdict

    Examples
    --------
    >>> from kernelcheck.launch.check import LaunchCheck
    >>> evaluate_general(LaunchCheck("e", 0, (), (), ()), b"", (1, 1, 1), (1, 1, 1)).verdict
    'idempotent'
    """
    if check.not_proven:
        return InstanceVerdict("not_proven", "unmodelled", check.not_proven)
    grid = tuple(grid) + (1,) * (3 - len(grid))
    block = tuple(block) + (1,) * (3 - len(block))
    if min(grid) <= 0 or min(block) <= 0:
        return InstanceVerdict("idempotent", "no_threads", "the launch has no threads")
    vals, exact, fixed = _run_all(check.program, params, grid, block)
    wanted = {k for pair in check.pairs for k in pair} | {
        k for k, a in enumerate(check.accesses) if a.kind == ATOMIC_BAD}
    sets: dict = expanded_byte_sets(check, wanted, vals, exact, fixed, params, grid, block,
                                    allocations)
    # Every non-idempotent atomic that may run: the verdict is settled, but the clobbered
    # set recovery saves must cover all of them and every overlapping pair too.
    atomic_detail = ""
    atomic_bytes: IntervalSet | None = IntervalSet()
    for k, a in enumerate(check.accesses):
        if a.kind == ATOMIC_BAD:
            v = vals[a.addr_slot]
            if v is not None and not v or _cannot_run(vals, a.guard_slot):
                continue
            atomic_detail = atomic_detail or f"non-idempotent atomic {a.label} may execute"
            if k not in sets:
                sets[k] = _byte_set(check, k, vals, params, allocations)
            where = sets[k]
            atomic_bytes = None if where is None or atomic_bytes is None else (
                atomic_bytes | where)
    clobbered = IntervalSet()
    unknown = []
    first = ""
    for w, r in check.pairs:
        for k in (w, r):
            if k not in sets:
                sets[k] = _byte_set(check, k, vals, params, allocations)
        ws, rs = sets[w], sets[r]
        if ws is not None and not ws or rs is not None and not rs:
            continue
        if ws is None or rs is None:
            if not (_residue_disjoint(check, w, r, vals) or
                    _module_disjoint(check, w, r, ws, rs, allocations)):
                unknown.append((w, r))
            continue
        common = ws & rs
        if not common:
            continue
        if _lattice_disjoint(check, w, r, vals, exact):
            continue
        clobbered = clobbered | common
        first = first or (f"{check.accesses[w].label} may overlap "
                          f"{check.accesses[r].label}")
    # ``clobbered`` is complete only when every pair's byte ranges were known: otherwise it
    # is ``None`` (unknown), and recovery must fall back to saving whole allocations.
    if atomic_detail:
        total = None if atomic_bytes is None or unknown else atomic_bytes | clobbered
        return InstanceVerdict("not_idempotent", "non_idempotent_atomic", atomic_detail, total)
    if clobbered:
        return InstanceVerdict("not_idempotent", "overlap", first,
                               None if unknown else clobbered)
    if unknown:
        w, r = unknown[0]
        return InstanceVerdict("not_proven", "unknown_range",
                               f"no byte range known for {check.accesses[w].label} or "
                               f"{check.accesses[r].label} in this instance")
    return InstanceVerdict("idempotent", "disjoint" if check.pairs else "no_clobber",
                           "every written byte range is disjoint from every read range")


def sharp_clobbered(check: LaunchCheck, params: bytes, grid, block, allocations=None,
                    budget: int = AFFINE_BUDGET) -> IntervalSet | None:
    """The clobbered set of :func:`evaluate_general`, narrowed by the accesses' affine forms.

    :func:`evaluate_general` adds, for every pair the lattice test cannot separate, all of
    ``ws & rs``: the common part of the two *interval* byte sets. An access whose affine form
    is exact (the premise of the lattice test: its address equals ``c + sum(s*z)`` with each
    atom ``z`` inside its evaluated range) touches only bytes of that form's image, which is
    often far smaller than its hull (rows of a pitched array, every other element). Here
    each counted pair adds ``ws & rs & image(w) & image(r)`` instead, an image being used
    when it has at most ``budget`` addresses. The result is a subset of
    ``evaluate_general(...).clobbered`` and, like it, a superset of every byte that one
    access writes and another reads (pairs and non-idempotent atomics as there).

    Returns ``None`` exactly when :func:`evaluate_general`'s clobbered set is unknown (or
    the instance is ``not_proven``); an empty set when nothing is clobbered.

    Examples
    --------
    >>> from kernelcheck.launch.check import LaunchCheck
    >>> sharp_clobbered(LaunchCheck("e", 0, (), (), ()), b"", (1, 1, 1), (1, 1, 1))
    IntervalSet([])
    """
    if check.not_proven:
        return None
    grid = tuple(grid) + (1,) * (3 - len(grid))
    block = tuple(block) + (1,) * (3 - len(block))
    if min(grid) <= 0 or min(block) <= 0:
        return IntervalSet()
    vals, exact = _run(check.program, params, grid, block)
    sets: dict = {}
    images: dict = {}

    def image(k):
        if k not in images:
            images[k] = _affine_image(check, k, vals, exact, budget)
        return images[k]

    out = IntervalSet()
    for k, a in enumerate(check.accesses):
        if a.kind != ATOMIC_BAD:
            continue
        v = vals[a.addr_slot]
        if v is not None and not v or _cannot_run(vals, a.guard_slot):
            continue
        where = _byte_set(check, k, vals, params, allocations)
        if where is None:
            return None
        img = image(k)
        out = out | (where if img is None else where & img)
    for w, r in check.pairs:
        for k in (w, r):
            if k not in sets:
                sets[k] = _byte_set(check, k, vals, params, allocations)
        ws, rs = sets[w], sets[r]
        if ws is not None and not ws or rs is not None and not rs:
            continue
        if ws is None or rs is None:
            if not (_residue_disjoint(check, w, r, vals) or
                    _module_disjoint(check, w, r, ws, rs, allocations)):
                return None
            continue
        common = ws & rs
        if not common or _lattice_disjoint(check, w, r, vals, exact):
            continue
        for k in (w, r):
            img = image(k)
            if img is not None:
                common = common & img
        out = out | common
    return out


def affine_images(check: LaunchCheck, params: bytes, grid, block,
                  budget: int = AFFINE_BUDGET) -> list[IntervalSet | None]:
    """Per access, the bytes its exact affine form can reach in this instance, or ``None``
    (no exact form, more than ``budget`` addresses, or an image without holes: the access's
    byte hull is then as sharp). Each image is a superset of the bytes the access touches
    (see :func:`sharp_clobbered`); an access that cannot run may still have one."""
    if check.not_proven:
        return [None] * len(check.accesses)
    grid = tuple(grid) + (1,) * (3 - len(grid))
    block = tuple(block) + (1,) * (3 - len(block))
    if min(grid) <= 0 or min(block) <= 0:
        return [None] * len(check.accesses)
    vals, exact = _run(check.program, params, grid, block)
    return [_affine_image(check, k, vals, exact, budget) for k in range(len(check.accesses))]


def _affine_image(check: LaunchCheck, k: int, vals, exact, budget: int) -> IntervalSet | None:
    """Every byte ``c + sum(s*z) + [0, width)`` over the atoms' evaluated ranges, or ``None``
    when the form is not exact for the instance or has more than ``budget`` points."""
    import numpy as np

    a = check.accesses[k]
    if a.indirect or a.const_slot < 0 or not a.atoms or not exact[a.addr_slot]:
        return None
    c = _point(vals, a.const_slot)
    if c is None or not 0 <= c < 1 << 62:
        return None
    terms = []
    lo_total = hi_total = c
    count = 1
    for coef_slot, atom_slot in a.atoms:
        s = _point(vals, coef_slot)
        v = vals[atom_slot]
        if s is None or not v:
            return None
        zlo, zhi = _hull(v)
        if abs(s) * max(abs(zlo), abs(zhi)) >= 1 << 60:
            return None
        count *= sum(hi - lo + 1 for lo, hi in v)
        if count > budget:
            return None
        lo_total += min(s * zlo, s * zhi)
        hi_total += max(s * zlo, s * zhi)
        terms.append((s, v))
    if lo_total < 0 or hi_total >= 1 << 62:
        return None
    if all(len(v) == 1 for _, v in terms):
        # Folded to one stride no wider than the access, the image has no hole: it is the
        # hull, and narrows nothing.
        merged: dict[int, list[int]] = {}
        for s, v in terms:
            (zlo, zhi), = v
            if s < 0:
                s, zlo, zhi = -s, -zhi, -zlo
            got = merged.setdefault(s, [0, 0])
            got[0] += zlo
            got[1] += zhi
        items = _fold_multiples({s: r for s, r in merged.items() if s})
        if len(items) <= 1 and (not items or items[0][0] <= a.width):
            return None
    points = np.zeros(1, dtype=np.int64)
    for s, v in terms:
        zs = np.concatenate([np.arange(lo, hi + 1, dtype=np.int64) for lo, hi in v])
        points = np.unique((points[:, None] + s * zs[None, :]).ravel())
    starts = points + c
    # Addresses closer together than the access width make one byte range.
    breaks = np.flatnonzero(np.diff(starts) > a.width)
    if len(breaks) >= AFFINE_RANGES:
        # Too many pieces to walk at every launch: keep only the widest holes (closing a
        # hole adds bytes, so the image stays a superset).
        gaps = starts[breaks + 1] - starts[breaks]
        keep = np.sort(np.argsort(gaps, kind="stable")[len(breaks) - AFFINE_RANGES + 1:])
        breaks = breaks[keep]
    lo = np.r_[starts[0], starts[breaks + 1]]
    hi = np.r_[starts[breaks], starts[-1]] + a.width
    return IntervalSet(zip(lo.tolist(), hi.tolist(), strict=True))


def _point(vals, slot):
    v = vals[slot]
    if v is None or len(v) != 1 or v[0][0] != v[0][1]:
        return None
    return v[0][0]


def residue_disjoint_at_launch(d: int, coefficients, bits: int, lo: int, hi: int) -> bool:
    """Whether ``d + sum(s*z)`` misses ``[lo, hi]`` for *all* integers ``z``, modulo ``2**bits``.

    Every address is congruent to its affine form modulo ``2**bits`` (wraps included), so two
    addresses differ by ``d`` plus a multiple of ``g = gcd(2**bits, s...)`` whatever values
    the atoms take: when no number of ``[lo, hi]`` is ``d`` modulo ``g``, the two accesses
    never share a byte. No atom range is needed: the test holds for unbounded loops and for
    ranges a wrap splits (``a[2c + 1]`` against ``a[2c]``, through two pointers at launch).

    >>> residue_disjoint_at_launch(4, (8, -8), 64, -3, 3)
    True
    """
    g = 1 << bits if bits > 0 else 0
    if not g:
        return False
    for s in coefficients:
        g = gcd(g, s)
    if g == 1 or hi - lo + 1 >= g:
        return False
    return lo + (d - lo) % g > hi


def _module_disjoint(check, w, r, ws, rs, allocations) -> bool:
    """One access lies in a module variable, the other only in allocations of the table:
    they share no byte (:func:`kernelcheck.analysis.bases.module_base`). Two accesses in
    module variables may share one."""
    if allocations is None:
        return False
    aw, ar = check.accesses[w], check.accesses[r]
    if aw.indirect == IN_MODULE and rs is not None:
        known = rs
    elif ar.indirect == IN_MODULE and ws is not None:
        known = ws
    else:
        return False
    return all(_covered(lo, hi, allocations) for lo, hi in known.ranges)


def _covered(lo: int, hi: int, allocations) -> bool:
    """Whether every byte of ``[lo, hi)`` lies in some allocation."""
    while lo < hi:
        end = next((start + size for start, size in allocations
                    if start <= lo < start + size), None)
        if end is None:
            return False
        lo = end
    return True


def _residue_disjoint(check, w, r, vals) -> bool:
    """The residue test of a pair (:func:`residue_disjoint_at_launch`); it needs no byte
    range, so it also separates accesses whose ranges are unknown or wrap."""
    aw, ar = check.accesses[w], check.accesses[r]
    bits = min(aw.residue_bits, ar.residue_bits)
    if bits <= 0 or aw.const_slot < 0 or ar.const_slot < 0:
        return False
    cw, cr = _point(vals, aw.const_slot), _point(vals, ar.const_slot)
    coefs = [_point(vals, c) for acc in (aw, ar) for c, _ in acc.atoms]
    if cw is None or cr is None or None in coefs:
        return False
    return residue_disjoint_at_launch(cw - cr, coefs, bits, -(aw.width - 1), ar.width - 1)


def _lattice_disjoint(check, w, r, vals, exact) -> bool:
    if _residue_disjoint(check, w, r, vals):
        return True
    aw, ar = check.accesses[w], check.accesses[r]
    if aw.indirect or ar.indirect or aw.const_slot < 0 or ar.const_slot < 0:
        return False
    if not exact[aw.addr_slot] or not exact[ar.addr_slot]:
        return False
    cw, cr = _point(vals, aw.const_slot), _point(vals, ar.const_slot)
    if cw is None or cr is None:
        return False
    terms = []
    for sign, acc in ((1, aw), (-1, ar)):
        for coef_slot, atom_slot in acc.atoms:
            s = _point(vals, coef_slot)
            v = vals[atom_slot]
            if s is None or not v:
                return False
            lo, hi = _hull(v)
            if abs(lo) >= INF // 2 or abs(hi) >= INF // 2:
                return False
            terms.append((sign * s, lo, hi))
    return not lattice_may_overlap(cw - cr, terms, -(aw.width - 1), ar.width - 1)


def compile_check(check: LaunchCheck):
    """A fast verdict function ``f(params, grid, block, allocations=None)`` for ``check``.

    See :func:`kernelcheck.launch.compiled.compile_check`.
    """
    from kernelcheck.launch.compiled import compile_check as _compile

    return _compile(check)
