"""Byte ranges of accesses and conditions of conditional kernels, in words people read.

A conditional kernel's LaunchCheck decides every instance exactly; what a CUDA programmer
wants to read in a report is the gist of it: ``not idempotent when [out, out + 4*n) overlaps
[in, in + 4*n)``. :func:`symbolic_range` bounds an address term by two linear forms over
launch constants (parameters and launch dimensions), using path-guard facts
(:class:`~kernelcheck.analysis.terms.Bound`) where the guard is tighter than the thread
ranges, and :func:`byte_range_text` renders the half-open byte range.

These texts explain; they do not decide. They read wraps as the identity (the LaunchCheck
checks that for each instance) and give up (``None``) on anything else: loop iteration
counts, joins, divisions, masks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from kernelcheck.analysis.terms import (
    DIMS,
    Add,
    Bound,
    Const,
    Mul,
    NotEq,
    Param,
    Special,
    Term,
    Wrap,
    is_launch_constant,
    render,
)

__all__ = ["Linear", "symbolic_range", "byte_range_text", "render_linear", "merged_conditions"]

_A = TypeVar("_A")

#: Sites shown per side of a merged condition before "and N more".
_SITES_SHOWN = 3

#: A linear form: ``{atom: coefficient}`` with the constant under the key ``None``.
Linear = dict

_THREAD_LIMIT = {
    "%tid.x": "%ntid.x", "%tid.y": "%ntid.y", "%tid.z": "%ntid.z",
    "%ctaid.x": "%nctaid.x", "%ctaid.y": "%nctaid.y", "%ctaid.z": "%nctaid.z",
}


def _lin_add(a: Linear, b: Linear, scale: int = 1) -> Linear:
    out = dict(a)
    for k, v in b.items():
        out[k] = out.get(k, 0) + scale * v
        if out[k] == 0:
            del out[k]
    return out


def _lin_scale(a: Linear, c: int) -> Linear:
    return {k: v * c for k, v in a.items()} if c else {}


def _linear(term: Term) -> Linear | None:
    """``term`` as a linear form over launch-constant atoms (wraps read as the identity)."""
    kind = type(term)
    if kind is Const:
        return {None: term.value} if term.value else {}
    if kind is Wrap:
        return _linear(term.arg)
    if kind is Bound:
        return _linear(term.arg) if is_launch_constant(term.arg) else None
    if kind is Add:
        out: Linear = {}
        for a in term.args:
            part = _linear(a)
            if part is None:
                return None
            out = _lin_add(out, part)
        return out
    if kind is Mul and type(term.args[0]) is Const:
        rest = Mul(term.args[1:]) if len(term.args) > 2 else term.args[1]
        part = _linear(rest)
        return None if part is None else _lin_scale(part, term.args[0].value)
    if is_launch_constant(term):
        return {term: 1}
    return None


def _nonnegative(term: Term) -> bool:
    return (type(term) is Special and term.name in DIMS) or (
        type(term) is Param) or (type(term) is Mul and all(_nonnegative(a) for a in term.args))


def symbolic_range(term: Term) -> tuple[Linear, Linear] | None:
    """Lower and upper linear bounds of ``term`` over every thread of a launch.

    Parameters
    ----------
    term : Term
        An address or index term.

    Returns
    -------
    (Linear, Linear) or None
        ``None`` when the term has a part this module does not bound.

    Examples
    --------
    >>> from kernelcheck.analysis.terms import Cmp, add, mul
    >>> i = add(mul(Special("%ctaid.x"), Special("%ntid.x")), Special("%tid.x"))
    >>> n = Param("n", 8, 4)
    >>> lo, hi = symbolic_range(Bound(i, None, add(n, Const(-1))))
    >>> render_linear(lo), render_linear(hi)
    ('0', 'n - 1')
    """
    kind = type(term)
    if is_launch_constant(term):
        lin = _linear(term)
        return None if lin is None else (lin, lin)
    if kind is Special and term.name in _THREAD_LIMIT:
        return {}, {Special(_THREAD_LIMIT[term.name]): 1, None: -1}
    if kind is Special and term.name == "%laneid":
        return {}, {None: 31}
    if kind is Wrap:
        return symbolic_range(term.arg)
    if kind is Add:
        lo: Linear = {}
        hi: Linear = {}
        for a in term.args:
            part = symbolic_range(a)
            if part is None:
                return None
            lo, hi = _lin_add(lo, part[0]), _lin_add(hi, part[1])
        return lo, hi
    if kind is Mul:
        consts = [a for a in term.args if type(a) is Const]
        others = [a for a in term.args if type(a) is not Const]
        factor = consts[0].value if consts else 1
        varying = [a for a in others if not is_launch_constant(a)]
        fixed = [a for a in others if is_launch_constant(a)]
        if len(varying) != 1:
            return None
        part = symbolic_range(varying[0])
        if part is None:
            return None
        lo, hi = part
        if fixed:
            # s * [0, h] with s a launch dimension (never negative): [0, s*h] when h is one atom.
            # s * [0, h] with s a launch dimension (never negative) is [0, s*h].
            if lo or not all(_nonnegative(f) for f in fixed):
                return None
            scale = Mul(tuple(fixed)) if len(fixed) > 1 else fixed[0]
            hi = {(scale if atom is None else Mul((scale, atom))): coef
                  for atom, coef in hi.items()}
        lo, hi = _lin_scale(lo, factor), _lin_scale(hi, factor)
        return (lo, hi) if factor >= 0 else (hi, lo)
    if kind is NotEq:
        inner = symbolic_range(term.arg)
        value = _linear(term.value)
        if inner is None or value is None:
            return inner
        lo, hi = inner
        # Only an end point equal to the excluded value moves.
        return (_lin_add(lo, {None: 1}) if lo == value else lo,
                _lin_add(hi, {None: -1}) if hi == value else hi)
    if kind is Bound:
        inner = symbolic_range(term.arg)
        lo = _linear(term.lo) if term.lo is not None and is_launch_constant(term.lo) else None
        hi = _linear(term.hi) if term.hi is not None and is_launch_constant(term.hi) else None
        if inner is None and (lo is None or hi is None):
            return None
        return (lo if lo is not None else inner[0]), (hi if hi is not None else inner[1])
    return None


def render_linear(form: Linear, names: dict[str, str] | None = None) -> str:
    """A linear form as C-like text (``out + 4*n - 4``)."""
    parts: list[tuple[int, str, bool]] = []
    for atom, coef in form.items():
        if atom is None:
            continue
        text = render(atom, names)
        if type(atom) in (Add, Mul) and "+" in text:
            text = f"({text})"
        pointer = type(atom) is Param or type(atom) is Wrap and type(atom.arg) is Param
        parts.append((coef, text, not pointer))
    parts.sort(key=lambda p: (p[0] < 0, p[2], p[1]))
    out = ""
    for coef, text, _ in parts:
        mag = abs(coef)
        piece = text if mag == 1 else f"{mag}*{text}"
        if not out:
            out = piece if coef > 0 else f"-{piece}"
        else:
            out += f" + {piece}" if coef > 0 else f" - {piece}"
    const = form.get(None, 0)
    if const:
        if not out:
            return str(const)
        out += f" + {const}" if const > 0 else f" - {-const}"
    return out or "0"


def byte_range_text(address: Term, width: int, names: dict[str, str] | None = None
                    ) -> str | None:
    """The half-open byte range an access may touch, ``[lo, hi + width)``, or ``None``."""
    found = symbolic_range(address)
    if found is None:
        return None
    lo, hi = found
    return f"[{render_linear(lo, names)}, {render_linear(_lin_add(hi, {None: width}), names)})"


def _sites(sites: list[tuple[str, str, str]]) -> str:
    """``st.global.b32 #29 and #30, line 25``: sites of one opcode and line together."""
    grouped: dict[tuple[str, str], list[str]] = {}
    for opcode, ident, rest in sites:
        idents = grouped.setdefault((opcode, rest), [])
        if ident not in idents:
            idents.append(ident)
    parts = []
    for (opcode, rest), idents in grouped.items():
        shown = idents[:_SITES_SHOWN]
        more = len(idents) - len(shown)
        text = ", ".join(shown) if not more else f"{', '.join(shown)} and {more} more"
        if len(shown) == 2 and not more:
            text = " and ".join(shown)
        parts.append(f"{opcode} {text}{rest}")
    shown_parts = parts[:_SITES_SHOWN]
    more = len(parts) - len(shown_parts)
    return " and ".join(shown_parts) + (f" and {more} more" if more > 0 else "")


