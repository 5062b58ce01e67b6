"""What a kernel is made of: parameters (and which are used as pointers), blocks, loops and
memory accesses, read straight off the IR and its graphs.

This is the frame of ``kernelcheck analyze``: verdicts are added by the analysis, and these
facts are what a programmer checks first (did the tool see the kernel the way I wrote it?).
"""

from __future__ import annotations

from dataclasses import dataclass

import networkx as nx

from kernelcheck.ir.nodes import Address, Function, Instruction, Module, Register, Symbol

__all__ = [
    "ParamInfo",
    "AccessInfo",
    "LoopInfo",
    "KernelStructure",
    "kernel_structure",
    "format_instruction",
]

#: Memory spaces reported as accesses (param/const/local loads are bookkeeping).
_REPORTED_SPACES = ("global", "shared", "generic")


@dataclass(frozen=True, slots=True)
class ParamInfo:
    """A parameter: PTX type, byte size and offset, and whether its value reaches an address."""

    name: str
    ptx_type: str
    size: int
    offset: int
    used_as_pointer: bool


@dataclass(frozen=True, slots=True)
class AccessInfo:
    """A memory access: instruction, space, bytes, kind (read/write/atomic) and source line."""

    index: int
    text: str
    space: str
    width: int | None
    kind: str
    atomic_op: str | None
    line: int | None
    file: str | None


@dataclass(frozen=True, slots=True)
class LoopInfo:
    """A natural loop: header and latch block names, its blocks and nesting depth."""

    header: str
    latches: tuple[str, ...]
    blocks: tuple[str, ...]
    depth: int


@dataclass(frozen=True, slots=True)
class KernelStructure:
    """The structural report of one function."""

    name: str
    kind: str
    params: tuple[ParamInfo, ...]
    instruction_count: int
    blocks: tuple[str, ...]
    loops: tuple[LoopInfo, ...]
    accesses: tuple[AccessInfo, ...]
    unknown_opcodes: tuple[str, ...]

    def to_json(self) -> dict:
        """The JSON form documented in docs/json-schema.md."""
        return {
            "name": self.name,
            "kind": self.kind,
            "params": [
                {"name": p.name, "type": p.ptx_type, "size": p.size, "offset": p.offset,
                 "used_as_pointer": p.used_as_pointer}
                for p in self.params
            ],
            "instruction_count": self.instruction_count,
            "blocks": list(self.blocks),
            "loops": [
                {"header": loop.header, "latches": list(loop.latches),
                 "blocks": list(loop.blocks), "depth": loop.depth}
                for loop in self.loops
            ],
            "accesses": [
                {"instruction": a.index, "text": a.text, "space": a.space, "width": a.width,
                 "kind": a.kind, "atomic_op": a.atomic_op, "line": a.line, "file": a.file}
                for a in self.accesses
            ],
            "unknown_opcodes": list(self.unknown_opcodes),
        }


def format_instruction(instr: Instruction) -> str:
    """The instruction as PTX text, without the trailing semicolon."""
    from kernelcheck.ptx.printer import format_instruction as _format

    return _format(instr)


def kernel_structure(function: Function, module: Module | None = None) -> KernelStructure:
    """Build the structural report of ``function``.

    Examples
    --------
    >>> from kernelcheck.ptx.parser import parse_ptx
    >>> m = parse_ptx('''.version 8.0
    ... .target sm_80
    ... .address_size 64
    ... .visible .entry k(.param .u64 p) {
    ...   .reg .b64 %rd<3>;
    ...   ld.param.u64 %rd1, [p];
    ...   cvta.to.global.u64 %rd2, %rd1;
    ...   st.global.u32 [%rd2], 0;
    ...   ret;
    ... }''')
    >>> s = kernel_structure(m.kernels[0])
    >>> s.params[0].used_as_pointer, [a.kind for a in s.accesses]
    (True, ['write'])
    """
    from kernelcheck.errors import UnsupportedFeature
    from kernelcheck.ir.cfg import control_flow_graph
    from kernelcheck.ir.dataflow import def_use_graph
    from kernelcheck.ir.loops import natural_loops

    blocks = function.blocks
    files = module.files if module is not None else {}
    accesses = tuple(_accesses(function, files))
    try:
        if _is_sass(function):  # indirect branches take their targets from the image
            from kernelcheck.sass.cfg import control_flow_graph as sass_control_flow_graph

            cfg = sass_control_flow_graph(function)
        else:
            cfg = control_flow_graph(function)
    except UnsupportedFeature:
        # A branch whose targets are not known (an indirect branch without its target
        # list): this one kernel has no control-flow graph, hence no loops or pointer
        # parameters to report; its analysis says why it is not proven. The other kernels
        # of the file are reported as usual.
        cfg = None
    loops = () if cfg is None else tuple(
        LoopInfo(
            header=blocks[loop.header].name,
            latches=tuple(blocks[b].name for b in sorted(loop.latches)),
            blocks=tuple(blocks[b].name for b in sorted(loop.body)),
            depth=loop.depth,
        )
        for loop in natural_loops(cfg)
    )
    if cfg is None:
        pointer_params: set = set()
    elif _is_sass(function):
        pointer_params = _sass_pointer_params(function, def_use_graph(function, cfg))
    else:
        pointer_params = _pointer_params(function, def_use_graph(function, cfg))
    params = tuple(
        ParamInfo(p.name, p.type, p.size, p.offset, p.name in pointer_params)
        for p in function.params
    )
    unknown = sorted({i.full_opcode for i in function.instructions if not i.known})
    return KernelStructure(
        name=function.name,
        kind=function.kind,
        params=params,
        instruction_count=len(function.instructions),
        blocks=tuple(b.name for b in blocks),
        loops=loops,
        accesses=accesses,
        unknown_opcodes=tuple(unknown),
    )


