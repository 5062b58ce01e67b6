"""Vector registers (PTX ISA §5.4.2, §6.4.3): lowered to scalar elements in the front end.

`.reg .v4 .u16 v` declares `v.x v.y v.z v.w`; a whole-vector operand is the VectorOperand of
those scalars; `.r .g .b .a` name the same elements. The emulator runs the result with no
notion of vector registers. The kernel below was accepted by ptxas (CUDA 13.0); its SASS
stores {1, 7, 3, 4}, then 7 and 4.
"""

from __future__ import annotations

import numpy as np
import pytest

from kernelcheck.analysis.summary import analyze_kernel
from kernelcheck.emu import Emulator
from kernelcheck.errors import PtxSyntaxError, UnsupportedFeature
from kernelcheck.ir.nodes import Register, VectorOperand
from kernelcheck.ptx.parser import parse_ptx
from kernelcheck.ptx.printer import print_ptx

HEADER = ".version 8.8\n.target sm_80\n.address_size 64\n"

VECTORS = HEADER + """
.visible .entry vec(.param .u64 out)
{
  .reg .v4 .u16 v;
  .reg .v2 .b32 %w;
  .reg .b64 rd;
  .reg .b16 h;
  .reg .pred p, q;
  ld.param.u64 rd, [out];
  mov.v4.u16 v, {1, 2, 3, 4};
  mov.u16 v.y, 7;
  st.global.v4.u16 [rd], v;
  mov.u16 h, v.g;
  st.global.u16 [rd+8], h;
  ld.global.v2.b32 %w, [rd];
  st.global.v2.b32 [rd+16], %w;
  setp.eq.u16 p|q, v.r, 1;
  @!q st.global.u16 [rd+10], v.a;
  ret;
}
"""


def _elements(name, letters="xyzw"):
    return VectorOperand(tuple(Register(f"{name}.{c}") for c in letters))


def test_vector_register_declares_scalar_elements():
    kernel = parse_ptx(VECTORS).kernels[0]
    types = kernel.register_types
    assert [n for n in types if n.startswith("v.")] == ["v.x", "v.y", "v.z", "v.w"]
    assert types["%w.y"] == "b32" and "v" not in types


def test_whole_vector_operands_are_vectors_of_the_elements():
    kernel = parse_ptx(VECTORS).kernels[0]
    _, mov, mov_y, store, mov_g, _, load, store2, setp, store3, _ = kernel.instructions
    assert mov.operands[0] == _elements("v")
    assert mov_y.operands[0] == Register("v.y")
    assert store.operands[1] == _elements("v")
    assert mov_g.operands[1] == Register("v.y")
    assert load.operands[0] == _elements("%w", "xy") == store2.operands[1]
    assert setp.operands[1] == Register("v.x") and store3.operands[1] == Register("v.w")


def test_the_emulator_runs_vector_registers():
    module = parse_ptx(VECTORS)
    emu = Emulator()
    out = emu.alloc(32)
    emu.launch(emu.load_module(module), "vec", grid=(1,), block=(2,), params=[out])
    data = emu.copy_dtoh(out, 32)
    assert data[:8].view(np.uint16).tolist() == [1, 7, 3, 4]
    assert data[8:12].view(np.uint16).tolist() == [7, 4]
    assert data[16:24].view(np.uint16).tolist() == [1, 7, 3, 4]


def test_vector_registers_analyse_and_round_trip():
    module = parse_ptx(VECTORS)
    assert analyze_kernel(module, module.kernels[0]).kernel_class in ("never", "conditional")
    assert parse_ptx(print_ptx(module)) == module


def test_shadowed_vector_register_elements_follow_the_rename():
    module = parse_ptx(HEADER + ".visible .entry k() { .reg .v2 .b32 v; mov.b32 v.x, 1; "
                                "{ .reg .v2 .b32 v; mov.v2.b32 v, {2, 3}; } ret; }")
    kernel = module.kernels[0]
    assert kernel.instructions[1].operands[0] == _elements("v$1", "xy")
    assert kernel.register_types["v$1.y"] == "b32"


@pytest.mark.parametrize("body, message", [
    (".reg .v2 .b32 v; mov.b32 v.z, 1;", "no element .z"),
    (".reg .b32 s; mov.b32 s.x, 1;", "s is not a vector register"),
    (".reg .v4 .b32 v; ld.global.b32 v.x, [v];", "vector register v used as an address"),
    (".reg .v8 .b32 v;", "vector registers are .v2 or .v4"),
])
def test_misused_vector_registers_are_errors(body, message):
    with pytest.raises(PtxSyntaxError, match=message):
        parse_ptx(HEADER + f".visible .entry k() {{ {body} ret; }}")


def test_a_predicate_vector_is_unsupported():
    with pytest.raises(UnsupportedFeature, match="predicate vector register"):
        parse_ptx(HEADER + ".visible .entry k() { .reg .v2 .pred v; ret; }")
