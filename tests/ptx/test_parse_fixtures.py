"""Every PTX file of the corpus parses, both engines agree, and printing round-trips."""

from __future__ import annotations

import tomllib

import pytest

from kernelcheck.ir.nodes import Instruction, Label
from kernelcheck.ptx.parser import parse_ptx, parse_ptx_file
from kernelcheck.ptx.printer import print_ptx
from tests.conftest import FIXTURES, fixture_ptx_files

PTX_FILES = fixture_ptx_files()
IDS = [str(p.relative_to(FIXTURES)) for p in PTX_FILES]


def test_corpus_has_every_producer():
    producers = {p.parent.name for p in PTX_FILES}
    assert {"sm_80", "sm_90", "O0G", "nvrtc", "nvrtc12", "triton", "numba"} <= producers


@pytest.mark.parametrize("path", PTX_FILES, ids=IDS)
def test_fixture_parses_and_round_trips(path):
    module = parse_ptx_file(path)
    assert module.version is not None and module.target
    assert module.kernels, "every fixture file defines at least one kernel"
    for function in module.functions:
        if function.body is None:
            continue
        # Instruction indexes are positions in the function, as graphs rely on.
        assert [i.index for i in function.instructions] == list(
            range(len(function.instructions))
        )
        # Blocks cover every instruction exactly once, in order.
        flat = [i for block in function.blocks for i in block.instructions]
        assert flat == list(function.instructions)
    printed = print_ptx(module)
    assert parse_ptx(printed) == module
    assert print_ptx(parse_ptx(printed)) == printed


@pytest.mark.parametrize("path", PTX_FILES, ids=IDS)
def test_table_driver_agrees_with_lark(path):
    text = path.read_text()
    assert parse_ptx(text, engine="fast") == parse_ptx(text, engine="lark")


def test_every_expected_kernel_is_an_entry():
    expected = tomllib.loads((FIXTURES / "expected.toml").read_text())["kernels"]
    entries = set()
    for path in FIXTURES.glob("ptx/sm_90/*.ptx"):
        entries |= {k.name for k in parse_ptx_file(path).kernels}
    cuda_kernels = {name for name, k in expected.items() if k["source"].endswith(".cu")}
    assert cuda_kernels <= entries


def test_instruction_fields_of_a_known_line():
    module = parse_ptx_file(FIXTURES / "ptx/sm_90/elementwise.ptx")
    kernel = module.get_function("vec_add")
    loads = [i for i in kernel.instructions if i.opcode == "ld" and "global" in i.modifiers]
    assert len(loads) == 2
    load = loads[0]
    assert load.modifiers == ("global", "f32")
    assert load.loc is not None and module.files[load.loc.file].endswith("elementwise.cu")
    assert load.pos is not None and load.pos.line > 0
    branch = next(i for i in kernel.instructions if i.opcode == "bra")
    assert branch.guard is not None
    labels = {s.name for s in kernel.body if type(s) is Label}
    assert branch.operands[0].name in labels


def test_params_have_abi_offsets():
    module = parse_ptx_file(FIXTURES / "ptx/sm_90/elementwise.ptx")
    saxpy = module.get_function("saxpy")
    assert [(p.type, p.offset, p.size) for p in saxpy.params] == [
        ("u64", 0, 8), ("u64", 8, 8), ("u64", 16, 8), ("f32", 24, 4), ("u32", 28, 4)
    ]


def test_struct_parameter_is_an_aligned_byte_array():
    module = parse_ptx_file(FIXTURES / "ptx/sm_90/structs_calls.ptx")
    aggregates = [p for f in module.kernels for p in f.params if p.array]
    assert aggregates, "structs_calls.cu passes structs by value"
    for param in aggregates:
        assert param.type == "b8" and param.align and param.offset % param.align == 0


def test_unknown_opcode_parses_generically():
    module = parse_ptx(
        ".version 9.0\n.target sm_90\n.address_size 64\n"
        ".visible .entry k(.param .u64 p)\n{\n"
        "  .reg .b64 %rd<3>;\n"
        "  frobnicate.sync.aligned.b32 %rd1, [%rd2+8], 7;\n"
        "  ret;\n}\n"
    )
    instr = module.kernels[0].instructions[0]
    assert type(instr) is Instruction
    assert (instr.opcode, instr.modifiers, instr.known) == (
        "frobnicate", ("sync", "aligned", "b32"), False
    )
    assert len(instr.operands) == 3


def test_register_ranges_expand():
    module = parse_ptx_file(FIXTURES / "ptx/sm_90/elementwise.ptx")
    types = module.get_function("vec_add").register_types
    assert types["%rd1"] == "b64" and types["%p1"] == "pred" and types["%f1"] == "f32"


@pytest.mark.parametrize("declaration, names", [
    (".reg .b32 %r<3>;", ["%r0", "%r1", "%r2"]),
    (".reg .b32 %r <2 >;", ["%r0", "%r1"]),
    (".reg .b32 %r<0x2>;", ["%r0", "%r1"]),
    (".reg .b32 %r</* two */2>;", ["%r0", "%r1"]),
    (".reg .b32 %r\n<2>;", ["%r0", "%r1"]),
    (".reg .pred p<2>, %x;", ["p0", "p1", "%x"]),
])
def test_register_range_spellings(declaration, names):
    """`%r<N>` is one token in nvcc's spelling; any other spelling the ISA allows still
    declares the same registers, on both engines."""
    text = (".version 9.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n"
            f"{declaration}\nret;\n}}\n")
    fast, reference = parse_ptx(text), parse_ptx(text, engine="lark")
    assert fast == reference
    assert list(fast.kernels[0].register_types) == names


def test_predicate_pair_with_a_sink():
    from kernelcheck.ir.nodes import PredicatePair, Sink

    module = parse_ptx(
        ".version 9.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n"
        "  .reg .pred %p<3>;\n  .reg .b32 %r<3>;\n"
        "  setp.lt.s32 %p1|_, %r1, %r2;\n  setp.lt.s32 %p1|%p2, %r1, %r2;\n  ret;\n}\n"
    )
    first, second = module.kernels[0].instructions[:2]
    assert first.operands[0] == PredicatePair(first.operands[0].first, Sink())
    assert type(second.operands[0]) is PredicatePair
    assert parse_ptx(print_ptx(module)) == module


def test_pointee_alignment_is_not_the_parameter_alignment():
    # Triton writes `.param .u64 .ptr .global .align 1 p`: the `.align 1` is the alignment
    # of the memory pointed to, so the u64 parameters still sit at 8-byte offsets.
    path = next((FIXTURES / "ptx/triton").glob("add_kernel_sm80.ptx"))
    kernel = parse_ptx_file(path).kernels[0]
    pointer = kernel.params[0]
    assert pointer.align is None and ".align 1" in pointer.attributes
    assert all(p.offset % p.alignment == 0 for p in kernel.params)
    assert [p.offset for p in kernel.params[:3]] == [0, 8, 16]
