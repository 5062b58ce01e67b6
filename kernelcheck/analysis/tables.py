"""Tables in the parameter buffer: pointers and sizes a block picks by its index.

A kernel may take, by value, a struct holding arrays of pointers and sizes and read an
entry at an index computed per block: PyTorch's ``multi_tensor_apply`` passes a
``TensorListMetadata`` (``addresses[depth][n]``, ``numel_for_tensor[n]``,
``block_to_tensor[b]``, ``block_to_chunk[b]``) and each block reads
``tl.addresses[k][tl.block_to_tensor[blockIdx.x]]``; a batched GEMM indexes arrays of
matrix pointers by ``blockIdx.z``. The symbolic walker gives such a read the term
:class:`~kernelcheck.analysis.terms.ParamAt` (the buffer at a term offset), lowered to a
``PARAMX`` record that reads the instance's buffer at launch.

Over the whole grid the entries a table holds are many unrelated pointers, and an
interval over them says nothing. Per block they are one pointer and one size each. So an
access whose address (or launch guard) reads the buffer at an offset that depends on a
block index is *expanded* over that dimension (:func:`expansion_axis`): the launch check
computes its bytes once per block index and takes the union
(:func:`kernelcheck.launch.evaluate.expanded_byte_sets`, whose docstring holds the
soundness argument), which is one range per tensor chunk.
"""

from __future__ import annotations

from collections.abc import Iterator

from kernelcheck.analysis.terms import Add, ParamAt, Special, Term, Wrap, children, has_kind

__all__ = ["EXPANDABLE", "expansion_axis", "table_entry"]

#: Block indices an access may be expanded over, in order of preference.
EXPANDABLE = ("%ctaid.x", "%ctaid.y", "%ctaid.z")


def expansion_axis(terms) -> str | None:
    """The block index (``%ctaid.x``, ``.y`` or ``.z``) that the offset of some parameter
    table read in ``terms`` depends on, or ``None`` when no read does.

    Examples
    --------
    >>> from kernelcheck.analysis.terms import Const, add, mul
    >>> t = ParamAt(add(Special("%ctaid.x"), Const(2640)), 1)
    >>> expansion_axis([add(ParamAt(mul(Const(8), t), 8), Special("%tid.x"))])
    '%ctaid.x'
    >>> expansion_axis([ParamAt(Special("%tid.x"), 4)]) is None
    True
    """
    found: set[str] = set()
    # The kinds of a term's nodes are kept per node: the walks enter only the sub-terms
    # that hold a table read (or, inside an offset, a special register), so a large term
    # with one table read costs the path to it, and a node shared by the terms is visited
    # once.
    offsets: set[int] = set()
    for read in _nodes_holding(terms, ParamAt, set()):
        if type(read) is ParamAt:
            found.update(t.name for t in _nodes_holding((read.offset,), Special, offsets)
                         if type(t) is Special and t.name in EXPANDABLE)
    return next((axis for axis in EXPANDABLE if axis in found), None)


def _nodes_holding(roots, kind: type, seen: set[int]) -> Iterator[Term]:
    """The nodes of ``roots`` with a node of class ``kind`` at or below them, each once
    (``seen``, by ``id``, may be shared between walks)."""
    stack = [t for t in roots if has_kind(t, kind)]
    while stack:
        t = stack.pop()
        if id(t) in seen:
            continue
        seen.add(id(t))
        yield t
        stack.extend(c for c in children(t) if has_kind(c, kind))


def table_entry(address: Term) -> ParamAt | None:
    """The 8-byte table entry an address is based on: its one pointer-wide
    :class:`ParamAt` summand (for reports: "an entry of the parameter buffer").

    >>> from kernelcheck.analysis.terms import Const, add
    >>> table_entry(add(ParamAt(Special("%ctaid.x"), 8), Const(4))).size
    8
    """
    inner = address.arg if type(address) is Wrap else address
    parts = inner.args if type(inner) is Add else (inner,)
    found = [p for p in parts if type(p) is ParamAt and p.size == 8]
    return found[0] if len(found) == 1 else None
