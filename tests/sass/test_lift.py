"""The SASS lifter on hand-written instruction sequences the compilers emit."""

from __future__ import annotations

import struct

import pytest

from kernelcheck.analysis.summary import analyze_kernel
from kernelcheck.binary.nvdisasm import SassFunction, SassInstruction
from kernelcheck.ir.nodes import Module, Param
from kernelcheck.launch.evaluate import evaluate
from kernelcheck.sass.calls import BRANCH_TARGETS_DIRECTIVE, CBANK_FUNCTIONS_DIRECTIVE
from kernelcheck.sass.function import function_from_sass, label_for_offset
from kernelcheck.sass.lift import lift_function

BASE = 0x7F0000000000


def _kernel(lines: list[str], params=(("param_0", "b64", 0), ("param_1", "b32", 8)),
            directives=(), labels=None):
    sass = function_from_sass(
        SassFunction("k", tuple(SassInstruction(16 * k, text) for k, text in
                                enumerate(lines))),
        params=tuple(Param(name, kind, offset) for name, kind, offset in params),
        directives=(("EIATTR_PARAM_CBANK", (0, 0x210, _param_bytes(params))),) + directives,
        labels=labels)
    lifted = lift_function(sass)
    module = Module(None, ("sm_90",), 64, (lifted,), None)
    return analyze_kernel(module, lifted)


