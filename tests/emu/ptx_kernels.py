"""Helpers of the instruction-semantics tests: run a PTX body per thread, read a result."""

from __future__ import annotations

import numpy as np

from kernelcheck.emu import Emulator

HEAD = ".version 8.0\n.target sm_90\n.address_size 64\n"
REGS = (".reg .pred %p<8>; .reg .b32 %r<40>; .reg .b64 %rd<16>; .reg .f32 %f<16>;"
        " .reg .f64 %fd<8>; .reg .b16 %rs<8>; .reg .b8 %rc<4>;")


def run_kernel(body: str, threads: int = 32, inputs: dict | None = None,
               out_words: int = 1, shared: int = 0) -> np.ndarray:
    """Run ``body`` in a kernel of one block of ``threads`` threads and return the
    ``out_words`` 32-bit words each thread stored at ``[%rd9]`` (its slot of ``out``).

    ``%r1`` is ``%tid.x``; ``%rd1`` is ``out``; ``inputs`` maps a parameter name to a
    numpy array placed in device memory, whose address the body reads with
    ``ld.param.u64 %rdN, [name]``.
    """
    inputs = inputs or {}
    params = "".join(f", .param .u64 {name}" for name in inputs)
    smem = f".shared .align 16 .b8 smem[{shared}];" if shared else ""
    ptx = HEAD + f"""{smem}
.visible .entry k(.param .u64 out{params})
{{
  {REGS}
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd8, %r1, {4 * out_words}; add.s64 %rd9, %rd1, %rd8;
{body}
  ret;
}}"""
    emu = Emulator()
    out = emu.alloc(4 * out_words * threads)
    args = [out]
    for array in inputs.values():
        array = np.ascontiguousarray(array)
        ptr = emu.alloc(max(array.nbytes, 1))
        emu.copy_htod(ptr, array)
        args.append(ptr)
    emu.launch(emu.load_module(ptx), "k", grid=(1,), block=(threads,), params=args)
    return emu.copy_dtoh(out, 4 * out_words * threads, np.uint32).reshape(threads, out_words)


def scalar(body: str, threads: int = 1, **kw) -> np.ndarray:
    """``%r9`` of each thread after ``body``."""
    return run_kernel(body + "\n  st.global.u32 [%rd9], %r9;", threads, **kw)[:, 0]
