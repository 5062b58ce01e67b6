"""Z3 proofs of summary facts, over bit-vector encodings of address terms.

:func:`prove_never_overlap` asks Z3 whether a write and a read of a kernel can share a byte
for *any* instance and any two threads. Unsatisfiable means they never can, so the pair
needs no launch-time test (and a kernel whose pairs all go is ``always`` idempotent).

Encoding (sound for the terms it accepts, ``None`` for every other term):

* Terms denote integers. They are encoded as 256-bit vectors, wide enough that the sums and
  products of up to three 64-bit values accepted here never overflow, so bit-vector
  arithmetic is integer arithmetic (:func:`_width` checks the bound before encoding).
* ``Wrap(t, w, s)`` is the low ``w`` bits of ``t``, sign- or zero-extended: exact.
* Parameters are shared by both threads (one instance); thread indices and values the
  analysis does not model (``Opaque``) are separate per thread; launch dimensions are shared,
  with ``1 <= %ntid <= 1024`` and ``1 <= %nctaid < 2**31`` (CUDA limits).
* ``Bound`` and ``NotEq`` nodes are path-guard facts: they hold on every execution of the
  access, so they become constraints of that thread.
* Loop counters, joins, divisions and shifts are not encoded: the query is then not asked.

Each query runs under a time budget (200 ms by default); ``unknown`` or a timeout is "not
proven" and the pair stays in the LaunchCheck. z3 is imported on first use only.
"""

from __future__ import annotations

import time

from kernelcheck.analysis.terms import (
    DIMS,
    Add,
    BitAnd,
    Bound,
    Const,
    Mul,
    NotEq,
    Opaque,
    Param,
    Special,
    Wrap,
)

__all__ = ["SmtResult", "prove_never_overlap", "TIMEOUT_MS"]

TIMEOUT_MS = 200
_WIDTH = 256
_LIMIT = 250  # bits an encoded value may need


class SmtResult:
    """``proved`` (bool), ``status`` (``unsat``/``sat``/``unknown``/``not encoded``), and
    ``seconds`` spent in Z3."""

    __slots__ = ("proved", "status", "seconds")

    def __init__(self, proved: bool, status: str, seconds: float) -> None:
        self.proved, self.status, self.seconds = proved, status, seconds

    def __repr__(self) -> str:
        return f"SmtResult({self.proved}, {self.status!r}, {self.seconds:.4f})"


def _width(t) -> int | None:
    """An upper bound on the bits of ``|t|`` (plus sign), or ``None`` if not encodable."""
    kind = type(t)
    if kind is Const:
        return abs(t.value).bit_length() + 1
    if kind is Param:
        return 8 * t.size + 1
    if kind is Special:
        return 33
    if kind is Opaque:
        return min(t.bits, 64) + 1
    if kind is Wrap:
        return None if _width(t.arg) is None else t.bits + 1
    if kind is Add:
        parts = [_width(a) for a in t.args]
        return None if None in parts else max(parts) + len(parts).bit_length()
    if kind is Mul:
        parts = [_width(a) for a in t.args]
        return None if None in parts else sum(parts)
    if kind is BitAnd:
        parts = [_width(t.a), _width(t.b)]
        return None if None in parts else max(parts)
    if kind is Bound:
        parts = [_width(x) for x in (t.arg, t.lo, t.hi) if x is not None]
        return None if None in parts else max(parts)
    if kind is NotEq:
        parts = [_width(t.arg), _width(t.value)]
        return None if None in parts else max(parts)
    return None


