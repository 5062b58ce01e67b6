"""Memory effects of tensor-core, asynchronous-copy and tensor-map instructions: the
analysis sees the global bytes they read and write, and takes private (shared, tensor)
memory for what it is (kernelcheck.analysis.effects)."""

from __future__ import annotations

import pytest

from kernelcheck.analysis.effects import OPCODE_EFFECTS, effect_of
from kernelcheck.ir.nodes import Instruction
from kernelcheck.ptx.opcodes import KNOWN_OPCODES
from tests.analysis.test_rules import IN, kernel, verdict

SMEM = ".shared .align 16 .b8 smem[4096];"
# %rd6 = in + 16*i, %rd7 = out + 16*i, %rd10 = smem + 16*tid
ADDR = """
 mul.wide.s32 %rd5, %r5, 16; add.s64 %rd6, %rd4, %rd5; add.s64 %rd7, %rd3, %rd5;
 mov.u64 %rd9, smem; mul.wide.u32 %rd8, %r2, 16; add.s64 %rd10, %rd9, %rd8;
"""


def test_every_isa_opcode_has_a_memory_effect():
    assert set(KNOWN_OPCODES) <= set(OPCODE_EFFECTS)
    assert effect_of(Instruction("frobnicate")) is None


def test_cp_async_read_then_store_to_the_same_buffer_is_a_clobber():
    s = kernel(ADDR + """
 cp.async.ca.shared.global [%rd10], [%rd6], 16;
 cp.async.wait_all; bar.sync 0;
 ld.shared.v4.u32 {%r6, %r7, %r8, %r9}, [%rd10]; add.s32 %r6, %r6, 1;
 st.global.v4.u32 [%rd6], {%r6, %r7, %r8, %r9};""", decls=SMEM)
    assert s.kernel_class == "never", s.reasons
    assert any("read" in r and "written" in r for r in s.reasons)


def test_cp_async_copy_to_another_buffer_is_conditional_on_overlap():
    s = kernel(ADDR + """
 cp.async.cg.shared.global [%rd10], [%rd6], 16;
 cp.async.commit_group; cp.async.wait_group 0; bar.sync 0;
 ld.shared.v4.u32 {%r6, %r7, %r8, %r9}, [%rd10];
 st.global.v4.u32 [%rd7], {%r6, %r7, %r8, %r9};""", decls=SMEM)
    assert s.kernel_class == "conditional", s.reasons
    reads = [a for a in s.accesses if a.kind == "read"]
    assert reads and reads[0].width == 16
    assert verdict(s) == "idempotent"
    assert verdict(s, out=IN, inp=IN) != "idempotent"


def test_a_bulk_store_from_shared_is_a_global_write_of_its_size():
    s = kernel(ADDR + """
 ld.global.v4.u32 {%r6, %r7, %r8, %r9}, [%rd6];
 st.shared.v4.u32 [%rd10], {%r6, %r7, %r8, %r9};
 cp.async.bulk.global.shared::cta.bulk_group [%rd7], [%rd10], 16;
 cp.async.bulk.commit_group; cp.async.bulk.wait_group 0;""", decls=SMEM)
    assert s.kernel_class == "conditional", s.reasons
    writes = [a for a in s.accesses if a.kind == "write"]
    assert len(writes) == 1 and writes[0].width == 16
    assert verdict(s) == "idempotent" and verdict(s, out=IN, inp=IN) != "idempotent"


def test_a_tensor_map_load_is_a_read_of_unknown_bytes():
    load = ("cp.async.bulk.tensor.1d.shared::cluster.global.mbarrier::complete_tx::bytes "
            "[%rd10], [%rd2, {%r5}], [%rd9];")
    alone = kernel(ADDR + load, decls=SMEM)
    assert alone.kernel_class == "always", alone.reasons
    with_write = kernel(ADDR + load + "\n st.global.u32 [%rd7], %r5;", decls=SMEM)
    assert with_write.kernel_class == "not_proven"
    assert any("tensor read" in r for r in with_write.reasons)


