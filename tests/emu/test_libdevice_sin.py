"""libdevice's ``sin(double)`` on arguments large enough for its slow-path reduction.

For ``|x| >= 2**31`` libdevice reduces the argument with ``__internal_trig_reduction_slowpathd``
(Payne-Hanek: a 64-bit multiply by a table of 2/pi, partial products in a 40-byte local
array). That function carries nvcc's inline PTX blocks, ``{ .reg .u32 %r0, %r1, %r2, %r3,
...; mad.lo.cc.u32 %r0, ...; }``, whose ``%r1`` and ``%r3`` shadow the function's own: the
outer ``%r3`` is the first table index, and the outer ``%r1`` the high word of the argument.
A front end that merges the two (one register per name) lets the block overwrite them, and
the store ``st.local.u64 [%SPL + 8 * (%r36 - %r3)]`` then lands far outside the local frame
("invalid local write"), while a correct one keeps them apart (PTX ISA 9.7.12.1 "{}": "The
curly braces also provide a mechanism for determining the scope of a variable: any variable
declared within a scope is not available outside the scope"). The local frame, the local
addressing and the call are not at fault: with the inner registers renamed the emulator
computes these values exactly.

The kernel is ``sine_f64`` of fixtures/src/launch_args.cu (``out[i] = sin(in[i])``).
"""

from __future__ import annotations

import numpy as np
import pytest

from kernelcheck.emu import Emulator
from tests.emu.fixture_data import FIXTURES, module

# Arguments of the slow path (|x| >= 2**31), both signs, up to the largest finite double,
# and two of the fast path.
_ARGS = np.array([1e15, 1.2345e15, -9.87e14, 2.0**31, 2.0**60, -7.5e22, 1e300,
                  1.7976931348623157e308, 3.0, 123456789.0], dtype=np.float64)


@pytest.mark.parametrize("flavour", ["sm_80", "sm_90", "nvrtc"])
def test_sin_double_slow_path_reduction(flavour):
    path = FIXTURES / "ptx" / flavour / "launch_args.ptx"
    emu = Emulator()
    n = len(_ARGS)
    out, inp = emu.alloc(8 * n), emu.alloc(8 * n)
    emu.copy_htod(inp, _ARGS)
    program = emu.load_module(module(path))
    emu.launch(program, "sine_f64", grid=(1,), block=(32,), params=[out, inp, n])
    got = emu.copy_dtoh(out, 8 * n, np.float64)
    # CUDA's sin(double) is within 2 ulp of the exact value over its whole range (CUDA C++
    # Programming Guide, "Double-Precision Floating-Point Functions"); numpy's is within 1.
    ulps = np.abs(got.view(np.int64) - np.sin(_ARGS).view(np.int64))
    assert (ulps <= 3).all(), dict(zip(_ARGS.tolist(), ulps.tolist(), strict=True))