def _accesses(function: Function, files: dict[int, str]):
    from kernelcheck.ir.operands import access_kind, access_width, memory_space

    for instr in function.instructions:
        space = memory_space(instr)
        if space not in _REPORTED_SPACES:
            continue
        kind = access_kind(instr)
        if kind is None or instr.opcode in ("prefetch", "prefetchu", "cvta", "CCTL"):
            continue
        atomic_op = None
        if kind == "atomic":
            atomic_op = next((m.lower() for m in instr.modifiers if m.lower() in _ATOMIC_OPS),
                             None)
        loc = instr.loc
        yield AccessInfo(
            index=instr.index,
            text=format_instruction(instr),
            space=space,
            width=access_width(instr),
            kind=kind,
            atomic_op=atomic_op,
            line=loc.line if loc is not None and loc.line > 0 else None,
            file=files.get(loc.file) if loc is not None else None,
        )


_ATOMIC_OPS = frozenset(
    {"add", "sub", "inc", "dec", "cas", "exch", "min", "max", "and", "or", "xor"}
)


_POINTER_PRESERVING = frozenset({"mov", "cvta", "add", "sub", "selp", "ld"})


def _pointer_params(function: Function, dataflow: nx.MultiDiGraph) -> set[str]:
    """Parameters whose loaded value reaches the base register of a memory address.

    A parameter is read with ``ld.param`` (directly, or as a field of an aggregate). Its
    value counts as a pointer when it flows to an address base through moves, ``cvta``,
    additions, subtractions and ``selp`` only: a value scaled on the way (``mul``, ``shl``)
    is an index, not a pointer. (``ld`` continues the chain only for the ``ld.param`` that
    starts it.)
    """
    instructions = function.instructions
    bases: dict[int, set[str]] = {}
    for instr in instructions:
        for operand in instr.operands:
            if type(operand) is Address and type(operand.base) is Register:
                bases.setdefault(instr.index, set()).add(operand.base.name)
    pointers: set[str] = set()
    for instr in instructions:
        if instr.opcode != "ld" or "param" not in instr.modifiers:
            continue
        source = next((o for o in instr.operands if type(o) is Address), None)
        if source is None or type(source.base) is not Symbol:
            continue
        name = source.base.name
        if function.get_param(name) is None or name in pointers:
            continue
        if instr.index in dataflow and _reaches_base(instr.index, dataflow, instructions,
                                                     bases):
            pointers.add(name)
    return pointers


def _reaches_base(start: int, dataflow: nx.MultiDiGraph, instructions, bases) -> bool:
    seen = {start}
    stack = [start]
    while stack:
        node = stack.pop()
        for _, target, register in dataflow.out_edges(node, data="register"):
            if target == "entry" or target in seen:
                continue
            if register in bases.get(target, ()):
                return True
            if instructions[target].opcode in _POINTER_PRESERVING and not (
                instructions[target].opcode == "ld"
            ):
                seen.add(target)
                stack.append(target)
    return False


def _is_sass(function: Function) -> bool:
    return any(i.opcode.isupper() for i in function.instructions[:8])


def _sass_pointer_params(function: Function, dataflow: nx.MultiDiGraph) -> set[str]:
    """8-byte parameters (read from the constant bank) whose value reaches the base register
    of a SASS memory operand along def-use edges.

    SASS adds a scaled index to a pointer with the same instructions that compute indexes
    (``IMAD.WIDE``, ``IADD3``, ``LEA``), so unlike in PTX no instruction kind breaks the
    chain; an 8-byte parameter that only feeds an index computation is rare enough that
    this reads well in practice.
    """
    from kernelcheck.ir.nodes import MemoryRef
    from kernelcheck.sass.params import param_references

    bases: dict[int, set[str]] = {}
    for instr in function.instructions:
        for operand in instr.operands:
            if type(operand) is MemoryRef:
                for register in (operand.base, operand.uniform):
                    if register is not None:
                        names = bases.setdefault(instr.index, set())
                        names.add(register.name)
                        if operand.wide and register.name[1:].isdigit():
                            # R2.64 is the pair R2, R3.
                            names.add(f"{register.name[0]}{int(register.name[1:]) + 1}")
    sizes = {p.name: p.size for p in function.params}
    pointers: set[str] = set()
    for reference in param_references(function):
        if sizes.get(reference.param) != 8 or reference.param in pointers:
            continue
        start = reference.index
        seen = {start}
        stack = [start]
        while stack:
            node = stack.pop()
            found = False
            for _, target, register in dataflow.out_edges(node, data="register"):
                if target == "entry" or target in seen:
                    continue
                if register in bases.get(target, ()):
                    found = True
                    break
                seen.add(target)
                stack.append(target)
            if found:
                pointers.add(reference.param)
                break
    return pointers
