"""What every PTX opcode does to memory, as the idempotency analysis needs to know it.

The table covers every opcode of the PTX ISA's instruction chapter (PTX ISA 9.0, chapter 9;
:data:`kernelcheck.ptx.opcodes.KNOWN_OPCODES` lists the same set). An opcode missing from it
is unknown, and an unknown instruction is never taken to be free of memory effects: the
symbolic walk reports it and the kernel is "not proven".

Effects
-------
``pure``
    Writes registers only (arithmetic, conversions, warp shuffles and votes, matrix
    multiply on registers, address computations such as ``mapa``/``cvta``).
``control``
    Control flow and synchronisation with no memory effect of its own (``bra``, ``bar``,
    ``fence``, ``griddepcontrol``, ...); ``bar.red`` defines a register.
``memory``
    Reads or writes memory in a way the symbolic walk models access by access: ``ld``,
    ``st``, ``atom``, ``red``, the copies ``cp.*``, texture and surface loads, ``wmma`` loads
    and stores, ``tensormap`` writes, ``discard`` (its 128 bytes become undefined: a
    write), ``prefetch``.
``private``
    Touches only memory private to one execution of the kernel (shared memory, tensor
    memory, the stack): ``ldmatrix``/``stmatrix`` (shared, ISA 9.7.14.5.15-16), ``wgmma``
    (its matrix descriptors address shared memory, 9.7.15.5.1), ``mbarrier`` objects
    (shared, 9.7.13.15), ``tcgen05`` (tensor memory and shared memory, 9.7.16),
    ``clusterlaunchcontrol`` (a response in shared memory, 9.7.13.17). Re-execution starts
    from fresh private memory, so these never make an instance non-idempotent; the
    registers they define are opaque.
``unmodelled``
    May write global memory in a way the analysis does not follow (surface stores and
    reductions; ``multimem``, whose multicast addresses alias the unicast addresses of the
    same bytes, ISA 9.7.9.16; the stack operations): the kernel is not proven.
"""

from __future__ import annotations

from kernelcheck.ir.nodes import Instruction

__all__ = ["PURE", "CONTROL", "MEMORY", "PRIVATE", "UNMODELLED", "OPCODE_EFFECTS",
           "effect_of"]

PURE = "pure"
CONTROL = "control"
MEMORY = "memory"
PRIVATE = "private"
UNMODELLED = "unmodelled"

_PURE = """
add sub mul mad mul24 mad24 sad div rem abs neg min max popc clz bfind fns brev bfe bfi
szext bmsk dp4a dp2a addc subc madc testp copysign fma rcp sqrt rsqrt sin cos lg2 ex2 tanh
set setp selp slct and or xor not cnot lop3 shf shl shr mov shfl prmt isspacep cvta cvt
mapa getctarank istypep txq suq vote match activemask redux elect mma movmatrix
vadd vsub vabsdiff vmin vmax vshl vshr vmad vset vadd2 vsub2 vavrg2 vabsdiff2 vmin2 vmax2
vset2 vadd4 vsub4 vavrg4 vabsdiff4 vmin4 vmax4 vset4 createpolicy
"""
_CONTROL = """
bra brx call ret exit trap bar barrier membar fence griddepcontrol nanosleep setmaxnreg
pmevent brkpt applypriority
"""
_MEMORY = """
ld ldu st atom red cp prefetch prefetchu tex tld4 suld wmma tensormap multimem discard
"""
_PRIVATE = """
ldmatrix stmatrix wgmma mbarrier tcgen05 clusterlaunchcontrol
"""
_UNMODELLED = """
sust sured alloca stacksave stackrestore
"""

#: opcode -> effect, for every opcode of the ISA.
OPCODE_EFFECTS: dict[str, str] = {
    op: effect
    for effect, words in ((PURE, _PURE), (CONTROL, _CONTROL), (MEMORY, _MEMORY),
                          (PRIVATE, _PRIVATE), (UNMODELLED, _UNMODELLED))
    for op in words.split()
}


def effect_of(instr: Instruction) -> str | None:
    """The memory effect of a PTX instruction, or None for an opcode the ISA table lacks.

    Examples
    --------
    >>> effect_of(Instruction("ldmatrix", ("sync", "aligned", "m8n8", "x4", "shared", "b16")))
    'private'
    >>> effect_of(Instruction("frobnicate")) is None
    True
    """
    return OPCODE_EFFECTS.get(instr.opcode)
