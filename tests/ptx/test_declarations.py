"""Declarations and operand forms of the PTX ISA beyond what nvcc emits by default.

Function headers (§11.1: empty return lists, `.reg` parameters, `%` identifiers as names),
arrays (§5.4.3-5.4.4, §6.4.2), texture/sampler initializers (§5.3), kernel parameter
addresses and `.address_size 32` (§11.1.3). Every accepted kernel here was accepted by
ptxas (CUDA 13.0); every rejected one was rejected by it too.
"""

from __future__ import annotations

import numpy as np
import pytest

from kernelcheck.analysis.summary import analyze_kernel
from kernelcheck.emu import Emulator
from kernelcheck.errors import PtxSyntaxError, UnsupportedFeature
from kernelcheck.ir.nodes import Address, Expression, ParenList, Symbol
from kernelcheck.ptx.parser import parse_ptx
from kernelcheck.ptx.printer import print_ptx

HEADER = ".version 8.8\n.target sm_80\n.address_size 64\n"

# `.reg` parameters and return value, `%` identifiers as the function's and the registers'
# names (the form of hand-written ISA tests).
REG_PARAMS = HEADER + """
.func (.reg .b32 %2) %1(.reg .b32 %3, .reg .b64 p)
{
  add.u32 %2, %3, 1;
  st.global.u32 [p], %2;
  ret;
}

.visible .entry regparam(.param .u64 out)
{
  .reg .b32 %r<3>;
  .reg .b64 %rd<3>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, 5;
  call.uni (%r2), %1, (%r1, %rd1);
  st.global.u32 [%rd1+4], %r2;
  ret;
}
"""


def test_empty_return_list_and_empty_argument_list():
    module = parse_ptx(HEADER + ".func () f () { ret; }\n.visible .entry k() "
                                "{ call.uni f, (); call.uni (), f, (); ret; }")
    f = module.get_function("f")
    assert f.return_params == () and f.params == () and f.body is not None
    first, second, _ = module.kernels[0].instructions
    assert second.operands[0] == ParenList(())
    emu = Emulator()
    emu.launch(emu.load_module(module), "k", grid=(1,), block=(1,), params=[])
    assert parse_ptx(print_ptx(module)) == module


def test_reg_parameters_and_percent_function_names():
    module = parse_ptx(REG_PARAMS)
    callee = module.get_function("%1")
    assert [(p.name, p.space) for p in callee.return_params + callee.params] == [
        ("%2", "reg"), ("%3", "reg"), ("p", "reg")]
    assert callee.register_types == {"%2": "b32", "%3": "b32", "p": "b64"}
    call = module.kernels[0].instructions[2]
    assert call.operands[1] == Symbol("%1")
    assert parse_ptx(print_ptx(module)) == module


def test_reg_parameters_run_on_the_emulator():
    module = parse_ptx(REG_PARAMS)
    emu = Emulator()
    out = emu.alloc(8)
    emu.launch(emu.load_module(module), "regparam", grid=(1,), block=(4,), params=[out])
    assert emu.copy_dtoh(out, 8).view(np.uint32).tolist() == [6, 6]


def test_reg_parameters_are_followed_by_the_analysis():
    module = parse_ptx(REG_PARAMS)
    summary = analyze_kernel(module, module.kernels[0])
    assert summary.kernel_class == "always"


def test_a_reg_return_value_in_an_address_is_never_proven_idempotent():
    # The callee returns its argument: the kernel writes the element it read. The value of
    # a .reg return is not followed through the call, so the write's address is unknown.
    text = HEADER + """
.func (.reg .b64 r) same(.reg .b64 x) { mov.b64 r, x; ret; }
.visible .entry k(.param .u64 a)
{
  .reg .b32 %r<3>; .reg .b64 %rd<6>;
  ld.param.u64 %rd1, [a]; cvta.to.global.u64 %rd2, %rd1;
  mov.u32 %r1, %tid.x; mul.wide.u32 %rd3, %r1, 4; add.s64 %rd4, %rd2, %rd3;
  ld.global.u32 %r2, [%rd4];
  add.u32 %r2, %r2, 1;
  call.uni (%rd5), same, (%rd4);
  st.global.u32 [%rd5], %r2;
  ret;
}
"""
    module = parse_ptx(text)
    summary = analyze_kernel(module, module.kernels[0])
    assert summary.kernel_class not in ("always",)
    emu = Emulator()
    a = emu.alloc(4 * 32)
    result = emu.launch(emu.load_module(module), "k", grid=(1,), block=(32,), params=[a],
                        trace=True)
    assert result.trace.verdict == "not_idempotent"


