"""The control-flow graph of a SASS function, in the form :mod:`kernelcheck.ir.cfg` gives.

:func:`kernelcheck.ir.cfg.control_flow_graph` reads branch targets as PTX writes them:
labels and ``.branchtargets`` lists. SASS says more in other places: an indirect branch
(``BRX R4 -0x8910``) goes to the offsets the image's EIATTR_INDIRECT_BRANCH_TARGETS lists
for it, a branch with a predicate operand (``BRA.U !UP0, L``) or ``.DIV`` may fall
through, and a block that calls ``__assertfail`` or traps (``BPT.TRAP``) ends the thread.
:func:`kernelcheck.sass.lift_state.block_successors` knows these; this module writes its
successors as the graph that the loop, dominance and dataflow functions of
:mod:`kernelcheck.ir` take (an indirect branch without a target list goes to every block,
as there).
"""

from __future__ import annotations

import networkx as nx

from kernelcheck.ir.cfg import EXIT, graph_skeleton
from kernelcheck.ir.nodes import Function
from kernelcheck.sass.lift_state import block_successors

__all__ = ["control_flow_graph"]

_ENDS = frozenset({"EXIT", "RET", "KILL"})
_JUMPS = frozenset({"BRA", "JMP", "BRX", "JMX", "BRXU", "JMXU"})


def control_flow_graph(function: Function) -> nx.DiGraph:
    """The control-flow graph of a SASS function: nodes ``entry``, the block indices and
    ``exit``, each block node with its ``block``; edges of kind ``fallthrough`` (to the next
    block), ``branch`` and ``exit``.

    Examples
    --------
    >>> from kernelcheck.binary.nvdisasm import SassFunction, SassInstruction
    >>> from kernelcheck.sass.function import function_from_sass
    >>> f = function_from_sass(SassFunction("k", (
    ...     SassInstruction(0x00, "LDC R4, c[0x0][0x210]"),
    ...     SassInstruction(0x10, "BRX R4 -0x20"),
    ...     SassInstruction(0x20, "EXIT"),
    ...     SassInstruction(0x30, "EXIT"))),
    ...     directives=(("EIATTR_INDIRECT_BRANCH_TARGETS", ((0x10, (0x20, 0x30)),)),),
    ...     labels={0x20: (".L_0x20",), 0x30: (".L_0x30",)})
    >>> for edge in sorted(control_flow_graph(f).edges(data="kind"), key=str):
    ...     print(edge)
    ('entry', 0, 'fallthrough')
    (0, 1, 'fallthrough')
    (0, 2, 'branch')
    (1, 'exit', 'exit')
    (2, 'exit', 'exit')
    """
    blocks = function.blocks
    graph = graph_skeleton(function)
    if not blocks:
        return graph
    successors = block_successors(function)
    for position, block in enumerate(blocks):
        following = blocks[position + 1].index if position + 1 < len(blocks) else None
        for successor in successors[block.index]:
            kind = "fallthrough" if successor == following else "branch"
            graph.add_edge(block.index, successor, kind=kind)
        last = block.last
        ends = last is not None and last.opcode in _ENDS
        off_the_end = following is None and not (
            last is not None and last.opcode in _JUMPS and last.guard is None)
        if ends or not successors[block.index] or off_the_end:
            graph.add_edge(block.index, EXIT, kind="exit" if ends or not successors[
                block.index] else "fallthrough")
    return graph
