"""The PTX opcodes kernelcheck knows (PTX ISA 9.0, chapter 9 "Instruction Set").

An opcode missing here still parses; the instruction is marked ``known=False`` in the IR and
every analysis treats it conservatively (an opaque effect on anything it may touch).
Regenerate by reading the ISA's instruction index when a new PTX version adds opcodes.
"""

from __future__ import annotations

__all__ = ["KNOWN_OPCODES", "SPECIAL_REGISTERS", "is_special_register"]

_INTEGER = """add sub mul mad mul24 mad24 sad div rem abs neg min max popc clz bfind fns brev
bfe bfi szext bmsk dp4a dp2a add.cc addc sub.cc subc mad.cc madc"""
_FLOAT = """testp copysign fma rcp sqrt rsqrt sin cos lg2 ex2 tanh"""
_COMPARE = """set setp selp slct"""
_LOGIC = """and or xor not cnot lop3 shf shl shr"""
_MOVE = """mov shfl prmt ld ldu st st.async st.bulk multimem prefetch prefetchu isspacep cvta
cvt cvt.pack mapa getctarank"""
_ASYNC = """cp cp.async cp.reduce.async.bulk cp.async.bulk.tensor mbarrier tensormap
elect"""
_TEXTURE = """tex tld4 txq suld sust sured suq istypep"""
_CONTROL = """bra brx call ret exit"""
_SYNC = """bar barrier bar.warp membar fence atom red red.async vote match activemask redux
griddepcontrol elect nanosleep setmaxnreg trap brkpt pmevent"""
_MATRIX = """wmma mma ldmatrix stmatrix movmatrix wgmma tcgen05 alloca stacksave
stackrestore clusterlaunchcontrol applypriority discard createpolicy"""
_VIDEO = """vadd vsub vabsdiff vmin vmax vshl vshr vmad vset vadd2 vsub2 vavrg2 vabsdiff2
vmin2 vmax2 vset2 vadd4 vsub4 vavrg4 vabsdiff4 vmin4 vmax4 vset4"""

#: Base opcodes (the part before the first dot).
KNOWN_OPCODES = frozenset(
    word.split(".", 1)[0]
    for group in (_INTEGER, _FLOAT, _COMPARE, _LOGIC, _MOVE, _ASYNC, _TEXTURE, _CONTROL, _SYNC,
                  _MATRIX, _VIDEO)
    for word in group.split()
)

#: Special registers (PTX ISA 10), without their ``.x``/``.y``/``.z`` components.
SPECIAL_REGISTERS = frozenset(
    """%tid %ntid %laneid %warpid %nwarpid %ctaid %nctaid %smid %nsmid %gridid
    %is_explicit_cluster %clusterid %nclusterid %cluster_ctaid %cluster_nctaid
    %cluster_ctarank %cluster_nctarank %lanemask_eq %lanemask_le %lanemask_lt %lanemask_ge
    %lanemask_gt %clock %clock_hi %clock64 %pm0 %pm1 %pm2 %pm3 %pm4 %pm5 %pm6 %pm7
    %pm0_64 %pm1_64 %pm2_64 %pm3_64 %pm4_64 %pm5_64 %pm6_64 %pm7_64 %globaltimer
    %globaltimer_lo %globaltimer_hi %reserved_smem_offset_begin %reserved_smem_offset_end
    %reserved_smem_offset_cap %reserved_smem_offset_2 %total_smem_size %aggr_smem_size
    %dynamic_smem_size %current_graph_exec""".split()
) | frozenset(f"%envreg{k}" for k in range(32))


def is_special_register(name: str) -> bool:
    """Whether ``name`` (e.g. ``%tid.x``) is a special register rather than a declared one."""
    return name.split(".", 1)[0] in SPECIAL_REGISTERS