def _param_bytes(params) -> int:
    return max(offset + int(kind[1:]) // 8 for _, kind, offset in params)


def _write_terms(summary) -> list[str]:
    return [a.address for a in summary.accesses if a.kind == "write"]


def test_low_word_copied_before_its_high_word_is_computed():
    # q = p + 0x100 and r = q + 0x100, with r's low word computed from q's low word before
    # q's high word exists (the order compilers use in unrolled pointer chains).
    summary = _kernel([
        "S2R R0, SR_TID.X",
        "LDC.64 R2, c[0x0][0x210]",
        "IADD3 R4, P0, R2, 0x100, RZ",
        "IADD3 R6, P1, R4, 0x100, RZ",
        "IADD3.X R5, R3, RZ, RZ, P0, !PT",
        "IADD3.X R7, R5, RZ, RZ, P1, !PT",
        "STG.E desc[UR4][R6.64], R0",
        "EXIT",
    ])
    assert summary.kernel_class == "always"
    assert _write_terms(summary) == ["(param_0 + 512)"]


def test_pointer_copied_into_a_second_register_pair_stays_an_induction_variable():
    # p is kept both in R2:R3 and in the unaligned pair R6:R9 that the loop advances.
    summary = _kernel([
        "S2R R0, SR_TID.X",
        "LDC.64 R2, c[0x0][0x210]",
        "LDC R5, c[0x0][0x218]",
        "IMAD.MOV.U32 R6, RZ, RZ, R2",
        "IMAD.MOV.U32 R9, RZ, RZ, R3",
        "IMAD.MOV.U32 R4, RZ, RZ, RZ",
        "IMAD.MOV.U32 R10, RZ, RZ, R6",
        "IMAD.MOV.U32 R11, RZ, RZ, R9",
        "STG.E desc[UR4][R10.64], R0",
        "IADD3 R6, P0, R6, 0x4, RZ",
        "IADD3.X R9, R9, RZ, RZ, P0, !PT",
        "VIADD R4, R4, 0x1",
        "ISETP.GE.U32.AND P1, PT, R4, R5, PT",
        "@!P1 BRA 0x60",
        "EXIT",
    ])
    assert summary.kernel_class == "always"
    assert all("param_0" in term for term in _write_terms(summary))


@pytest.mark.parametrize("form, index", [
    # ptxas writes a + b + 1 as an extended add whose carry input is the constant PT.
    ("IMAD.X R4, R0, 0x1, R5, PT", "%tid.x + param_1 + 1"),
    ("IMAD.X R4, R0, 0x3, R5, PT", "3*%tid.x + param_1 + 1"),
    ("IADD3.X R4, R0, R5, RZ, !PT, PT", "%tid.x + param_1 + 1"),
    ("IADD3.X R4, R0, R5, RZ, PT, PT", "%tid.x + param_1 + 2"),
    ("IADD3.X R4, R0, R5, R0, !PT, !PT", "%tid.x + param_1 + %tid.x"),
])
def test_extended_add_with_constant_carries_keeps_the_store_address(form, index):
    # No carry chain feeds these: the word is the sum plus one per PT carry input, so the
    # store through it has a known address (it was "write at an unknown address").
    summary = _kernel([
        "S2R R0, SR_TID.X",
        "LDC.64 R2, c[0x0][0x210]",
        "LDC R5, c[0x0][0x218]",
        form,
        "IMAD.WIDE R2, R4, 0x4, R2",
        "STG.E desc[UR4][R2.64], R0",
        "EXIT",
    ])
    assert summary.kernel_class == "always"
    assert _write_terms(summary) == [f"(4*({index}) + param_0)"]


def test_extended_add_with_a_real_carry_and_a_constant_one_stays_opaque():
    # A carry chain's predicate together with PT: not read as a plain sum.
    summary = _kernel([
        "S2R R0, SR_TID.X",
        "LDC.64 R2, c[0x0][0x210]",
        "IADD3 R4, P0, R2, R0, RZ",
        "IADD3.X R5, R3, RZ, RZ, P0, PT",
        "STG.E desc[UR4][R4.64], R0",
        "EXIT",
    ])
    assert summary.kernel_class == "not_proven"


def test_chain_whose_low_word_is_rewritten_before_its_high_word_still_completes():
    # q = p + 4*tid and r = q + 8, with q's low word advanced to r's (R6 rewritten)
    # before q's high word is computed: how ptxas sets up an unrolled loop's pointer.
    summary = _kernel([
        "S2R R0, SR_TID.X",
        "LDC.64 R2, c[0x0][0x210]",
        "LEA R6, P4, R0, R2, 0x2",
        "IADD3 R6, P0, R6, 0x8, RZ",
        "LEA.HI.X R16, R0, R3, RZ, 0x2, P4",
        "IADD3.X R7, RZ, R16, RZ, P0, !PT",
        "STG.E desc[UR4][R6.64], R0",
        "EXIT",
    ])
    assert summary.kernel_class == "always"
    assert _write_terms(summary) == ["(4*%tid.x + param_0 + 8)"]


@pytest.mark.parametrize("copy", ["MOV R8, R6", "IMAD.MOV.U32 R8, RZ, RZ, R6"])
def test_low_word_copied_before_the_chain_completes_pairs_with_its_high_word(copy):
    # q = p + 4*tid: its low word is copied (as ptxas spills it to a frame slot) after the
    # LEA and before the LEA.HI.X; the copy and the high word are q.
    summary = _kernel([
        "S2R R0, SR_TID.X",
        "LDC.64 R2, c[0x0][0x210]",
        "LEA R6, P0, R0, R2, 0x2",
        copy,
        "LEA.HI.X R9, R0, R3, RZ, 0x2, P0",
        "STG.E desc[UR4][R8.64], R0",
        "EXIT",
    ])
    assert summary.kernel_class == "always"
    assert _write_terms(summary) == ["(4*%tid.x + param_0)"]


def test_low_word_copy_rewritten_before_the_chain_completes_is_not_paired():
    # The copy is overwritten with tid before the high word exists: R8:R9 is not q.
    summary = _kernel([
        "S2R R0, SR_TID.X",
        "LDC.64 R2, c[0x0][0x210]",
        "LEA R6, P0, R0, R2, 0x2",
        "MOV R8, R6",
        "MOV R8, R0",
        "LEA.HI.X R9, R0, R3, RZ, 0x2, P0",
        "STG.E desc[UR4][R8.64], R0",
        "EXIT",
    ])
    [term] = _write_terms(summary)
    assert term != "(4*%tid.x + param_0)"
    assert term.startswith("(%tid.x + "), term  # the low word is tid, the high q's


def test_chain_completed_in_between_keeps_a_scaled_sum_of_its_low_word():
    # i = tid + sext(n) as a 64-bit sum, then p + 4*i with the scaled sum begun from i's
    # low word before i's high word exists (the low register is not changed by that).
    summary = _kernel([
        "S2R R0, SR_TID.X",
        "LDC R4, c[0x0][0x218]",
        "LDC.64 R8, c[0x0][0x210]",
        "IADD3 R5, P0, R4, R0, RZ",
        "LEA R10, P2, R5, R8, 0x2",
        "LEA.HI.X.SX32 R6, R4, RZ, 0x1, P0",
        "LEA.HI.X R11, R5, R9, R6, 0x2, P2",
        "STG.E desc[UR4][R10.64], R0",
        "EXIT",
    ])
    assert summary.kernel_class == "always"
    assert len(_write_terms(summary)) == 1
    assert "param_0" in _write_terms(summary)[0]


@pytest.mark.parametrize("high", [
    "SHF.L.U64.HI R5, R0, 0x2, RZ",        # the bits shifted out of n, as a funnel shift
    "SHF.R.U32.HI R5, RZ, 0x1e, R0",       # and as a right shift of n
])
def test_lea_completed_by_an_extended_add_is_the_64_bit_sum(high):
    # p + 4*n for a 32-bit n: LEA adds the low words (4*n mod 2**32 and p's), IADD3.X adds
    # the bits of 4*n above 32 and p's high word with the carry. With n = 0x40000001 the
    # store is at p + 0x100000004, which overlaps a read there and misses a read at p + 4.
    summary = _kernel([
        "LDC R0, c[0x0][0x218]",
        "LDC.64 R2, c[0x0][0x210]",
        "LDC.64 R6, c[0x0][0x220]",
        "LDG.E R9, desc[UR4][R6.64]",
        "LEA R4, P0, R0, R2, 0x2",
        high,
        "IADD3.X R5, R5, R3, RZ, P0, !PT",
        "STG.E desc[UR4][R4.64], R9",
        "EXIT",
    ], params=(("param_0", "b64", 0), ("param_1", "b32", 8), ("param_2", "b64", 16)))
    assert summary.kernel_class == "conditional", summary.reasons

    def verdict(src: int) -> str:
        buffer = struct.pack("<QIIQ", BASE, 0x40000001, 0, src)
        return evaluate(summary.launch_check, buffer, (1, 1, 1), (1, 1, 1)).verdict

    assert verdict(BASE + 0x100000004) == "not_idempotent"
    assert verdict(BASE + 0x4) == "idempotent"


def test_rewritten_low_word_does_not_pair_with_the_completed_high_word():
    # The low word is replaced by another value before the high word is written: the
    # pair is tid in the low word and the high word of p + tid, not p + tid.
    summary = _kernel([
        "S2R R0, SR_TID.X",
        "LDC.64 R2, c[0x0][0x210]",
        "IADD3 R6, P0, R2, R0, RZ",
        "MOV R6, R0",
        "IADD3.X R7, RZ, R3, RZ, P0, !PT",
        "STG.E desc[UR4][R6.64], R0",
        "EXIT",
    ])
    assert _write_terms(summary) == ["(%tid.x + 0x100000000*(param_0 + %tid.x) >> 32)"]


def test_second_of_two_int_parameters_read_as_one_pair_is_that_parameter():
    # LDC.64 reads n (param_1) and m (param_2) together; the high register is m itself,
    # not the 64-bit pair shifted right by 32.
    summary = _kernel([
        "S2R R0, SR_TID.X",
        "LDC.64 R4, c[0x0][0x218]",
        "LDC.64 R2, c[0x0][0x210]",
        "IADD3 R6, R5, R0, RZ",
        "IMAD.WIDE.U32 R2, R6, 0x4, R2",
        "STG.E desc[UR4][R2.64], R4",
        "EXIT",
    ], params=(("param_0", "b64", 0), ("param_1", "b32", 8), ("param_2", "b32", 12)))
    assert _write_terms(summary) == ["(4*(param_2 + %tid.x) + param_0)"]


def test_first_of_two_int_parameters_read_as_one_pair_is_that_parameter_in_a_product():
    # The low register of the pair times tid: the 32-bit product does not see param_2
    # (it was n + 2**32*m times tid, a range 2**32 times too wide at launch).
    summary = _kernel([
        "S2R R0, SR_TID.X",
        "LDC.64 R4, c[0x0][0x218]",
        "LDC.64 R2, c[0x0][0x210]",
        "IMAD R6, R0, R4, RZ",
        "IMAD.WIDE.U32 R2, R6, 0x4, R2",
        "STG.E desc[UR4][R2.64], R4",
        "EXIT",
    ], params=(("param_0", "b64", 0), ("param_1", "b32", 8), ("param_2", "b32", 12)))
    assert _write_terms(summary) == ["(4*%tid.x*param_1 + param_0)"]


_ASSERTING = [
    "S2R R0, SR_TID.X",
    "LDC R5, c[0x0][0x218]",
    "ISETP.GE.U32.AND P0, PT, R0, R5, PT",
    "@!P0 BRA 0x80",
    "MOV R2, 0x8",
    "LDC.64 R2, c[0x4][R2]",
    "LEPC R20, 0x70",
    "CALL.ABS.NOINC R2",
    "LDC.64 R2, c[0x0][0x210]",
    "IMAD.WIDE.U32 R2, R0, 0x4, R2",
    "STG.E desc[UR4][R2.64], R0",
    "EXIT",
]


def test_call_of_assertfail_stops_the_thread():
    # CUDA_KERNEL_ASSERT(tid < n) then p[tid] = tid: the failing branch ends the launch.
    table = ((CBANK_FUNCTIONS_DIRECTIVE, ((4, 0, "vprintf"), (4, 8, "__assertfail"))),)
    summary = _kernel(_ASSERTING, directives=table)
    assert summary.kernel_class == "always"


def test_absolute_call_of_an_unknown_target_is_not_proven():
    table = ((CBANK_FUNCTIONS_DIRECTIVE, ((4, 0, "__assertfail"), (4, 8, "malloc"))),)
    for directives in ((), table):
        summary = _kernel(_ASSERTING, directives=directives)
        assert summary.kernel_class == "not_proven"
        assert any("sass.call" in reason for reason in summary.reasons)


def test_indirect_branch_goes_to_its_listed_targets():
    lines = [
        "S2R R0, SR_TID.X",
        "LDC.64 R2, c[0x0][0x210]",
        "LDC R4, c[0x0][0x218]",
        "BRX R4, -0x40",
        "IMAD.WIDE.U32 R2, R0, 0x4, R2",
        "STG.E desc[UR4][R2.64], R0",
        "EXIT",
    ]
    targets = ((0x30, (0x40, 0x60)),)
    labels = {t: (label_for_offset(t),) for t in (0x40, 0x60)}
    known = _kernel(lines, directives=((BRANCH_TARGETS_DIRECTIVE, targets),), labels=labels)
    assert known.kernel_class == "always"
    unknown = _kernel(lines, labels=labels)
    assert unknown.kernel_class == "not_proven"
    assert any("sass.brx" in reason for reason in unknown.reasons)


def test_multiply_high_keeps_the_quotient_bounded():
    # p[tid / 3] = p[tid + 1024]: the quotient (IMAD.HI by the magic number, then a shift)
    # stays below 86 for 256 threads, so the write never meets the read.
    import struct

    from kernelcheck.launch.evaluate import evaluate

    summary = _kernel([
        "S2R R0, SR_TID.X",
        "LDC.64 R2, c[0x0][0x210]",
        "IADD3 R5, R0, 0x400, RZ",
        "IMAD.WIDE.U32 R6, R5, 0x4, R2",
        "LDG.E R8, desc[UR4][R6.64]",
        "IMAD.HI.U32 R4, R0, -0x55555555, RZ",
        "SHF.R.U32.HI R4, RZ, 0x1, R4",
        "IMAD.WIDE.U32 R2, R4, 0x4, R2",
        "STG.E desc[UR4][R2.64], R8",
        "EXIT",
    ])
    assert summary.kernel_class == "conditional"
    params = struct.pack("<QI", 0x7F0000000000, 0)
    verdict = evaluate(summary.launch_check, params, (1, 1, 1), (256, 1, 1))
    assert verdict.verdict == "idempotent"
    clobbering = evaluate(summary.launch_check, params, (1, 1, 1), (4096, 1, 1))
    assert clobbering.verdict == "not_idempotent"


def test_multiply_high_adds_the_register_pair_after_its_addend():
    # IMAD.HI.U32 d, a, b, R4 adds the pair R4:R5 to the product: with zero in R4 and c in
    # R5 it is umulhi(a, b) + c (ptxas writes ``__umulhi(a, b) + c`` so). p[umulhi(tid, 16)
    # + c] is written (umulhi is 0 here) and p[1024 + tid] read: they meet when c = 1024.
    import struct

    from kernelcheck.launch.evaluate import evaluate

    summary = _kernel([
        "S2R R0, SR_TID.X",
        "LDC.64 R2, c[0x0][0x210]",
        "LDC R5, c[0x0][0x218]",
        "HFMA2.MMA R4, -RZ, RZ, 0, 0",
        "IADD3 R7, R0, 0x400, RZ",
        "IMAD.WIDE.U32 R8, R7, 0x4, R2",
        "LDG.E R10, desc[UR4][R8.64]",
        "IMAD.HI.U32 R6, R0, 0x10, R4",
        "IMAD.WIDE.U32 R2, R6, 0x4, R2",
        "STG.E desc[UR4][R2.64], R10",
        "EXIT",
    ])
    base = 0x7F0000000000
    meets = evaluate(summary.launch_check, struct.pack("<QI", base, 1024), (1, 1, 1),
                     (32, 1, 1))
    assert meets.verdict == "not_idempotent"
    apart = evaluate(summary.launch_check, struct.pack("<QI", base, 0), (1, 1, 1), (32, 1, 1))
    assert apart.verdict == "idempotent"


def test_multimem_load_reduce_is_a_global_read_of_its_width():
    summary = _kernel([
        "S2R R0, SR_TID.X",
        "LDC.64 R2, c[0x0][0x210]",
        "IMAD.WIDE.U32 R2, R0, 0x10, R2",
        "LDGMC.E.ADD.F32x4.RN.STRONG.SYS R8, [R2.64+URZ]",
        "STG.E.128 desc[UR4][R2.64], R8",
        "EXIT",
    ])
    reads = [a for a in summary.accesses if a.kind == "read"]
    assert [(a.width, a.base) for a in reads] == [(16, "param_0")]
    assert summary.kernel_class == "never"  # each thread reads, then writes, its 16 bytes


def test_printf_writes_nothing_the_program_reads_but_clobbers_registers():
    table = ((CBANK_FUNCTIONS_DIRECTIVE, ((4, 0, "vprintf"),)),)
    store_then_print = [
        "S2R R0, SR_TID.X",
        "LDC.64 R2, c[0x0][0x210]",
        "IMAD.WIDE.U32 R2, R0, 0x4, R2",
        "STG.E desc[UR4][R2.64], R0",
        "MOV R4, 0x0",
        "LDC.64 R4, c[0x4][R4]",
        "LEPC R20, 0x80",
        "CALL.ABS.NOINC R4",
        "EXIT",
    ]
    assert _kernel(store_then_print, directives=table).kernel_class == "always"
    print_then_store = store_then_print[:3] + store_then_print[4:8] + [
        "STG.E desc[UR4][R2.64], R0", "EXIT"]
    after = _kernel(print_then_store, directives=table)
    assert after.kernel_class == "not_proven"  # R2:R3 may have changed in the call
    assert any("unknown address" in reason for reason in after.reasons)


def test_printf_address_loaded_in_an_earlier_block_is_still_printf():
    # The bank-4 load and the call sit in different blocks (a wait loop between them, as in
    # CUTLASS's error paths): the lifter's fact on R8 still names vprintf.
    table = ((CBANK_FUNCTIONS_DIRECTIVE, ((4, 0, "vprintf"),)),)
    summary = _kernel([
        "S2R R0, SR_TID.X",
        "LDC.64 R2, c[0x0][0x210]",
        "IMAD.WIDE.U32 R2, R0, 0x4, R2",
        "STG.E desc[UR4][R2.64], R0",
        "MOV R8, 0x0",
        "LDC.64 R8, c[0x4][R8]",
        "ISETP.NE.AND P0, PT, R0, RZ, PT",
        "@P0 BRA 0x90",
        "NOP",
        "LEPC R20, 0xb0",                     # 0x90
        "CALL.ABS.NOINC R8",
        "EXIT",                               # 0xb0
    ], directives=table)
    assert summary.kernel_class == "always", summary.reasons


_PRINT_TRAP_THEN_STORE = [
    "S2R R0, SR_TID.X",
    "LDC R5, c[0x0][0x218]",
    "ISETP.GE.U32.AND P0, PT, R0, R5, PT",
    "@!P0 BRA 0xc0",
    "MOV R8, 0x0",
    "LDC.64 R8, c[0x4][R8]",
    "LEPC R20, 0x80",
    "CALL.ABS.NOINC R8",
    "BPT.TRAP 0x1",                       # 0x80
    "LDC.64 R8, c[0x4][R5]",              # dead: no path runs past the trap
    "CALL.ABS.NOINC R8",
    "STG.E desc[UR4][R8.64], R0",
    "LDC.64 R2, c[0x0][0x210]",           # 0xc0
    "IMAD.WIDE.U32 R2, R0, 0x4, R2",
    "STG.E desc[UR4][R2.64], R0",
    "EXIT",
]


_PRINTF_TABLE = ((CBANK_FUNCTIONS_DIRECTIVE, ((4, 0, "vprintf"),)),)


def test_a_trap_ends_the_thread():
    # if (tid >= n) { printf(...); __trap(); } p[tid] = tid. ptxas leaves code after
    # BPT.TRAP (CUTLASS's paths for features the target lacks); none of it runs, so
    # neither the call of an unknown address nor the store there counts.
    summary = _kernel(_PRINT_TRAP_THEN_STORE, directives=_PRINTF_TABLE)
    assert summary.kernel_class == "always", summary.reasons
    assert len([a for a in summary.accesses if a.kind == "write"]) == 1


@pytest.mark.parametrize("breakpoint", [
    "@P0 BPT.TRAP 0x1",  # the threads where P0 is false run the code after it
    "BPT.DRAIN 0x0",     # not a trap
])
def test_a_guarded_trap_or_another_breakpoint_lets_the_thread_run_on(breakpoint):
    lines = list(_PRINT_TRAP_THEN_STORE)
    lines[8] = breakpoint
    summary = _kernel(lines, directives=_PRINTF_TABLE)
    assert summary.kernel_class == "not_proven"
    assert any("sass.call" in reason for reason in summary.reasons), summary.reasons


def test_constant_bank_read_at_a_register_offset_reads_the_parameter_table():
    # LDC.64 R2, c[0x0][R4+0x210]: block b reads the pointer at parameter byte 8*b (a
    # by-value table of pointers); the launch check reads it from the buffer (PARAMX) and
    # expands the access block by block.
    summary = _kernel([
        "S2R R0, SR_CTAID.X",
        "S2R R1, SR_TID.X",
        "IMAD.SHL.U32 R4, R0, 0x8, RZ",
        "LDC.64 R2, c[0x0][R4+0x210]",
        "LDC.U8 R5, c[0x0][R0+0x230]",
        "IMAD.WIDE.U32 R2, R1, 0x4, R2",
        "STG.E desc[UR4][R2.64], R5",
        "EXIT",
    ], params=(("param_0", "b8", 0),))
    assert summary.kernel_class == "always"
    assert _write_terms(summary) == ["(4*%tid.x + param[8*%ctaid.x])"]
    check = summary.launch_check
    assert any(op == 25 for op, *_ in check.program)  # PARAMX
    (write,) = check.accesses
    assert check.program[write.expand_slot][:2] == (3, 3)  # TVAR %ctaid.x


def test_cs2r_of_srz_zeroes_the_register_pair():
    # `CS2R R8, SRZ` writes R8 and R9: the stale R9 (here the block index) must not become
    # the high word of the index the store adds.
    summary = _kernel([
        "S2R R9, SR_CTAID.X",
        "S2R R0, SR_TID.X",
        "LDC.64 R2, c[0x0][0x210]",
        "CS2R R8, SRZ",
        "IADD3 R4, P0, R8, R2, RZ",
        "IADD3.X R5, R9, R3, RZ, P0, !PT",
        "STG.E desc[UR4][R4.64], R0",
        "EXIT",
    ])
    assert _write_terms(summary) == ["param_0"]


def test_cs2r_into_the_zero_register_writes_nothing():
    # `CS2R RZ, SRZ` (seen in libtorch's lstm_cell_forward) discards both words: the
    # kernel is analysed, and the registers around it keep their values.
    summary = _kernel([
        "S2R R0, SR_TID.X",
        "LDC.64 R2, c[0x0][0x210]",
        "CS2R RZ, SRZ",
        "MOV.64 RZ, R2",
        "IMAD.WIDE.U32 R2, R0, 0x4, R2",
        "STG.E desc[UR4][R2.64], R0",
        "EXIT",
    ])
    assert summary.kernel_class == "always"
    assert _write_terms(summary) == ["(4*%tid.x + param_0)"]


def test_cs2r_defines_both_registers_of_its_pair():
    from kernelcheck.ir.operands import defs

    sass = function_from_sass(
        SassFunction("k", (SassInstruction(0, "CS2R R8, SRZ"),
                           SassInstruction(16, "CS2R.32 R10, SR_CLOCKLO"),
                           SassInstruction(32, "EXIT"))),
        params=(), directives=(("EIATTR_PARAM_CBANK", (0, 0x210, 0)),))
    first, second = sass.instructions[:2]
    assert defs(first) == ("R8", "R9")
    assert defs(second) == ("R10",)


def test_if_converted_lea_pair_keeps_the_store_address():
    # `@P0 LEA` / `@P0 LEA.HI.X` under one guard, as ptxas if-converts an unrolled guarded
    # store: the 64-bit address is p + 4*i, not a high word left opaque.
    summary = _kernel([
        "S2R R0, SR_TID.X",
        "LDC.64 R2, c[0x0][0x210]",
        "LDC R5, c[0x0][0x218]",
        "ISETP.GE.U32.AND P0, PT, R0, R5, PT",
        "@!P0 LEA R6, P1, R0, R2, 0x2",
        "@!P0 LEA.HI.X R7, R0, R3, RZ, 0x2, P1",
        "@!P0 STG.E desc[UR4][R6.64], R0",
        "EXIT",
    ])
    assert summary.kernel_class == "always"
    assert _write_terms(summary) == ["(4*%tid.x + param_0)"]


def test_extended_compare_pairs_with_a_low_word_rewritten_in_between():
    # for (i = tid; 4*i < n && i < 128; i += ntid) out[i] = in[i], with a 64-bit i in
    # R16:R17: the low compare reads R3 = lo(4*i), then SHF.L.U64.HI rewrites R3 with
    # hi(4*i) before the `.EX` half reads it, and the chain that advances i completes
    # between the compares. Both tests bound the loop: with 8 threads and n = 100 bytes
    # the stores stay in [out, out + 100) (the test of i < 128 alone would give 512).
    summary = _kernel([
        "S2R R16, SR_TID.X",
        "LDC.64 R10, c[0x0][0x210]",
        "LDC.64 R12, c[0x0][0x220]",
        "LDC R0, c[0x0][0x218]",
        "ULDC UR6, c[0x0][0x0]",
        "IMAD.MOV.U32 R17, RZ, RZ, RZ",
        "IMAD.SHL.U32 R15, R16, 0x4, RZ",
        "SHF.L.U64.HI R3, R16, 0x2, R17",
        "IADD3 R8, P0, R12, R15, RZ",
        "IMAD.X R9, R13, 0x1, R3, P0",
        "LDG.E R5, desc[UR4][R8.64]",
        "IADD3 R14, P0, R10, R15, RZ",
        "IMAD.X R15, R11, 0x1, R3, P0",
        "STG.E desc[UR4][R14.64], R5",
        "IADD3 R16, P0, R16, UR6, RZ",
        "ISETP.LT.U32.AND P1, PT, R16, 0x80, PT",
        "IMAD.SHL.U32 R3, R16, 0x4, RZ",
        "IMAD.X R17, RZ, RZ, R17, P0",
        "ISETP.GE.U32.AND P0, PT, R3, R0, PT",
        "SHF.L.U64.HI R3, R16, 0x2, R17",
        "ISETP.LT.U32.AND.EX P1, PT, R17, RZ, PT, P1",
        "ISETP.GE.AND.EX P0, PT, R3, RZ, PT, P0",
        "@!P0 BRA P1, 0x60",
        "EXIT",
    ], params=(("out", "b64", 0), ("n", "b32", 8), ("in", "b64", 16)),
    )
    from kernelcheck.launch.evaluate import _run

    check = summary.launch_check
    params = ((0x10000).to_bytes(8, "little") + (100).to_bytes(8, "little")
              + (0x20000).to_bytes(8, "little"))
    vals, _ = _run(check.program, params, (1, 1, 1), (8, 1, 1))
    write = next(a for a in check.accesses if a.kind == 1)
    ranges = vals[write.addr_slot]
    assert (ranges[0][0], ranges[-1][1] + write.width) == (0x10000, 0x10000 + 100)


def test_three_input_plop3_of_one_row_is_a_conjunction():
    # `PLOP3.LUT P0, PT, P0, P1, P2, 0x1, 0x0` is !P0 && !P1 && !P2 (ptxas joins the tests
    # that pick a vector path this way): under it, tid < n holds, so the store is bounded.
    summary = _kernel([
        "S2R R0, SR_TID.X",
        "LDC.64 R2, c[0x0][0x210]",
        "LDC R5, c[0x0][0x218]",
        "ISETP.GE.U32.AND P0, PT, R0, R5, PT",
        "ISETP.GT.U32.AND P1, PT, R0, 0x3ff, PT",
        "LOP3.LUT P2, RZ, R2, 0xf, RZ, 0xc0, !PT",
        "PLOP3.LUT P0, PT, P0, P1, P2, 0x1, 0x0",
        "@!P0 EXIT",
        "IMAD.WIDE.U32 R6, R0, 0x4, R2",
        "STG.E desc[UR4][R6.64], R0",
        "EXIT",
    ])
    from kernelcheck.analysis.terms import render

    write = next(a for a in summary.accesses if a.kind == "write")
    assert "%tid.x" in write.guard and "?" not in write.guard, write.guard
    assert render is not None


_SCALED_SIGNED_INDEX = [
    "LDC R8, c[0x0][0x218]",
    "LDC.64 R2, c[0x0][0x210]",
    "LDC.64 R6, c[0x0][0x220]",
    "LDG.E R9, desc[UR4][R6.64]",
    "SHF.R.S64 R4, RZ, 0x1e, R8",         # the low word of sext(n) << 2
    "IADD3 R4, P0, R4, R2, RZ",
    "LEA.HI.X.SX32 R5, R8, R3, 0x2, P0",  # its high word, p's and the carry
    "STG.E desc[UR4][R4.64], R9",
    "EXIT",
]
_SCALED_PARAMS = (("param_0", "b64", 0), ("param_1", "b32", 8), ("param_2", "b64", 16))


def test_signed_index_scaled_by_a_funnel_shift_is_the_64_bit_sum():
    # p + 4*(long)n, as ptxas writes it for p[n] with a signed 32-bit n: with n = -1 the
    # store is at p - 4, not at p + 4*0xffffffff.
    summary = _kernel(_SCALED_SIGNED_INDEX, params=_SCALED_PARAMS)
    assert summary.kernel_class == "conditional", summary.reasons

    def verdict(src: int) -> str:
        buffer = struct.pack("<QIIQ", BASE, 0xFFFFFFFF, 0, src)
        return evaluate(summary.launch_check, buffer, (1, 1, 1), (1, 1, 1)).verdict

    assert verdict(BASE - 4) == "not_idempotent"
    assert verdict(BASE + 4 * 0xFFFFFFFF) == "idempotent"


def test_signed_index_rewritten_before_its_high_word_is_not_paired():
    # The high instruction reads n after it changed: its word is not the high word of the
    # shifted n the low sum used, so the address stays unknown.
    lines = list(_SCALED_SIGNED_INDEX)
    lines.insert(lines.index("LEA.HI.X.SX32 R5, R8, R3, 0x2, P0"), "IADD3 R8, R8, 0x1, RZ")
    summary = _kernel(lines, params=_SCALED_PARAMS)
    assert summary.kernel_class == "not_proven"
    assert any("unknown address" in r for r in summary.reasons), summary.reasons


_STRIDE_TIMES_THREE = [
    "LDC.64 R2, c[0x0][0x210]",
    "LDC R4, c[0x0][0x230]",
    "LDC.64 R6, c[0x0][0x228]",
    "LDG.E R10, desc[UR4][R6.64]",
    "IMAD.SHL.U32 R4, R4, 0x8, RZ",
    "LDC.64 R8, c[0x0][R4+0x218]",       # s = strides[d], d a launch argument
    "S2R R0, SR_TID.X",
    "IADD3 R14, P0, R2, R0, RZ",         # q = p + tid
    "IADD3.X R15, R3, RZ, RZ, P0, !PT",
    "IMAD R13, R9, 0x3, RZ",             # hi(s) * 3
    "IMAD.WIDE.U32 R16, R8, 0x3, R14",   # lo(s) * 3 + q, as a 64-bit sum
    "IMAD.IADD R17, R17, 0x1, R13",      # its high word plus hi(s) * 3
    "STG.E desc[UR4][R16.64], R10",
    "EXIT",
]
#: p, strides[2], q (read), d (which stride)
_STRIDE_PARAMS = (("param_0", "b64", 0), ("param_1", "b64", 8), ("param_2", "b64", 16),
                  ("param_3", "b64", 24), ("param_4", "b32", 32))


def _stride_buffer(s: int, src: int) -> bytes:
    return struct.pack("<QQQQI", BASE, 0x40, s, src, 1)


def test_64_bit_value_times_a_constant_in_two_words_is_the_64_bit_product():
    # p + tid + 3*strides[d] for 64-bit strides read at a launch-time index, as ptxas
    # multiplies a 64-bit stride by a constant (libtorch's triu/tril kernels): with a
    # stride of 2**32 + 1 thread 0 stores at p + 3*2**32 + 3, and the store's base is p.
    summary = _kernel(_STRIDE_TIMES_THREE, params=_STRIDE_PARAMS)
    assert summary.kernel_class == "conditional", summary.reasons
    # One 64-bit sum on the base p, not words recombined around an unknown base.
    assert _write_terms(summary) == ["(3*param[8*param_4 + 8] + param_0 + %tid.x)"]
    assert summary.reasons[0].startswith("not idempotent when param_0 overlaps param_3")

    def verdict(src: int) -> str:
        buffer = _stride_buffer((1 << 32) + 1, src)
        return evaluate(summary.launch_check, buffer, (1, 1, 1), (1, 1, 1)).verdict

    assert verdict(BASE + 3 * (1 << 32) + 3) == "not_idempotent"
    assert verdict(BASE + 3) == "idempotent"


def test_64_bit_product_completed_by_iadd3_is_the_same_product():
    # ptxas completes the high word with IADD3 hi, hi, m, RZ as often as with IMAD.IADD
    # (libtorch's triu_tril kernels use both in one unrolled loop).
    lines = ["IADD3 R17, R17, R13, RZ" if line.startswith("IMAD.IADD") else line
             for line in _STRIDE_TIMES_THREE]
    summary = _kernel(lines, params=_STRIDE_PARAMS)
    assert _write_terms(summary) == ["(3*param[8*param_4 + 8] + param_0 + %tid.x)"]


#: The stride is loaded into UR4:UR5 and copied to R8:R9; a block ends between the copy
#: and the product, which moves R8:R9 into its own 64-bit register
#: (triu_tril_kernel<c10::Half, long, ...>).
_COPY_AT_BLOCK_END = [
    "LDC.64 R2, c[0x0][0x210]",
    "LDC.64 R6, c[0x0][0x220]",
    "LDG.E R10, desc[UR6][R6.64]",
    "ULDC.64 UR4, c[0x0][0x218]",
    "S2R R0, SR_TID.X",
    "IADD3 R14, P0, R2, R0, RZ",
    "IADD3.X R15, R3, RZ, RZ, P0, !PT",
    "MOV R8, UR4",
    "IMAD.U32 R9, RZ, RZ, UR5",
    "ISETP.GE.AND P0, PT, R0, 0x10, PT",
    "@P0 EXIT",
    "UIMAD UR8, UR5, 0x3, URZ",
    "IMAD.WIDE.U32 R16, R8, 0x3, R14",
    "IADD3 R17, R17, UR8, RZ",
    "STG.E desc[UR6][R16.64], R10",
    "EXIT",
]


def test_64_bit_product_of_a_copy_moved_at_a_block_end():
    # The high word's product (UIMAD of UR5) names the stride's first register, the low
    # word's (IMAD.WIDE of R8) the copy's: the same value.
    summary = _kernel(_COPY_AT_BLOCK_END, params=(("param_0", "b64", 0), ("param_1", "b64", 8),
                                                  ("param_2", "b64", 16)))
    assert _write_terms(summary) == ["(3*param_1 + param_0 + %tid.x)"], summary.reasons
    assert summary.kernel_class == "conditional", summary.reasons


def test_64_bit_product_of_a_copy_never_mixes_two_strides():
    # As above, but UR4:UR5 is reloaded with another stride after the block end: the high
    # word's product is then of that stride, R8:R9 still holds the first, and the pair is
    # not x*k + c of either. Thread 0's address, word by word, must never be missed.
    lines = list(_COPY_AT_BLOCK_END)
    lines.insert(lines.index("@P0 EXIT") + 1, "ULDC.64 UR4, c[0x0][0x228]")
    summary = _kernel(lines, params=(("param_0", "b64", 0), ("param_1", "b64", 8),
                                     ("param_2", "b64", 16), ("param_3", "b64", 24)))
    assert _write_terms(summary) != ["(3*param_1 + param_0 + %tid.x)"]
    for first, second in (((1 << 32) + 4, 4), (8, (2 << 32) + 8), ((5 << 32) + 1, 7 << 32)):
        low = (first & 0xFFFFFFFF) * 3 + BASE
        high = ((low >> 32) + (second >> 32) * 3) & 0xFFFFFFFF
        stored = high << 32 | low & 0xFFFFFFFF
        buffer = struct.pack("<QQQQ", BASE, first, stored, second)
        verdict = evaluate(summary.launch_check, buffer, (1, 1, 1), (1, 1, 1)).verdict
        assert verdict != "idempotent", (hex(first), hex(second), summary.kernel_class)


def _words(x: int) -> tuple[int, int]:
    return x & 0xFFFFFFFF, (x >> 32) & 0xFFFFFFFF


def _stored_at(lines, p: int, s: int) -> int:
    """The store address of thread 0 in the variants below, computed word by word as the
    machine does (an independent reading of the same instructions)."""
    s_lo, s_hi = _words(s)
    regs = {}
    for line in lines:
        if line.startswith("IMAD R13, R9, 0x"):
            regs["R13"] = (s_hi * int(line.split("0x")[1].split(",")[0], 16)) & 0xFFFFFFFF
        elif line.startswith("IMAD R13, R8, 0x"):
            regs["R13"] = (s_lo * int(line.split("0x")[1].split(",")[0], 16)) & 0xFFFFFFFF
        elif line.startswith("IMAD.WIDE.U32"):
            regs["R16"], regs["R17"] = _words(s_lo * 3 + p)
        elif line.startswith("IMAD.IADD R17, R17"):
            regs["R17"] = (regs["R17"] + regs["R13"]) & 0xFFFFFFFF
        elif line.startswith("IMAD.IADD R17, R16"):
            regs["R17"] = (regs["R16"] + regs["R13"]) & 0xFFFFFFFF
        elif line == "IADD3 R17, R17, R13, RZ":
            regs["R17"] = (regs["R17"] + regs["R13"]) & 0xFFFFFFFF
        elif line == "IADD3 R17, R16, R13, RZ":
            regs["R17"] = (regs["R16"] + regs["R13"]) & 0xFFFFFFFF
    return regs["R16"] | regs["R17"] << 32


# CUB saves predicates with P2R and restores them with ISETP.NE; the store is guarded by
# the LOP3 recomputed while the restored predicate still holds.
_PREDICATE_SAVED = [
    "S2R R0, SR_TID.X",
    "LDC R141, c[0x0][0x218]",
    "LOP3.LUT P5, RZ, R141.reuse, 0x10, RZ, 0xc0, !PT",
    "P2R R82, PR, RZ, 0x20",
    "ISETP.GE.AND P5, PT, R0, 0x20, PT",
    "ISETP.NE.AND P5, PT, R82, RZ, PT",
    "@P5 LDC.64 R2, c[0x0][0x210]",
    "@P5 IMAD.WIDE R2, R0, 0x4, R2",
    "LOP3.LUT P6, RZ, R141, 0x10, RZ, 0xc0, !PT",
    "@P6 STG.E desc[UR4][R2.64], R0",
    "EXIT",
]


def test_a_guard_saved_with_p2r_and_restored_keeps_what_it_guarded():
    assert _write_terms(_kernel(_PREDICATE_SAVED)) == ["(4*%tid.x + param_0)"]


@pytest.mark.parametrize("saved", ["P2R R82, PR, RZ, 0x10", "P2R R82, PR, R7, 0x20"],
                         ids=["another-predicate", "other-bits-kept"])
def test_a_register_that_did_not_save_the_guard_restores_nothing(saved):
    lines = list(_PREDICATE_SAVED)
    lines[3] = saved
    [address] = _write_terms(_kernel(lines))
    assert address != "(4*%tid.x + param_0)"


@pytest.mark.parametrize("change", [
    None,
    ("IMAD R13, R9, 0x3, RZ", "IMAD R13, R9, 0x5, RZ"),      # another constant
    ("IMAD R13, R9, 0x3, RZ", "IMAD R13, R8, 0x3, RZ"),      # the low word, not the high
    ("IMAD.IADD R17, R17, 0x1, R13", "IMAD.IADD R17, R16, 0x1, R13"),  # not its own word
    ("IMAD.IADD R17, R17, 0x1, R13", "IADD3 R17, R17, R13, RZ"),        # the IADD3 form
    ("IMAD.IADD R17, R17, 0x1, R13", "IADD3 R17, R16, R13, RZ"),        # not its own word
])
def test_64_bit_product_never_misses_the_stored_address(change):
    lines = list(_STRIDE_TIMES_THREE)
    if change is not None:
        lines = [change[1] if line == change[0] else line for line in lines]
    summary = _kernel(lines, params=_STRIDE_PARAMS)
    for s in ((2 << 32) + 1, (7 << 32) + 0x80000001, 5):
        stored = _stored_at(lines, BASE, s)
        buffer = _stride_buffer(s, stored)
        verdict = evaluate(summary.launch_check, buffer, (1, 1, 1), (1, 1, 1)).verdict
        assert verdict != "idempotent", (change, hex(s), summary.kernel_class)


#: Two carry chains under one guard, the second begun from the first's low word before the
#: first's high word exists, then the pair moved under the same guard (libtorch's
#: warpMergeSortKVInPlace: `out + 2 * ((k << 5) + q)` for a lane past the tail check).
_GUARDED_CHAINS = [
    "S2R R0, SR_TID.X",
    "LDC R4, c[0x0][0x220]",             # k
    "LDC.64 R8, c[0x0][0x218]",          # q, a 64-bit offset
    "LDC.64 R20, c[0x0][0x210]",         # out
    "LDC.64 R6, c[0x0][0x228]",          # in
    "LDG.E.U16 R10, desc[UR4][R6.64]",
    "ISETP.GE.AND P1, PT, R0, R4, PT",
    "@!P1 LEA R23, P3, R4, R8, 0x5",     # low word of (k << 5) + q
    "@!P1 LEA R20, P4, R23, R20, 0x1",   # low word of out + 2 * that, begun before ...
    "@!P1 IMAD.X R28, RZ, RZ, R9, P3",   # ... the high word of (k << 5) + q
    "@!P1 LEA.HI.X R21, R23, R21, R28, 0x1, P4",
    "@!P1 IMAD.MOV.U32 R24, RZ, RZ, R20",
    "@!P1 IMAD.MOV.U32 R25, RZ, RZ, R21",
    "@!P1 STG.E.U16 desc[UR4][R24.64], R10",
    "EXIT",
]
#: out, q, k, in
_GUARDED_PARAMS = (("param_0", "b64", 0), ("param_1", "b64", 8), ("param_2", "b32", 16),
                   ("param_3", "b64", 24))


def _guarded_buffer(q: int, k: int, src: int) -> bytes:
    return struct.pack("<QQIIQ", BASE, q, k, 0, src)


def _guarded_store(q: int, k: int) -> int:
    """Thread 0's store address, word by word as the machine computes it."""
    low = ((k << 5) & 0xFFFFFFFF) + (q & 0xFFFFFFFF)
    r23, carry3 = low & 0xFFFFFFFF, low >> 32
    r28 = ((q >> 32) + carry3) & 0xFFFFFFFF
    low = (r23 << 1 & 0xFFFFFFFF) + (BASE & 0xFFFFFFFF)
    r20, carry4 = low & 0xFFFFFFFF, low >> 32
    r21 = ((BASE >> 32) + ((r28 << 32 | r23) << 1 >> 32) + carry4) & 0xFFFFFFFF
    return r21 << 32 | r20


def test_carry_chains_under_one_guard_keep_the_store_on_its_base():
    summary = _kernel(_GUARDED_CHAINS, params=_GUARDED_PARAMS)
    # Before: the first chain's completion counted as a rewrite of its low word, so the
    # second chain's high half (LEA.HI.X) was opaque and the store's address unknown.
    assert summary.kernel_class == "conditional", summary.reasons
    assert not any("unknown" in r for r in summary.reasons), summary.reasons
    (term,) = _write_terms(summary)
    assert "param_0" in term and "param_1" in term and "param_2" in term, term


@pytest.mark.parametrize("q, k", [(0x100, 3), ((5 << 32) + 0xFFFFFFF0, 1), (0x40, 0x8000001)])
def test_guarded_chains_never_miss_the_stored_address(q, k):
    summary = _kernel(_GUARDED_CHAINS, params=_GUARDED_PARAMS)
    stored = _guarded_store(q, k)
    # k > 0 = tid: the guarded store happens, and reads what it then overwrites.
    verdict = evaluate(summary.launch_check, _guarded_buffer(q, k, stored), (1, 1, 1),
                       (1, 1, 1)).verdict
    assert verdict != "idempotent", (hex(q), hex(k), hex(stored))
    apart = evaluate(summary.launch_check, _guarded_buffer(q, k, stored + 0x10000), (1, 1, 1),
                     (1, 1, 1)).verdict
    assert apart == "idempotent", (hex(q), hex(k))


#: ``p + 4*s`` for a 64-bit ``s`` whose low word the two halves of the sum take from two
#: copies (libtorch's triu_tril_kernel<float, long, ...>).
_COPIED_LOW_WORD = [
    "LDC.64 R2, c[0x0][0x210]",
    "LDC.64 R12, c[0x0][0x220]",
    "LDG.E R10, desc[UR6][R12.64]",
    "ULDC.64 UR4, c[0x0][0x218]",
    "MOV R4, UR4",
    "IMAD.U32 R7, RZ, RZ, UR5",
    "MOV R8, UR4",
    "LEA R2, P0, R4, R2, 0x2",
    "LEA.HI.X R3, R8, R3, R7, 0x2, P0",
    "STG.E desc[UR6][R2.64], R10",
    "EXIT",
]
#: ``p + sext(n)`` with the high half taken from a copy of ``n`` (triu_tril_kernel<unsigned
#: char, int, ...>).
_COPIED_SIGNED_INDEX = [
    "LDC.64 R4, c[0x0][0x210]",
    "LDC.64 R12, c[0x0][0x220]",
    "LDG.E.U8 R10, desc[UR6][R12.64]",
    "ULDC UR4, c[0x0][0x218]",
    "IMAD.U32 R11, RZ, RZ, UR4",
    "IADD3 R14, P0, R4, UR4, RZ",
    "LEA.HI.X.SX32 R15, R11, R5, 0x1, P0",
    "STG.E.U8 desc[UR6][R14.64], R10",
    "EXIT",
]
_COPY_PARAMS = (("param_0", "b64", 0), ("param_1", "b64", 8), ("param_2", "b64", 16))


def test_halves_of_a_sum_from_two_copies_of_one_word_are_one_sum():
    summary = _kernel(_COPIED_LOW_WORD, params=_COPY_PARAMS)
    assert summary.kernel_class == "conditional", summary.reasons
    assert _write_terms(summary) == ["(4*param_1 + param_0)"]
    signed = _kernel(_COPIED_SIGNED_INDEX, params=(("param_0", "b64", 0),
                                                   ("param_1", "s32", 8),
                                                   ("param_2", "b64", 16)))
    assert signed.kernel_class == "conditional", signed.reasons
    assert not any("unknown" in r for r in signed.reasons), signed.reasons


def _copy_store(lines, s: int) -> int:
    """Thread 0's store address in the variants below, word by word."""
    s_lo, s_hi = _words(s)
    p_lo, p_hi = _words(BASE)
    copy = s_lo
    if any(line.startswith("IADD3 R8, R8, 0x1") or line.startswith("IADD3 R11, R11, 0x1")
           for line in lines):
        copy = (s_lo + 1) & 0xFFFFFFFF
    if lines[-3].startswith("LEA.HI.X R3"):  # p + 4*s, the high half from the copy
        total = (s_lo << 2 & 0xFFFFFFFF) + p_lo
        high = (p_hi + ((s_hi << 32 | copy) << 2 >> 32) + (total >> 32)) & 0xFFFFFFFF
        return high << 32 | total & 0xFFFFFFFF
    total = s_lo + p_lo  # p + sext(n), the sign word from the copy
    sign = 0xFFFFFFFF if copy & 0x80000000 else 0
    high = (p_hi + sign + (total >> 32)) & 0xFFFFFFFF
    return high << 32 | total & 0xFFFFFFFF


@pytest.mark.parametrize("lines, bump", [
    (_COPIED_LOW_WORD, None),
    (_COPIED_LOW_WORD, "IADD3 R8, R8, 0x1, RZ"),      # the copy no longer the word
    (_COPIED_SIGNED_INDEX, None),
    (_COPIED_SIGNED_INDEX, "IADD3 R11, R11, 0x1, RZ"),
])
def test_sums_from_copies_never_miss_the_stored_address(lines, bump):
    lines = list(lines)
    if bump is not None:
        lines.insert(len(lines) - 3, bump)
    for s in (0x10, 0xFFFFFFFF, (3 << 32) + 0x7FFFFFFF, 0x80000000):
        summary = _kernel(lines, params=_COPY_PARAMS)
        stored = _copy_store(lines, s)
        buffer = struct.pack("<QQQ", BASE, s, stored)
        verdict = evaluate(summary.launch_check, buffer, (1, 1, 1), (1, 1, 1)).verdict
        assert verdict != "idempotent", (bump, hex(s), summary.kernel_class,
                                         _write_terms(summary))


# The pointer is built under P5; P5 is then overwritten, and the store is guarded by P6,
# which ptxas recomputes with the same LOP3 (CUB's radix sort scatter does this).
_PREDICATE_RECOMPUTED = [
    "S2R R0, SR_TID.X",
    "LDC R141, c[0x0][0x218]",
    "LOP3.LUT P5, RZ, R141, 0x10, RZ, 0xc0, !PT",
    "@P5 LDC.64 R2, c[0x0][0x210]",
    "@P5 IMAD.WIDE R2, R0, 0x4, R2",
    "ISETP.GE.AND P5, PT, R0, 0x20, PT",
    "@!P5 IADD3 R4, R0, 0x1, RZ",
    "LOP3.LUT P6, RZ, R141, 0x10, RZ, 0xc0, !PT",
    "@P6 STG.E desc[UR4][R2.64], R0",
    "EXIT",
]


def test_a_guard_recomputed_into_another_predicate_keeps_what_it_guarded():
    assert _write_terms(_kernel(_PREDICATE_RECOMPUTED)) == ["(4*%tid.x + param_0)"]


@pytest.mark.parametrize("change", [
    (7, "LOP3.LUT P6, RZ, R141, 0x20, RZ, 0xc0, !PT"),   # another bit
    (6, "IADD3 R141, R141, 0x1, RZ"),                     # the tested word changed
    (6, "@!P5 IADD3 R141, R141, 0x1, RZ"),                # ... on some paths
    (4, "@P5 IMAD.WIDE R141, R0, 0x4, R2"),               # written under that guard
], ids=["other-bit", "word-written", "word-written-guarded", "guarded-write-of-the-word"])
def test_a_guard_computed_from_other_values_does_not(change):
    lines = list(_PREDICATE_RECOMPUTED)
    lines[change[0]] = change[1]
    [address] = _write_terms(_kernel(lines))
    assert address != "(4*%tid.x + param_0)"


def test_the_carry_out_of_a_completed_chain_is_not_the_older_predicate():
    # IADD3.X writes P1 (the carry out of the high word) after P1 held param_1 == 0: the
    # store under !P1 does not depend on param_1 any more.
    summary = _kernel([
        "S2R R0, SR_TID.X",
        "LDC.64 R2, c[0x0][0x210]",
        "LDC R7, c[0x0][0x218]",
        "LDG.E R6, desc[UR4][R2.64]",
        "ISETP.EQ.AND P1, PT, R7, RZ, PT",
        "@P1 LDG.E R8, desc[UR4][R2.64+0x80]",   # P1 is needed before the chain too
        "IADD3 R4, P0, R2, 0x10, RZ",
        "IADD3.X R5, P1, R3, RZ, RZ, P0, !PT",
        "@!P1 STG.E desc[UR4][R2.64], R6",
        "EXIT",
    ])
    # At a launch with param_1 == 0 the store still runs (had P1 kept its older value,
    # the launch check would call that launch idempotent).
    verdict = evaluate(summary.launch_check, struct.pack("<QI", 0x7F0000000000, 0),
                       (1, 1, 1), (32, 1, 1))
    assert verdict.verdict == "not_idempotent"
