"""The early-exit rewrite: on the emulator, blocks at or above the index write nothing and
the others compute what the unchanged kernel does."""

from __future__ import annotations

import numpy as np
import pytest

from kernelcheck.emu import Emulator
from kernelcheck.errors import UnsupportedFeature
from kernelcheck.ptx.parser import parse_ptx, parse_ptx_file
from kernelcheck.selftest.partial import rewrite_early_exit
from tests.conftest import FIXTURES


@pytest.mark.parametrize("grid, first", [((4, 1, 1), 1), ((4, 1, 1), 3), ((2, 3, 2), 7)])
def test_blocks_from_the_index_on_exit_at_entry(grid, first):
    module = parse_ptx_file(FIXTURES / "ptx" / "sm_80" / "elementwise.ptx")
    blocks = grid[0] * grid[1] * grid[2]
    n = blocks * 64
    emu = Emulator()
    out = emu.alloc(4 * n)
    emu.copy_htod(out, np.full(n, -1, np.int32))
    program = emu.load_module(rewrite_early_exit(module, "write_thread_ids", first))
    emu.launch(program, "write_thread_ids", grid=grid, block=(64, 1, 1), params=[out, n])
    got = emu.copy_dtoh(out, 4 * n, np.int32)
    # write_thread_ids writes out[i] = i for i = blockIdx.x * blockDim.x + threadIdx.x; the
    # y and z blocks repeat x's writes, so the x blocks reached by some running block are
    # those whose linear index x + gx * (y + gy * z) is below ``first`` for some y, z.
    ran_x = {b % grid[0] for b in range(first)}
    want = np.full(n, -1, np.int32)
    for x in ran_x:
        want[x * 64:(x + 1) * 64] = np.arange(x * 64, (x + 1) * 64)
    assert np.array_equal(got, want)


def test_an_unknown_kernel_is_unsupported():
    m = parse_ptx(".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k() { ret; }")
    with pytest.raises(UnsupportedFeature):
        rewrite_early_exit(m, "other", 1)
