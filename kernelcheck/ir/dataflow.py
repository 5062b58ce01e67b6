"""Register dataflow: reaching definitions, the def-use graph, and liveness.

Sets are Python integers used as bit vectors (one bit per definition or per register) and the
fixpoints are worklist iterations over blocks in reverse post-order, so that kernels with
thousands of instructions take milliseconds.

Definitions are ``(register, instruction index)``. Besides the real ones, every register has a
pseudo-definition at :data:`ENTRY` standing for its value before the first instruction (a
kernel parameter is loaded with ``ld.param``, so in well-formed PTX this value is garbage; a
use it reaches is a use of a possibly undefined register).

Killing follows the soundness rule that a definition kills only when it surely executes and
surely writes the register: a guarded definition (``@%p1 mov ...``, PTX ISA §9.7.12.1 "Guard
predicate") kills nothing, so earlier definitions still reach later uses alongside it; so does
a definition by an instruction kernelcheck does not know (``known`` False), whose operand
roles are a convention (:mod:`kernelcheck.ir.operands`). Liveness mirrors this: only a sure
definition ends a live range.
"""

from __future__ import annotations

from dataclasses import dataclass

import networkx as nx

from kernelcheck.ir.cfg import ENTRY, EXIT, control_flow_graph
from kernelcheck.ir.nodes import Function, Instruction
from kernelcheck.ir.operands import defs, uses

__all__ = ["ENTRY", "reaching_definitions", "def_use_graph", "Liveness", "liveness",
           "kills"]


def kills(instr: Instruction) -> bool:
    """Whether the definitions of ``instr`` surely happen (and so kill earlier ones).

    Examples
    --------
    >>> from kernelcheck.ir.nodes import Guard
    >>> kills(Instruction("mov")), kills(Instruction("mov", guard=Guard("%p1")))
    (True, False)
    """
    return instr.guard is None and instr.known


def _reverse_postorder(cfg: nx.DiGraph) -> list:
    """Blocks (int nodes) in reverse post-order from ``entry``, then the unreachable ones."""
    order = [n for n in nx.dfs_postorder_nodes(cfg, ENTRY) if not isinstance(n, str)]
    order.reverse()
    seen = set(order)
    order += sorted(n for n in cfg if not isinstance(n, str) and n not in seen)
    return order


@dataclass(frozen=True, slots=True)
class _Tables:
    """Per-instruction defs and uses, and the numbering of definitions and registers."""

    defs: tuple[tuple[str, ...], ...]
    uses: tuple[tuple[str, ...], ...]
    registers: tuple[str, ...]
    def_sites: tuple  # bit → (register, instruction index or ENTRY)
    reg_mask: dict  # register → bits of all its definitions (entry one included)
    def_bit: dict  # (register, index) → bit


def _tables(function: Function) -> _Tables:
    instructions = function.instructions
    all_defs = tuple(defs(i) for i in instructions)
    all_uses = tuple(uses(i) for i in instructions)
    registers: dict[str, None] = {}
    for names in all_defs:
        registers.update(dict.fromkeys(names))
    for names in all_uses:
        registers.update(dict.fromkeys(names))
    sites: list = []
    def_bit: dict = {}
    reg_mask: dict = {}
    # Entry pseudo-definitions take bits 0 .. len(registers) - 1, real ones the rest.
    for reg in registers:
        def_bit[(reg, ENTRY)] = len(sites)
        reg_mask[reg] = 1 << len(sites)
        sites.append((reg, ENTRY))
    for index, names in enumerate(all_defs):
        for reg in names:
            bit = len(sites)
            def_bit[(reg, index)] = bit
            reg_mask[reg] |= 1 << bit
            sites.append((reg, index))
    return _Tables(all_defs, all_uses, tuple(registers), tuple(sites), reg_mask, def_bit)


def _step(state: int, index: int, instr: Instruction, tables: _Tables) -> int:
    """The reaching set after ``instr`` given the set before it."""
    names = tables.defs[index]
    if not names:
        return state
    if kills(instr):
        for reg in names:
            state &= ~tables.reg_mask[reg]
    for reg in names:
        state |= 1 << tables.def_bit[(reg, index)]
    return state


