"""The lift of sm_90 instructions (kernelcheck.sass.lift_modern) and of LOP3 with a mask, on
the forms nvdisasm prints for the SASS fixture set (fixtures/sass/sm_90a/hopper.cubin)."""

from __future__ import annotations

import random
import struct

from kernelcheck.binary.nvdisasm import SassFunction, SassInstruction
from kernelcheck.ir.nodes import Immediate, Instruction, Module, Param, Register
from kernelcheck.launch.evaluate import evaluate
from kernelcheck.sass.analysis import analyze_sass_kernel
from kernelcheck.sass.calls import BRANCH_TARGETS_DIRECTIVE
from kernelcheck.sass.function import function_from_sass, label_for_offset
from kernelcheck.sass.lift import lift_function
from kernelcheck.sass.lift_logic import _reduce_lut

BASE = 0x7F0000000000


def _sass(lines, directives=(), labels=None):
    return function_from_sass(
        SassFunction("k", tuple(SassInstruction(16 * k, text) for k, text in
                                enumerate(lines))),
        params=(Param("param_0", "b64", 0), Param("param_1", "b64", 8),
                Param("param_2", "b32", 16)),
        directives=(("EIATTR_PARAM_CBANK", (0, 0x210, 20)),) + directives, labels=labels)


def _kernel(lines, directives=(), labels=None):
    function = _sass(lines, directives, labels)
    return analyze_sass_kernel(Module(None, ("sm_90",), 64, (function,), None), function)


def _verdict(summary, out, src, n=0, threads=32, blocks=4):
    return evaluate(summary.launch_check, struct.pack("<QQI", out, src, n), (blocks, 1, 1),
                    (threads, 1, 1)).verdict


def test_bulk_copies_read_and_write_their_bytes():
    # Block b copies 4096 bytes from in + 4096*b to out + 4096*b (UMOV UR8, 0x100: 256*16).
    summary = _kernel([
        "S2UR UR9, SR_CTAID.X",
        "ULDC.64 UR4, c[0x0][0x218]",
        "ULDC.64 UR10, c[0x0][0x210]",
        "UIMAD.WIDE.U32 UR4, UR9, 0x1000, UR4",
        "UIMAD.WIDE.U32 UR10, UR9, 0x1000, UR10",
        "UMOV UR6, 0x400",
        "UMOV UR8, 0x100",
        "UBLKCP.S.G [UR6], [UR4], UR8",
        "UBLKCP.G.S [UR10], [UR6], UR8",
        "UTMACMDFLUSH",
        "EXIT",
    ])
    widths = sorted((a.kind, a.width) for a in summary.accesses)
    assert widths == [("read", 4096), ("write", 4096)]
    assert _verdict(summary, BASE + 0x4000, BASE) == "idempotent"     # adjacent
    assert _verdict(summary, BASE + 0x3000, BASE) == "not_idempotent"  # overlaps tile 3


def test_bulk_copy_of_unknown_size_is_not_modelled():
    summary = _kernel([
        "ULDC.64 UR10, c[0x0][0x210]",
        "ULDC UR8, c[0x0][0x220]",
        "UMOV UR6, 0x400",
        "UBLKCP.G.S [UR10], [UR6], UR8",
        "EXIT",
    ])
    assert summary.kernel_class == "not_proven"
    assert any("UBLKCP.G.S" in r and "unknown size" in r for r in summary.reasons)


def test_tensor_map_copies_are_accesses_at_unknown_addresses():
    load_only = _kernel([
        "ULDC.64 UR12, c[0x0][0x210]",
        "UMOV UR8, 0x400",
        "UTMALDG.2D [UR8], [UR12]",
        "S2R R0, SR_TID.X",
        "LDC.64 R2, c[0x0][0x218]",
        "IMAD.WIDE.U32 R2, R0, 0x4, R2",
        "STG.E desc[UR4][R2.64], R0",
        "EXIT",
    ])
    assert load_only.kernel_class == "conditional"
    assert _verdict(load_only, BASE, BASE + 0x100000) == "not_proven"  # never "idempotent"
    store = _kernel([
        "ULDC.64 UR4, c[0x0][0x210]",
        "UMOV UR8, 0x400",
        "UTMASTG.2D [UR8], [UR4]",
        "EXIT",
    ])
    assert store.kernel_class == "not_proven"
    assert store.reasons == ("write at an unknown address: UTMASTG.2D /*0020*/",)


