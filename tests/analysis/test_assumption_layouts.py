"""No false "idempotent" on launches laid out against the launch check's assumptions.

``bench/soundness.py`` places pointers in six fixed ways. Here hypothesis draws the layout
itself for the kernels whose verdicts lean on an assumption or on a new launch-time rule:
which pointers share an allocation (a caching allocator's sub-buffers) and which get one
of their own, at what offset inside it (aliasing, partial overlap, a pointer in the
middle of another buffer, byte offsets for byte buffers), and scalars around the fixture's
own. The allocation table the verdict gets is the true one (the emulator's allocations),
and loaded indices stay inside their buffer: the one assumption no launch can check
(docs/design.md, "Assumptions"). Every instance runs on the emulator, the oracle; the PTX
and the lifted SASS verdicts must never be "idempotent" where the oracle finds a clobber.

``KERNELCHECK_LAYOUT_EXAMPLES`` sets the examples per kernel (default 8).
"""

from __future__ import annotations

import os
from functools import cache

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kernelcheck.analysis.provider import verdict_provider
from kernelcheck.emu.instances import with_pointer
from kernelcheck.emu.soundness import Instance, check_soundness, draw_instance
from kernelcheck.emu.workloads import get_workload
from tests.emu.fixture_data import FIXTURES, entry_name, expected, module

EXAMPLES = int(os.environ.get("KERNELCHECK_LAYOUT_EXAMPLES", "8"))
BASE = 0x7F2000000000
KERNELS = ["store_past_pointer_difference", "copy_if_flag", "copy_to_selected",
           "gather_shifted", "row_tails_to_heads", "odd_from_even_counted",
           "exchange_loaded_value", "copy_gridstride_rolled", "bytes_from_words",
           "gather_f32", "scatter_f32", "loop_bound_from_memory", "shift_scale",
           "rotate_copy_u32"]


def _path(kernel: str):
    stem = expected()[kernel]["source"].replace(".cu", ".ptx")
    return FIXTURES / "ptx" / "sm_90" / stem


@cache
def _providers(path):
    from kernelcheck.sass.lift import lift_module
    from kernelcheck.sass.loader import load_cubin_sass

    names = {k: expected()[k]["param_names"] for k in expected()
             if expected()[k]["source"].replace(".cu", ".ptx") == path.name}
    cubin = FIXTURES / "cubin" / "sm_90" / path.name.replace(".ptx", ".cubin")
    sass = lift_module(load_cubin_sass(cubin.read_bytes(), str(cubin)).module)
    return verdict_provider(module(path), names), verdict_provider(sass, names)


def _layout(kernel: str, inst: Instance, data) -> Instance:
    """``inst`` with its pointers laid out by hypothesis: a group per allocation, an
    element offset inside it (groups lie 1 MiB apart, so they stay separate allocations)."""
    buffers = get_workload(kernel).buffers(inst.params, inst.grid, inst.block)
    params = dict(inst.params)
    for k, buf in enumerate(buffers):
        size = np.dtype(buf.dtype).itemsize
        group = data.draw(st.integers(0, min(k, 3)), label=f"group of {buf.pointer}")
        offset = data.draw(st.integers(0, 96), label=f"offset of {buf.pointer}") * size
        if size == 1:
            offset += data.draw(st.integers(0, 3), label="byte offset")
        start = BASE + group * 0x100000 + 0x10000 - min(buf.lo, 0) * size
        params = with_pointer(params, buf.pointer, start + offset)
    return Instance(kernel, params, inst.grid, inst.block, "drawn")


@pytest.mark.parametrize("kernel", KERNELS)
@settings(max_examples=EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_no_false_idempotent_on_drawn_layouts(kernel, data):
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    template = expected()[kernel]["instances"][0]
    inst = _layout(kernel, draw_instance(kernel, template, np.random.default_rng(seed),
                                         "disjoint"), data)
    path = _path(kernel)
    entry = entry_name(path, kernel)
    for run in _providers(path):
        def provider(name, params, grid, block, allocations=(), run=run):
            return run(entry, params, grid, block, allocations=allocations or None)

        report = check_soundness([inst], provider, module_for=lambda k: module(path),
                                 names_for=lambda k: expected()[k]["param_names"],
                                 entry_for=lambda k: entry, seed=seed)
        assert not report.false_positives, (kernel, inst)