@pytest.mark.parametrize("decl", [".global .u32 g[];", ".shared .u32 g[];",
                                  ".const .b8 g[];"])
def test_an_array_without_size_or_extern_is_an_error(decl):
    with pytest.raises(PtxSyntaxError) as info:
        parse_ptx(HEADER + decl + "\n.visible .entry k() { ret; }", filename="a.ptx")
    assert (info.value.line, info.value.column) == (4, decl.index("g[") + 1)
    assert "has no size" in str(info.value)


def test_array_sizes_come_from_the_initializer():
    module = parse_ptx(HEADER + ".global .u32 g[] = {1, 2, 3};\n"
                                ".global .u32 h[][2] = {{1, 2}, {3, 4}, {5, 6}};\n"
                                ".global .u32 flat[][2] = {1, 2, 3, 4, 5};\n"
                                ".extern .shared .align 16 .b8 dyn[];\n"
                                ".visible .entry k() { ret; }")
    g, h, flat, dyn = module.variables
    assert (g.array, h.array, flat.array, dyn.array) == ((3,), (3, 2), (3, 2), (None,))
    assert (g.size, h.size) == (12, 24)


def test_only_the_first_dimension_may_be_open():
    with pytest.raises(PtxSyntaxError, match="only the first dimension"):
        parse_ptx(HEADER + ".global .u32 g[2][] = {1};\n.visible .entry k() { ret; }")


def test_sampler_and_texture_declarations():
    module = parse_ptx(".version 8.8\n.target sm_80, texmode_independent\n.address_size 64\n"
                       ".global .samplerref tsamp1 = { addr_mode_0 = clamp_to_border, "
                       "filter_mode = nearest };\n.global .texref tex1;\n"
                       ".visible .entry k() { ret; }")
    sampler, texture = module.variables
    assert sampler.initializer == (Expression("addr_mode_0=clamp_to_border"),
                                   Expression("filter_mode=nearest"))
    assert texture.type == "texref"


def test_array_elements_with_constant_indexes():
    # ptxas scales the index by the element's scalar size, also for a vector array:
    # vt[3] of `.v2 .u32 vt[4]` is vt + 12 (read from its SASS).
    module = parse_ptx(HEADER + ".global .u16 tbl[8];\n.global .v2 .u32 vt[4];\n"
                                ".visible .entry k() { .reg .b32 %r<2>; .reg .b64 %rd<2>;"
                                " ld.global.u16 %r1, tbl[2]; mov.u64 %rd1, vt[3];"
                                " mov.u64 %rd1, tbl[0]; ret; }")
    load, address, base, _ = module.kernels[0].instructions
    assert load.operands[1] == Address(Symbol("tbl"), 4)
    assert address.operands[1] == Expression("vt+12")
    assert base.operands[1] == Symbol("tbl")
    emu = Emulator()
    program = emu.load_module(module)
    emu.launch(program, "k", grid=(1,), block=(1,), params=[])


def test_an_array_element_with_a_register_index_is_unsupported_at_its_place():
    with pytest.raises(UnsupportedFeature) as info:
        parse_ptx(HEADER + ".global .u16 tbl[8];\n.visible .entry k() {\n"
                           " .reg .b32 %r<2>;\n ld.global.u16 %r1, tbl[%r0];\n ret; }",
                  filename="t.ptx")
    assert str(info.value).startswith("t.ptx:7:21: unsupported: array element tbl[...]")


def test_the_address_of_a_parameter_parses_and_only_a_kernel_parameter_runs():
    module = parse_ptx(HEADER + ".visible .entry k(.param .u64 p) { .reg .b64 %rd<2>;"
                                " mov.u64 %rd1, p; ret; }")
    assert module.kernels[0].instructions[0].operands[1] == Symbol("p")
    Emulator().load_module(module)  # its offset in the parameter buffer (ISA 5.1.6.1)
    module = parse_ptx(HEADER + ".func f(.param .u64 q) { .reg .b64 %rd<2>;"
                                " mov.u64 %rd1, q; ret; }\n"
                                ".visible .entry k() { call f, (0); ret; }")
    with pytest.raises(UnsupportedFeature, match="the address of parameter q"):
        Emulator().load_module(module)