def test_bulk_reduction_is_not_modelled():
    summary = _kernel(["ULDC.64 UR10, c[0x0][0x210]", "UMOV UR6, 0x400",
                       "UMOV UR16, 0x10", "UBLKRED.G.S.ADD.F32.RN [UR10], [UR6], UR16",
                       "EXIT"])
    assert summary.kernel_class == "not_proven"
    assert any("bulk reduction" in r for r in summary.reasons)


def test_warpgroup_mma_defines_its_accumulators_only():
    # The accumulator R24.. is stored; its value is opaque, its address is not.
    summary = _kernel([
        "S2R R0, SR_TID.X",
        "LDC.64 R2, c[0x0][0x210]",
        "IMAD.WIDE.U32 R2, R0, 0x80, R2",
        "UMOV UR4, 0x400",
        "UMOV UR5, 0x8",
        "WARPGROUP.ARRIVE",
        "HGMMA.64x64x16.F32.BF16 R24, gdesc[UR4], RZ, !UPT, gsb0",
        "WARPGROUP.DEPBAR.LE gsb0, 0x0",
        "STG.E desc[UR4][R2.64+0x7c], R55",
        "USETMAXREG.DEALLOC.CTAPOOL 0x28",
        "STSM.16.M88.4 [R4], R8",
        "EXIT",
    ])
    assert summary.kernel_class == "always", summary.reasons
    function = lift_function(_sass(["HGMMA.64x64x16.F32.BF16 R24, gdesc[UR4], RZ, !UPT, gsb0",
                                    "EXIT"]))
    written = {o.name for i in function.instructions if i.operands
               for o in i.operands[:1] if type(o) is Register}
    assert {"%r24", "%r55"} <= written and "%r56" not in written


def test_wide_add_carries_into_the_high_word():
    # UIADD3.64 adds 0x4000 to the 64-bit pointer: p + 0x4000, whatever its low word.
    summary = _kernel([
        "ULDC.64 UR4, c[0x0][0x210]",
        "UIADD3.64 UR4, UR4, 0x4000, URZ",
        "S2R R0, SR_TID.X",
        "MOV R2, UR4",
        "MOV R3, UR5",
        "STG.E desc[UR6][R2.64], R0",
        "EXIT",
    ])
    assert [a.address for a in summary.accesses] == ["(param_0 + 16384)"]
    # Both registers of the pair are written (for every consumer of the operand tables).
    from kernelcheck.ir.operands import defs
    from kernelcheck.sass.grammar import parse_instruction_text

    parts = parse_instruction_text("UIADD3.64 UR4, UR4, 0x4000, URZ")
    wide = Instruction(parts.opcode, parts.modifiers, parts.operands)
    assert defs(wide) == ("UR4", "UR5")


def test_uniform_indirect_branch_goes_to_its_listed_targets():
    lines = [
        "S2R R0, SR_TID.X",
        "LDC.64 R2, c[0x0][0x210]",
        "ULDC UR4, c[0x0][0x220]",
        "BRXU UR4 -0x40",
        "IMAD.WIDE.U32 R2, R0, 0x4, R2",
        "STG.E desc[UR4][R2.64], R0",
        "EXIT",
    ]
    labels = {t: (label_for_offset(t),) for t in (0x40, 0x60)}
    known = _kernel(lines, ((BRANCH_TARGETS_DIRECTIVE, ((0x30, (0x40, 0x60)),)),), labels)
    assert known.kernel_class == "always"
    assert _kernel(lines, labels=labels).kernel_class == "not_proven"


