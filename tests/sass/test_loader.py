"""SASS of the fixture cubins in the IR: every kernel parses, parameters match PTX, memory
accesses agree with PTX (or differ for a named compiler transformation), graphs work."""

from __future__ import annotations

from collections import Counter

import pytest

from kernelcheck.ir.cfg import control_flow_graph
from kernelcheck.ir.dataflow import def_use_graph
from kernelcheck.ir.loops import natural_loops
from kernelcheck.ir.nodes import ConstantRef
from kernelcheck.ir.operands import access_kind, memory_space
from kernelcheck.ptx.parser import parse_ptx_file
from kernelcheck.sass.lift_memory import REGISTER_ONLY
from kernelcheck.sass.params import param_at, param_references

from .conftest import CUBINS, FIXTURES, needs_nvdisasm

pytestmark = needs_nvdisasm


def _global_counts(function) -> tuple[int, int, int]:
    counts = Counter()
    for instr in function.instructions:
        if memory_space(instr) in ("global", "generic"):
            counts[access_kind(instr)] += 1
    return counts["read"], counts["write"], counts["atomic"]


def _ptx_of(path):
    return parse_ptx_file(FIXTURES / "ptx" / path.parent.name / f"{path.stem}.ptx")


def test_every_fixture_cubin_parses_into_ir(sass_images):
    assert len(CUBINS) == 38  # 19 sources, sm_80 and sm_90
    for path, image in sass_images.items():
        assert image.failures == (), path
        assert image.module.arch == path.parent.name
        names = {k.name for k in image.module.kernels}
        assert names == {k.name for k in _ptx_of(path).kernels}, path
        for kernel in image.module.kernels:
            offsets = [i.pos.line for i in kernel.instructions]
            assert offsets == list(range(0, 16 * len(offsets), 16))
            # Opcodes the operand tables do not describe are allowed only where the lift
            # models them itself (the MMA forms: register-only, every fragment register).
            assert all(i.known or i.opcode in REGISTER_ONLY
                       for i in kernel.instructions), kernel.name


def test_parameter_offsets_match_the_ptx_layout(sass_images):
    checked = 0
    for path, image in sass_images.items():
        ptx = _ptx_of(path)
        for kernel in image.module.kernels:
            expected = [(p.offset, p.size) for p in ptx.get_function(kernel.name).params]
            assert [(p.offset, p.size) for p in kernel.params] == expected, kernel.name
            checked += 1
    assert checked >= 2 * 60


def test_parameter_reads_map_to_parameters_by_the_param_cbank(sass_images):
    image = sass_images[FIXTURES / "cubin" / "sm_90" / "gridstride.cubin"]
    kernel = image.module.get_function("scale_gridstride")
    # sm_90 parameters start at c[0x0][0x210]; EIATTR_PARAM_CBANK says so, not a constant.
    assert param_at(kernel, ConstantRef(0, 0x210)).param.name == "param_0"
    assert param_at(kernel, ConstantRef(0, 0x20c)) is None
    read = {r.param for r in param_references(kernel)}
    assert read == {p.name for p in kernel.params}
    sm80 = sass_images[FIXTURES / "cubin" / "sm_80" / "gridstride.cubin"]
    assert param_at(sm80.module.get_function("scale_gridstride"),
                    ConstantRef(0, 0x160)).param.name == "param_0"


# Kernels whose global loads/stores/atomics differ between PTX and SASS, and why.
# Every other fixture kernel must agree exactly.
EXPLAINED = {
    "spmv_csr": ("unrolling: ptxas unrolls the row loop by 4 (plus a remainder loop), so "
                 "SASS has more load instructions and the same stores",
                 lambda ptx, sass: sass[0] > ptx[0] and sass[1:] == ptx[1:]),
    "noinline_accumulate": ("call: the __noinline__ callee is a .func in PTX but a "
                            "subroutine inside the kernel's .text in SASS; PTX kernel plus "
                            "callee equals SASS", None),
    "noinline_store_scaled": ("call: as noinline_accumulate", None),
    "sine_f64": ("call: libdevice's slow-path argument reduction is a .func in PTX, its "
                 "table loads in the callee", None),
    "gemm_batched_pointers": ("unrolling: ptxas unrolls the inner product by 4 after a "
                              "remainder loop, so SASS has more loads and the same stores",
                              lambda ptx, sass: sass[0] > ptx[0] and sass[1:] == ptx[1:]),
    "asm_row_sum_loop": ("unrolling: ptxas unrolls the inline-asm row loop by 4 after a "
                         "remainder loop, so SASS has more loads and the same stores",
                         lambda ptx, sass: sass[0] > ptx[0] and sass[1:] == ptx[1:]),
}


def test_ptx_and_sass_agree_on_global_accesses(sass_images):
    for path, image in sass_images.items():
        ptx = _ptx_of(path)
        for kernel in image.module.kernels:
            ptx_kernel = ptx.get_function(kernel.name)
            ptx_counts, sass_counts = _global_counts(ptx_kernel), _global_counts(kernel)
            if kernel.name not in EXPLAINED:
                assert ptx_counts == sass_counts, (path, kernel.name)
                continue
            reason, check = EXPLAINED[kernel.name]
            if check is None:  # the callee's accesses are added to the PTX side
                callees = {o.name for i in ptx_kernel.instructions if i.opcode == "call"
                           for o in i.operands if type(o).__name__ == "Symbol"}
                total = list(ptx_counts)
                for callee in callees:
                    for k, n in enumerate(_global_counts(ptx.get_function(callee))):
                        total[k] += n
                assert tuple(total) == sass_counts, (kernel.name, reason)
            else:
                assert check(ptx_counts, sass_counts), (kernel.name, reason)


@pytest.mark.parametrize(("arch", "kernel", "loops"), [
    ("sm_90", "scale_gridstride", 1),
    ("sm_80", "scale_gridstride", 1),
    ("sm_90", "offset_size_t", 0),
])
def test_cfg_and_loops_on_sass(sass_images, arch, kernel, loops):
    function = sass_images[FIXTURES / "cubin" / arch / "gridstride.cubin"].module \
        .get_function(kernel)
    cfg = control_flow_graph(function)
    found = natural_loops(cfg)
    assert len(found) == loops
    if loops:
        # The grid-stride loop holds the load and the store.
        body = {i.opcode for b in found[0].body for i in function.blocks[b].instructions}
        assert {"LDG", "STG"} <= body


def test_def_use_links_a_wide_address_to_both_halves(sass_images):
    function = sass_images[FIXTURES / "cubin" / "sm_90" / "gridstride.cubin"].module \
        .get_function("offset_size_t")
    graph = def_use_graph(function)
    store = next(i for i in function.instructions if i.opcode == "STG")
    registers = {data["register"] for _, _, data in graph.in_edges(store.index, data=True)}
    base = store.operands[0].base.name
    number = int(base[1:])
    assert {base, f"R{number + 1}", "UR4", "UR5"} <= registers