def _side(verb: str, accesses: list, byte_range, site) -> str:
    """``written [out, out + 4*n) by st.global.f32 #20, line 14``: the distinct ranges and
    the instructions of one side of a merged condition."""
    ranges = list(dict.fromkeys(byte_range(a) for a in accesses))
    known = [r for r in ranges if r is not None]
    sites = _sites([site(a) for a in accesses])
    if not known:
        return f"{verb} by {sites}"
    text = " and ".join(known)
    if len(known) < len(ranges):
        text += " and bytes with no range from the arguments"
    return f"{verb} {text} by {sites}"


def merged_conditions(pairs: Sequence[tuple[_A, _A]], base: Callable[[_A], str],
                      byte_range: Callable[[_A], str | None],
                      site: Callable[[_A], tuple[str, str, str]]) -> list[str]:
    """The conditions of a conditional kernel, one statement per (written, read) pointer.

    The analysis keeps one (write, read) pair per access pair that may overlap (a Triton
    kernel unrolled four times has sixteen pairs per pointer pair); a reader wants one
    statement per pair of pointers, with the byte ranges and the instructions of each
    side::

        not idempotent when out overlaps in (written [out, out + 4*n) by st.global.f32
        #20, line 14; read [in, in + 4*n) by ld.global.f32 #15, line 14)

    Parameters
    ----------
    pairs : sequence of (write, read)
        The access pairs that may overlap, in the LaunchCheck's order.
    base, byte_range : callable
        An access's base pointer name and its byte range text (or ``None``).
    site : callable
        An access's instruction as ``(opcode, instruction, rest)``, e.g.
        ``("st.global.f32", "#20", ", line 14")``.

    Returns
    -------
    list of str
        In order of each pointer pair's first (write, read) pair.

    Examples
    --------
    >>> pairs = [(("o", 20), ("a", 15)), (("o", 21), ("a", 16)), (("o", 20), ("b", 7))]
    >>> for line in merged_conditions(pairs, base=lambda a: a[0],
    ...                               byte_range=lambda a: f"[{a[0]}, {a[0]} + 4*n)",
    ...                               site=lambda a: ("st" if a[0] == "o" else "ld",
    ...                                               f"#{a[1]}", "")):
    ...     print(line.replace("not idempotent when ", ""))
    o overlaps a (written [o, o + 4*n) by st #20 and #21; read [a, a + 4*n) by ld #15 and #16)
    o overlaps b (written [o, o + 4*n) by st #20; read [b, b + 4*n) by ld #7)
    """
    groups: dict[tuple[str, str], tuple[list, list, set, set]] = {}
    names: dict[int, str] = {}

    def name(a) -> str:
        found = names.get(id(a))
        if found is None:
            found = names[id(a)] = base(a)
        return found

    for w, r in pairs:
        # Each access once per group, by identity (the pairs hold the same objects).
        writes, reads, seen_writes, seen_reads = groups.setdefault(
            (name(w), name(r)), ([], [], set(), set()))
        if id(w) not in seen_writes:
            seen_writes.add(id(w))
            writes.append(w)
        if id(r) not in seen_reads:
            seen_reads.add(id(r))
            reads.append(r)
    out = []
    for (written, read), (writes, reads, _, _) in groups.items():
        head = (f"not idempotent when {written} overlaps {read}" if written != read else
                f"not idempotent when what it writes through {written} overlaps what it "
                f"reads through it")
        out.append(f"{head} ({_side('written', writes, byte_range, site)}; "
                   f"{_side('read', reads, byte_range, site)})")
    return out