def test_branch_on_any_thread_of_the_warp_is_no_guard_of_the_thread():
    # @P0 BRA.U.ANY: a thread with P0 false may branch with its warp, so the store after
    # the label is not known to run only where tid < 16.
    summary = _kernel([
        "S2R R0, SR_TID.X",
        "LDC.64 R2, c[0x0][0x210]",
        "ISETP.GE.U32.AND P0, PT, R0, 0x10, PT",
        "@P0 BRA.U.ANY 0x50",
        "EXIT",
        "IMAD.WIDE.U32 R2, R0, 0x4, R2",      # 0x50
        "STG.E desc[UR4][R2.64], R0",
        "EXIT",
    ])
    write = next(a for a in summary.accesses if a.kind == "write")
    assert "16" not in write.guard


def test_an_unknown_opcode_keeps_the_kernel_not_proven_and_is_named():
    summary = _kernel(["UTCBAR [UR4], URZ", "EXIT"])
    assert summary.kernel_class == "not_proven"
    assert summary.reasons == ("unknown instruction UTCBAR /*0000*/ in k",)


def _lop3(lut: int, a: int, b: int, c: int) -> int:
    return sum(((lut >> ((((a >> i) & 1) << 2) | (((b >> i) & 1) << 1) | ((c >> i) & 1)))
                & 1) << i for i in range(32))


def _form(form, values: dict) -> int:
    full = 0xFFFFFFFF
    kind = form[0]
    if kind == "const":
        return full if form[1] else 0
    if kind == "id":
        return values[id(form[1])]
    if kind == "not":
        return ~values[id(form[1])] & full
    x, y = values[id(form[1])], values[id(form[2])]
    if form[3]:
        y = ~y & full
    return {"and": x & y, "or": x | y, "xor": x ^ y}[kind]


def test_lop3_forms_compute_the_lookup_table():
    """Every reduced LOP3 form computes the instruction's lookup table on random words: with
    one input fixed to 0 or to all ones (``RZ``, ``0xffffffff``), and with one input a
    constant mask (the bit-field forms, ``(g1 & m) | (g0 & ~m)``)."""
    rng = random.Random(2026)
    full = 0xFFFFFFFF
    checked = 0
    for lut in range(256):
        for fixed_at in range(3):
            words = [rng.getrandbits(32) for _ in range(3)]
            inputs = [Register(f"R{k}") for k in range(3)]
            values = {id(o): w for o, w in zip(inputs, words, strict=True)}
            forms = {}
            for bit, constant in ((0, Immediate(0)), (1, Immediate(full))):
                fixed = list(inputs)
                fixed[fixed_at] = constant
                forms[bit] = _reduce_lut(lut, fixed)
                if forms[bit] is not None:
                    truth = list(words)
                    truth[fixed_at] = full if bit else 0
                    assert _form(forms[bit], values) == _lop3(lut, *truth), (lut, fixed_at)
                    checked += 1
            if forms[0] is not None and forms[1] is not None:
                mask = words[fixed_at]
                result = (_form(forms[1], values) & mask) | (_form(forms[0], values) & ~mask
                                                             & full)
                assert result == _lop3(lut, *words), (lut, fixed_at)
    assert checked > 1000


def test_sm100_uniform_constant_loads_read_the_parameters():
    # LDCU (sm_100) loads constant-bank words into uniform registers, as ULDC does.
    summary = _kernel([
        "S2R R0, SR_TID.X",
        "LDCU.64 UR4, c[0x0][0x210]",
        "LDCU.128 UR8, c[0x0][0x210]",
        "LDCU UR12, c[0x0][0x220]",
        "UP2UR UR13, UPR, URZ, 0x1",
        "MOV R2, UR10",
        "MOV R3, UR11",
        "IMAD.WIDE.U32 R4, R0, 0x4, R2",
        "LDG.E R6, desc[UR4][R4.64]",
        "MOV R2, UR4",
        "MOV R3, UR5",
        "IMAD.WIDE.U32 R2, R0, 0x4, R2",
        "STG.E desc[UR4][R2.64], R6",
        "EXIT",
    ])
    assert summary.kernel_class == "conditional", summary.reasons
    assert sorted(a.address for a in summary.accesses) == [
        "(4*%tid.x + param_0)", "(4*%tid.x + param_1)"]