def _block_in_sets(function: Function, cfg: nx.DiGraph, tables: _Tables) -> dict:
    """Reaching-definition set at the start of every block (fixpoint over the CFG)."""
    blocks = {b.index: b for b in function.blocks}
    entry_set = 0
    for reg in tables.registers:
        entry_set |= 1 << tables.def_bit[(reg, ENTRY)]
    # Transfer function of a block: out = gen | (in & ~kill).
    gen: dict = {}
    keep: dict = {}
    for index, block in blocks.items():
        g, killed = 0, 0
        for instr in block.instructions:
            names = tables.defs[instr.index]
            if not names:
                continue
            if kills(instr):
                for reg in names:
                    g &= ~tables.reg_mask[reg]
                    killed |= tables.reg_mask[reg]
            for reg in names:
                g |= 1 << tables.def_bit[(reg, instr.index)]
        gen[index] = g
        keep[index] = ~killed
    order = _reverse_postorder(cfg)
    rank = {n: k for k, n in enumerate(order)}
    # Code entry does not reach is analysed as if entered from the start: whatever could
    # flow into it is unknown, so the entry pseudo-definitions reach it.
    reached = nx.descendants(cfg, ENTRY)
    seed = {n: 0 if n in reached else entry_set for n in order}
    in_sets = {n: 0 for n in order}
    out_sets = {n: 0 for n in order}
    pending = set(order)
    while pending:
        # Visit pending blocks in reverse post-order so most edges are forward.
        for node in sorted(pending, key=rank.__getitem__):
            pending.discard(node)
            state = seed[node]
            for pred in cfg.predecessors(node):
                state |= entry_set if pred == ENTRY else out_sets.get(pred, 0)
            in_sets[node] = state
            out = gen[node] | (state & keep[node])
            if out != out_sets[node]:
                out_sets[node] = out
                pending.update(s for s in cfg.successors(node) if s != EXIT)
    return in_sets


def _bits(value: int):
    while value:
        low = value & -value
        yield low.bit_length() - 1
        value ^= low


# Set-bit positions of every byte value, to decode dense bit vectors a byte at a time.
_BYTE_BITS = tuple(tuple(k for k in range(8) if byte >> k & 1) for byte in range(256))