@pytest.mark.parametrize("body", [
    # ldmatrix and stmatrix touch shared memory only; mma only registers.
    """ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r6, %r7, %r8, %r9}, [%rd10];
 mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f1, %f2, %f3, %f4},
   {%r6, %r7, %r8, %r9}, {%r6, %r7}, {%f1, %f2, %f3, %f4};
 stmatrix.sync.aligned.m8n8.x4.shared.b16 [%rd10], {%r6, %r7, %r8, %r9};
 st.global.v4.f32 [%rd7], {%f1, %f2, %f3, %f4};""",
    # wgmma reads shared memory through its descriptors.
    """wgmma.fence.sync.aligned;
 wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f1, %f2, %f3, %f4}, %rd9, %rd9,
   1, 1, 1, 0, 0;
 wgmma.commit_group.sync.aligned; wgmma.wait_group.sync.aligned 0;
 st.global.v4.f32 [%rd7], {%f1, %f2, %f3, %f4};""",
    # tcgen05 moves data between registers, shared memory and tensor memory.
    """tcgen05.st.sync.aligned.16x64b.x1.b32 [%r5], {%r5};
 tcgen05.ld.sync.aligned.16x64b.x1.b32 {%r6}, [%r5];
 st.global.u32 [%rd7], %r6;""",
])
def test_private_matrix_memory_is_not_global(body):
    s = kernel(ADDR + body, decls=SMEM)
    assert s.kernel_class == "always", s.reasons
    assert all(a.space != "shared" for a in s.accesses)


def test_tensormap_replace_in_global_memory_is_a_write_of_the_map():
    s = kernel(ADDR + """
 ld.global.u64 %rd11, [%rd6];
 tensormap.replace.tile.global_address.global.b1024.b64 [%rd6], %rd11;""", decls=SMEM)
    # The 128-byte map written overlaps the 8 bytes read at the same address in every
    # instance (the widths differ, so this is not the same-thread clobber rule).
    assert s.kernel_class in ("never", "conditional"), s.reasons
    assert verdict(s) != "idempotent"
    writes = [a for a in s.accesses if a.kind == "write"]
    assert writes[0].width == 128
    shared = kernel(ADDR + """
 ld.global.u64 %rd11, [%rd6];
 tensormap.replace.tile.global_address.shared::cta.b1024.b64 [%rd10], %rd11;""", decls=SMEM)
    assert shared.kernel_class == "always", shared.reasons


def test_a_wmma_load_from_global_is_a_read_of_unknown_bytes():
    s = kernel(ADDR + """
 wmma.load.a.sync.aligned.row.m16n16k16.global.f16 {%r6, %r7, %r8, %r9, %r10, %r11, %r12,
   %r13}, [%rd6], 16;
 st.global.u32 [%rd7], %r6;""", decls=SMEM)
    assert s.kernel_class == "not_proven"
    assert any("matrix read" in r for r in s.reasons)


def test_video_and_half_comparisons_are_pure():
    s = kernel(ADDR + """
 vadd4.u32.u32.u32.sat %r6, %r5, %r5, %r5;
 set.lt.u32.f16x2 %r7, %r6, %r6;
 st.global.u32 [%rd7], %r7;""", decls=SMEM)
    assert s.kernel_class == "always", s.reasons


def test_discard_makes_its_line_undefined_and_a_bulk_prefetch_moves_nothing():
    s = kernel(ADDR + """
 ld.global.u32 %r6, [%rd6];
 discard.global.L2 [%rd6], 128;
 st.global.u32 [%rd7], %r6;""", decls=SMEM)
    assert any(a.kind == "write" and a.width == 128 for a in s.accesses)
    assert verdict(s) != "idempotent"
    p = kernel(ADDR + """
 cp.async.bulk.prefetch.tensor.1d.L2.global [%rd2, {%r5}];
 st.global.u32 [%rd7], %r5;""", decls=SMEM)
    assert p.kernel_class == "always", p.reasons