def test_dependent_launch_waits_change_no_access():
    # ptxas writes PTX's griddepcontrol.wait as ACQBULK and griddepcontrol.launch_dependents
    # as PREEXIT: the kernel reads in[tid] and writes out[tid] as without them.
    lines = [
        "S2R R7, SR_TID.X",
        "LDC.64 R2, c[0x0][0x218]",
        "ACQBULK",
        "LDC.64 R4, c[0x0][0x210]",
        "IMAD.WIDE.U32 R2, R7, 0x4, R2",
        "LDG.E R2, desc[UR4][R2.64]",
        "IMAD.WIDE.U32 R4, R7, 0x4, R4",
        "FADD R7, R2, R2",
        "STG.E desc[UR4][R4.64], R7",
        "PREEXIT",
        "EXIT",
    ]
    summary = _kernel(lines)
    plain = _kernel([line for line in lines if line not in ("ACQBULK", "PREEXIT")])
    assert summary.kernel_class == plain.kernel_class == "conditional", summary.reasons
    assert _verdict(summary, BASE + 0x1000, BASE) == "idempotent"
    assert _verdict(summary, BASE, BASE + 0x40) == "not_idempotent"


def test_a_space_query_is_an_unknown_predicate_and_no_access():
    # QSPC (PTX's isspacep) tells whether a generic address is shared memory, as ptxas
    # writes a generic atomic: its predicate is not known, and it reads no byte.
    summary = _kernel([
        "S2R R0, SR_TID.X",
        "LDC.64 R2, c[0x0][0x210]",
        "IMAD.WIDE.U32 R2, R0, 0x4, R2",
        "QSPC.E.S P0, RZ, [R2]",
        "@P0 EXIT",
        "STG.E desc[UR4][R2.64], R0",
        "EXIT",
    ])
    assert summary.kernel_class == "always", summary.reasons
    (write,) = summary.accesses
    assert write.kind == "write" and write.guard.startswith("!(?")


def _packed_copy(pack: str, index: str, data: str):
    """The kernel that reads in[tid] (into R6) and stores ``data`` at out[``index``],
    with the integer pack ``pack`` (into R8) between the two."""
    return _kernel([
        "S2R R7, SR_TID.X",
        "LDC.64 R2, c[0x0][0x218]",
        "LDC.64 R4, c[0x0][0x210]",
        "IMAD.WIDE.U32 R2, R7, 0x4, R2",
        "LDG.E R6, desc[UR4][R2.64]",
        pack,
        f"IMAD.WIDE.U32 R4, {index}, 0x4, R4",
        f"STG.E desc[UR4][R4.64], {data}",
        "EXIT",
    ])


def test_an_integer_pack_only_writes_its_register():
    # I2IP packs two int32 values, saturated to int8, into one register (CUTLASS's int8
    # epilogues): a register-only instruction, so out[tid] = pack(in[tid]) reads and
    # writes what the plain copy does.
    summary = _packed_copy("I2IP.S8.S32.SAT R8, R6, R6, RZ", "R7", "R8")
    assert summary.kernel_class == "conditional", summary.reasons
    assert _verdict(summary, BASE + 0x1000, BASE) == "idempotent"
    assert _verdict(summary, BASE, BASE + 0x40) == "not_idempotent"


def test_an_integer_pack_in_an_address_is_not_a_known_address():
    # The packed value is opaque: a store at an address built from it may land on the
    # bytes the kernel reads, whatever the pointers.
    summary = _packed_copy("I2IP.S8.S32.SAT R8, R7, R7, RZ", "R8", "R6")
    write = next(a for a in summary.accesses if a.kind == "write")
    assert "?" in write.address, write.address  # an opaque term, not a function of tid
    for out, src in ((BASE + 0x100000, BASE), (BASE, BASE + 0x100000)):
        assert _verdict(summary, out, src) == "not_proven"
