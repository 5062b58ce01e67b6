"""128-bit registers (PTX ISA 8.3 ``.b128``): ld, st and mov, packing and unpacking with the
first vector element in the low bits, in every state space that takes them; narrower reads
take the low bits; misaligned 16-byte accesses fault; a fault injected into a ``.b128``
register flips its bits."""

from __future__ import annotations

import numpy as np
import pytest

from kernelcheck.emu import BitFlip, Emulator, MemoryFault
from kernelcheck.errors import UnsupportedFeature
from tests.emu.ptx_kernels import HEAD

_REGS = (".reg .b128 %q<4>; .reg .b64 %rd<12>; .reg .b32 %r<8>; .reg .pred %p<2>;")


def _run(body: str, threads: int = 1, src: bytes = b"", out_bytes: int = 64,
         shared: int = 0, flip: BitFlip | None = None) -> bytes:
    smem = f".shared .align 16 .b8 smem[{shared}];" if shared else ""
    ptx = HEAD + f"""{smem}
.visible .entry k(.param .u64 out, .param .u64 src)
{{
  {_REGS}
  ld.param.u64 %rd1, [out];
  ld.param.u64 %rd2, [src];
  mov.u32 %r0, %tid.x;
{body}
  ret;
}}"""
    emu = Emulator()
    out = emu.alloc(out_bytes * threads)
    inp = emu.alloc(max(len(src), 16))
    if src:
        emu.copy_htod(inp, np.frombuffer(src, dtype=np.uint8))
    kw = {"inject": flip} if flip is not None else {}
    emu.launch(emu.load_module(ptx), "k", grid=(1,), block=(threads,), params=[out, inp], **kw)
    return bytes(emu.copy_dtoh(out, out_bytes * threads))


_SRC = bytes(range(0x10, 0x30))


def test_ld_st_b128_copy_16_bytes_per_thread():
    got = _run("mul.wide.u32 %rd3, %r0, 16; add.s64 %rd4, %rd2, %rd3; add.s64 %rd5, %rd1, %rd3;"
               "ld.global.b128 %q1, [%rd4]; st.global.b128 [%rd5], %q1;", threads=2, src=_SRC,
               out_bytes=16)
    assert got == _SRC


def test_mov_b128_packs_and_unpacks_with_the_first_element_low():
    got = _run("ld.global.b128 %q1, [%rd2];"
               "mov.b128 {%rd4, %rd5}, %q1;"          # rd4 = bytes 0..7, rd5 = bytes 8..15
               "mov.b128 %q2, {%rd5, %rd4};"          # swapped halves
               "st.global.b128 [%rd1], %q2;"
               "mov.b128 {%r1, %r2, %r3, %r4}, %q1;"  # four 32-bit parts, r1 lowest
               "st.global.v4.b32 [%rd1+16], {%r4, %r3, %r2, %r1};", src=_SRC, out_bytes=32)
    assert got[:16] == _SRC[8:16] + _SRC[0:8]
    words = [_SRC[i:i + 4] for i in range(0, 16, 4)]
    assert got[16:32] == b"".join(reversed(words))


def test_narrower_reads_take_the_low_bits_and_writes_extend():
    got = _run("ld.global.b128 %q1, [%rd2];"
               "mov.b64 %rd4, %q1; st.global.b64 [%rd1], %rd4;"
               "mov.b64 %rd6, 0xfedcba9876543210; mov.b128 %q2, {%rd6, %rd6};"
               "ld.global.b64 %q2, [%rd2+16]; st.global.b128 [%rd1+16], %q2;",
               src=_SRC, out_bytes=32)
    assert got[:8] == _SRC[:8]
    assert got[16:32] == _SRC[16:24] + bytes(8)  # a .b64 load zero-extends into .b128


@pytest.mark.parametrize("space", ["shared", "local"])
def test_b128_in_shared_and_local_memory(space):
    decl = ".local .align 16 .b8 buf[32];" if space == "local" else ""
    base = "smem" if space == "shared" else "buf"
    got = _run(decl + f"ld.global.b128 %q1, [%rd2]; mov.u64 %rd7, {base};"
               f"st.{space}.b128 [%rd7+16], %q1; ld.{space}.b128 %q2, [%rd7+16];"
               "st.global.b128 [%rd1], %q2;", src=_SRC, out_bytes=16,
               shared=32 if space == "shared" else 0)
    assert got == _SRC[:16]


def test_misaligned_b128_access_faults():
    with pytest.raises(MemoryFault, match="misaligned"):
        _run("ld.global.b128 %q1, [%rd2+8];", src=_SRC)


def test_b128_vectors_and_arithmetic_are_unsupported_not_wrong():
    for body in ("ld.global.v2.b128 {%q1, %q2}, [%rd2];", "add.b128 %q1, %q2, %q3;",
                 "mov.b128 {%rd4, %rd5, %rd6}, %q1;"):
        with pytest.raises(UnsupportedFeature):
            _run(body, src=_SRC)


def test_a_fault_injected_into_a_b128_register_flips_its_bits():
    body = ("ld.global.b128 %q1, [%rd2]; st.global.b128 [%rd1], %q1;")
    clean = _run(body, src=_SRC, out_bytes=16)
    # instruction 3 is the ld.global.b128 (after two ld.param and a mov)
    flip = BitFlip(instruction=3, ctaid=(0, 0, 0), tid=(0, 0, 0), bits=1 << 127)
    flipped = _run(body, src=_SRC, out_bytes=16, flip=flip)
    assert clean == _SRC[:16]
    assert flipped == _SRC[:15] + bytes([_SRC[15] ^ 0x80])