def _dense_bits(value: int) -> list[int]:
    """Positions of the set bits of ``value`` (fast when many bits are set)."""
    data = value.to_bytes((value.bit_length() + 7) // 8, "little")
    return [8 * i + k for i, byte in enumerate(data) if byte for k in _BYTE_BITS[byte]]


def reaching_definitions(
    function: Function, cfg: nx.DiGraph | None = None
) -> dict[int, frozenset[tuple[str, int]]]:
    """The definitions that may reach each instruction (before it executes).

    Parameters
    ----------
    function : Function
        The function to analyse.
    cfg : networkx.DiGraph, optional
        Its control-flow graph, when already built.

    Returns
    -------
    dict
        Instruction index → frozenset of ``(register, defining instruction index)``. The
        entry pseudo-definitions are left out (:func:`def_use_graph` shows them). Code that
        ``entry`` does not reach is analysed as if entered from the start.

    Examples
    --------
    >>> from kernelcheck.ptx.parser import parse_ptx
    >>> f = parse_ptx(".version 8.0\\n.target sm_90\\n.address_size 64\\n.entry k() {"
    ...     ".reg .b32 %r<3>; mov.u32 %r1, 1; mov.u32 %r2, %r1; ret; }").get_function("k")
    >>> sorted(reaching_definitions(f)[2])
    [('%r1', 0), ('%r2', 1)]
    """
    cfg = control_flow_graph(function) if cfg is None else cfg
    tables = _tables(function)
    in_sets = _block_in_sets(function, cfg, tables)
    sites = tables.def_sites
    real = ~((1 << len(tables.registers)) - 1)  # entry pseudo-definitions take the low bits
    result: dict[int, frozenset] = {}
    for block in function.blocks:
        state = in_sets.get(block.index, 0)
        for instr in block.instructions:
            result[instr.index] = frozenset(
                sites[b] for b in _dense_bits(state & real))
            state = _step(state, instr.index, instr, tables)
    return result


def def_use_graph(function: Function, cfg: nx.DiGraph | None = None) -> nx.MultiDiGraph:
    """The def-use graph: an edge from each definition to each use it may reach.

    Parameters
    ----------
    function : Function
        The function to analyse.
    cfg : networkx.DiGraph, optional
        Its control-flow graph, when already built.

    Returns
    -------
    networkx.MultiDiGraph
        Nodes: every instruction index (attribute ``instruction``) and :data:`ENTRY`
        (attribute ``instruction`` None) for values from before the first instruction. One
        edge ``def → use`` per register (edge key and attribute ``register``).

    Examples
    --------
    >>> from kernelcheck.ptx.parser import parse_ptx
    >>> f = parse_ptx(".version 8.0\\n.target sm_90\\n.address_size 64\\n.entry k() {"
    ...     ".reg .b32 %r<3>; mov.u32 %r1, 1; add.s32 %r2, %r1, %r2; ret; }").get_function("k")
    >>> sorted(def_use_graph(f).edges(data="register"), key=str)
    [('entry', 1, '%r2'), (0, 1, '%r1')]
    """
    cfg = control_flow_graph(function) if cfg is None else cfg
    tables = _tables(function)
    in_sets = _block_in_sets(function, cfg, tables)
    sites = tables.def_sites
    graph = nx.MultiDiGraph(name=function.name)
    graph.add_node(ENTRY, instruction=None)
    graph.add_nodes_from((i.index, {"instruction": i}) for i in function.instructions)
    edges = []
    for block in function.blocks:
        state = in_sets[block.index]
        for instr in block.instructions:
            index = instr.index
            for reg in tables.uses[index]:
                for bit in _bits(state & tables.reg_mask[reg]):
                    edges.append((sites[bit][1], index, reg, {"register": reg}))
            state = _step(state, index, instr, tables)
    graph.add_edges_from(edges)
    return graph


@dataclass(frozen=True, slots=True)
class Liveness:
    """Live registers at the start of each instruction and at both ends of each block.

    A register is live at a point when some path from there reads it before surely
    redefining it. Sets are kept as bit masks over :attr:`registers` (bit ``k`` stands for
    ``registers[k]``) and decoded on request, so that building liveness of a large kernel
    does not build thousands of sets nobody reads.
    """

    registers: tuple[str, ...]
    instruction_masks: dict[int, int]
    block_in_masks: dict[int, int]
    block_out_masks: dict[int, int]

    def _decode(self, mask: int) -> frozenset[str]:
        names = self.registers
        return frozenset(names[b] for b in _dense_bits(mask))

    def live_at(self, index: int) -> frozenset[str]:
        """Registers live just before instruction ``index``."""
        return self._decode(self.instruction_masks[index])

    def block_in(self, block: int) -> frozenset[str]:
        """Registers live on entry to block ``block``."""
        return self._decode(self.block_in_masks[block])

    def block_out(self, block: int) -> frozenset[str]:
        """Registers live on exit from block ``block``."""
        return self._decode(self.block_out_masks[block])

    def is_live(self, register: str, index: int) -> bool:
        """Whether ``register`` is live just before instruction ``index``."""
        try:
            bit = self.registers.index(register)
        except ValueError:
            return False
        return bool(self.instruction_masks[index] >> bit & 1)


def liveness(function: Function, cfg: nx.DiGraph | None = None) -> Liveness:
    """Backward liveness of registers over ``function``.

    Examples
    --------
    >>> from kernelcheck.ptx.parser import parse_ptx
    >>> f = parse_ptx(".version 8.0\\n.target sm_90\\n.address_size 64\\n.entry k() {"
    ...     ".reg .b32 %r<3>; mov.u32 %r1, 1; add.s32 %r2, %r1, %r2; ret; }").get_function("k")
    >>> sorted(liveness(f).live_at(1))
    ['%r1', '%r2']
    """
    cfg = control_flow_graph(function) if cfg is None else cfg
    tables = _tables(function)
    bit = {reg: 1 << k for k, reg in enumerate(tables.registers)}
    use_masks = []
    def_masks = []
    for index, instr in enumerate(function.instructions):
        u = 0
        for reg in tables.uses[index]:
            u |= bit[reg]
        d = 0
        if kills(instr):
            for reg in tables.defs[index]:
                d |= bit[reg]
        use_masks.append(u)
        def_masks.append(d)
    blocks = {b.index: b for b in function.blocks}
    # Block transfer, backward: in = use | (out & ~def), composed over the instructions.
    block_use: dict = {}
    block_def: dict = {}
    for index, block in blocks.items():
        u, d = 0, 0
        for instr in reversed(block.instructions):
            k = instr.index
            u = use_masks[k] | (u & ~def_masks[k])
            d |= def_masks[k]
        block_use[index] = u
        block_def[index] = d
    order = _reverse_postorder(cfg)
    order.reverse()
    rank = {n: k for k, n in enumerate(order)}
    live_in = {n: 0 for n in order}
    live_out = {n: 0 for n in order}
    pending = set(order)
    while pending:
        for node in sorted(pending, key=rank.__getitem__):
            pending.discard(node)
            out = 0
            for succ in cfg.successors(node):
                if succ != EXIT:
                    out |= live_in[succ]
            live_out[node] = out
            new_in = block_use[node] | (out & ~block_def[node])
            if new_in != live_in[node]:
                live_in[node] = new_in
                pending.update(p for p in cfg.predecessors(node) if p != ENTRY)
    instruction_masks: dict[int, int] = {}
    for index, block in blocks.items():
        state = live_out[index]
        for instr in reversed(block.instructions):
            k = instr.index
            state = use_masks[k] | (state & ~def_masks[k])
            instruction_masks[k] = state
    return Liveness(tables.registers, instruction_masks,
                    {n: live_in[n] for n in blocks}, {n: live_out[n] for n in blocks})