class _Encoder:
    def __init__(self, z3, shared: dict, side: str, facts: list) -> None:
        self.z3, self.shared, self.side, self.facts = z3, shared, side, facts
        self.memo: dict = {}

    def var(self, name: str, bits: int, shared: bool, lo: int = 0, hi: int | None = None):
        z3 = self.z3
        table = self.shared if shared else self.memo
        key = ("var", name)
        if key in table:
            return table[key]
        v = z3.BitVec(f"{name}@{'all' if shared else self.side}", _WIDTH)
        table[key] = v
        hi = (1 << bits) - 1 if hi is None else hi
        self.facts.append(z3.And(v >= lo, v <= hi))  # signed 256-bit: integer order
        return v

    def enc(self, t):
        key = id(t)
        if key in self.memo:
            return self.memo[key]
        out = self._enc(t)
        self.memo[key] = out
        return out

    def _enc(self, t):
        z3 = self.z3
        kind = type(t)
        if kind is Const:
            return z3.BitVecVal(t.value, _WIDTH)
        if kind is Param:
            return self.var(f"param{t.offset}:{t.size}", 8 * t.size, True)
        if kind is Special:
            if t.name in DIMS:
                limit = 1024 if t.name.startswith("%ntid") else (1 << 31) - 1
                return self.var(t.name, 32, True, 1, limit)
            if t.name == "%laneid":
                return self.var(t.name, 5, False)
            dim = self.var(t.name.replace("%tid", "%ntid").replace("%ctaid", "%nctaid"), 32,
                           True, 1, 1024 if t.name.startswith("%tid") else (1 << 31) - 1)
            v = self.var(t.name, 32, False)
            self.facts.append(v < dim)
            return v
        if kind is Opaque:
            return self.var(f"opaque:{t.tag}", min(t.bits, 64), False)
        if kind is Wrap:
            low = z3.Extract(t.bits - 1, 0, self.enc(t.arg))
            ext = _WIDTH - t.bits
            return z3.SignExt(ext, low) if t.signed else z3.ZeroExt(ext, low)
        if kind is Add:
            out = self.enc(t.args[0])
            for a in t.args[1:]:
                out = out + self.enc(a)
            return out
        if kind is Mul:
            out = self.enc(t.args[0])
            for a in t.args[1:]:
                out = out * self.enc(a)
            return out
        if kind is BitAnd:
            return self.enc(t.a) & self.enc(t.b)
        if kind is Bound:
            v = self.enc(t.arg)
            if t.lo is not None:
                self.facts.append(v >= self.enc(t.lo))
            if t.hi is not None:
                self.facts.append(v <= self.enc(t.hi))
            return v
        if kind is NotEq:
            v = self.enc(t.arg)
            self.facts.append(v != self.enc(t.value))
            return v
        raise ValueError(f"not encodable: {kind.__name__}")


def prove_never_overlap(write_addr, write_width: int, read_addr, read_width: int,
                        timeout_ms: int = TIMEOUT_MS) -> SmtResult:
    """Prove that the bytes of a write and of a read never meet, for any instance.

    Parameters
    ----------
    write_addr, read_addr : Term
        Byte addresses with their path-guard facts applied
        (:func:`kernelcheck.analysis.lower.apply_guards`).
    write_width, read_width : int
        Bytes per access.
    timeout_ms : int
        Z3's budget for the query.

    Returns
    -------
    SmtResult
        ``proved`` only when Z3 answers ``unsat``.

    Examples
    --------
    >>> from kernelcheck.analysis.terms import Param, Special, add, mul, wrap
    >>> p, t = Param("a", 0, 8), Special("%tid.x")
    >>> even, odd = wrap(add(p, mul(Const(8), t)), 64, False), wrap(
    ...     add(p, mul(Const(8), t), Const(4)), 64, False)
    >>> prove_never_overlap(odd, 4, even, 4).proved
    True
    >>> prove_never_overlap(even, 8, even, 4).proved
    False
    """
    widths = [_width(write_addr), _width(read_addr)]
    if None in widths or max(widths) > _LIMIT:
        return SmtResult(False, "not encoded", 0.0)
    import z3

    start = time.perf_counter()
    facts: list = []
    shared: dict = {}
    try:
        w = _Encoder(z3, shared, "w", facts).enc(write_addr)
        r = _Encoder(z3, shared, "r", facts).enc(read_addr)
    except (ValueError, z3.Z3Exception):
        return SmtResult(False, "not encoded", time.perf_counter() - start)
    solver = z3.SolverFor("QF_BV")
    solver.set("timeout", int(timeout_ms))
    solver.add(*facts)
    solver.add(w < r + read_width, r < w + write_width)
    answer = solver.check()
    seconds = time.perf_counter() - start
    status = str(answer)
    return SmtResult(answer == z3.unsat, status, seconds)