ADDRESS_32 = """.version 8.8
.target sm_80
.address_size 32

.visible .entry k(.param .u32 out, .param .u32 in)
{
  .reg .b32 %r<8>;
  ld.param.u32 %r1, [out];
  ld.param.u32 %r2, [in];
  cvta.to.global.u32 %r3, %r1;
  cvta.to.global.u32 %r4, %r2;
  mov.u32 %r5, %tid.x;
  shl.b32 %r5, %r5, 2;
  add.u32 %r6, %r4, %r5;
  ld.global.u32 %r7, [%r6];
  add.u32 %r6, %r3, %r5;
  st.global.u32 [%r6], %r7;
  ret;
}
"""


def test_address_size_32_runs_with_32_bit_addresses():
    module = parse_ptx(ADDRESS_32)
    assert module.address_size == 32
    with pytest.raises(UnsupportedFeature, match="address_size 32"):
        Emulator().load_module(module)
    emu = Emulator(address_size=32)
    out, src = emu.alloc(32), emu.alloc(32)
    assert out < 2**32 and src < 2**32
    emu.copy_htod(src, np.arange(8, dtype=np.uint32))
    emu.launch(emu.load_module(module), "k", grid=(1,), block=(8,), params=[out, src])
    assert emu.copy_dtoh(out, 32).view(np.uint32).tolist() == list(range(8))


def test_address_size_32_addresses_wrap_at_32_bits_in_the_analysis():
    from kernelcheck.analysis.symbolic import symbolic_kernel

    module = parse_ptx(ADDRESS_32)
    accesses = symbolic_kernel(module, module.kernels[0]).accesses
    assert accesses and all(a.address.bits == 32 for a in accesses)
    assert analyze_kernel(module, module.kernels[0]).kernel_class == "conditional"


def test_address_size_other_than_32_or_64_is_an_error():
    with pytest.raises(PtxSyntaxError) as info:
        parse_ptx(".version 8.8\n.target sm_80\n.address_size 48\n")
    assert (info.value.line, info.value.column) == (3, 15)


def test_a_preprocessor_line_is_an_error_at_its_place():
    with pytest.raises(PtxSyntaxError) as info:
        parse_ptx(HEADER + "#include <x.h>\n.visible .entry k() { ret; }")
    assert (info.value.line, info.value.column) == (4, 1)


def test_calltargets_and_nested_attribute_parentheses():
    # The ISA's examples (§5.4.8 variable attributes, §11.1.6 .calltargets); ptxas accepts
    # them for sm_90.
    module = parse_ptx(
        ".version 8.8\n.target sm_90\n.address_size 64\n"
        ".global .attribute(.managed) .s32 g;\n"
        ".global .attribute(.unified(19,95)) .f32 f;\n"
        ".func (.param .b32 r) foo (.param .b32 a) { ret; }\n"
        ".visible .entry k() { .reg .b64 %rd<2>; .reg .b32 %r<2>;\n"
        "  Ftgt: .calltargets foo;\n  mov.u64 %rd1, foo;\n"
        "  { .param .b32 x; .param .b32 rv; st.param.b32 [x], 1;\n"
        "    call (rv), %rd1, (x), Ftgt; ld.param.b32 %r1, [rv]; }\n  ret; }")
    from kernelcheck.ir.nodes import CallTargets

    assert module.variables[1].attributes == (".attribute(.unified(19,95))",)
    targets = [s for s in module.kernels[0].body if type(s) is CallTargets]
    assert targets == [CallTargets("Ftgt", ("foo",))]
    assert parse_ptx(print_ptx(module)) == module
    summary = analyze_kernel(module, module.kernels[0])
    assert summary.kernel_class == "not_proven" and "indirect call" in summary.reasons[0]


def test_a_register_at_module_scope_is_an_error():
    # ptxas: "Module-scoped variables in .reg state space are not allowed with ABI".
    with pytest.raises(PtxSyntaxError, match="not allowed at module scope") as info:
        parse_ptx(HEADER + ".reg .b32 gr;\n.visible .entry k() { ret; }")
    assert (info.value.line, info.value.column) == (4, 11)
