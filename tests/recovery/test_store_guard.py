"""The PTX store guard: a rewritten kernel traps before a store outside the ranges it is
given, and otherwise computes exactly what the original computes (run on the emulator)."""

from __future__ import annotations

import pytest

from kernelcheck.analysis.summary import analyze_kernel
from kernelcheck.emu.executor import LaunchError
from kernelcheck.errors import UnsupportedFeature
from kernelcheck.faults.rewrite import rewrite_bit_flip
from kernelcheck.faults.targets import load_target
from kernelcheck.ptx.parser import parse_ptx
from kernelcheck.recovery.footprint import instance_footprint
from kernelcheck.recovery.store_guard import guard_table, guarded_stores, rewrite_store_guard


def _setup(kernel, number=0, disjoint=False):
    t = load_target(kernel, number, disjoint=disjoint)
    function = t.program.function(t.entry).function
    check = analyze_kernel(t.module, function).launch_check
    from kernelcheck.emu.emulator import pack_params
    raw = pack_params(function, t.values).tobytes()
    allocs = tuple((a.base, a.size) for a in t.emu.memory.allocations())
    fp = instance_footprint(check, raw, t.grid, t.block, allocs)
    assert fp.writes is not None
    table = t.emu.alloc(16 * max(1, len(fp.writes.ranges)) + 16)
    return t, fp.writes.ranges, table


def _launch(t, text, table, ranges):
    raw = guard_table(ranges)
    if raw:
        t.emu.copy_htod(table, raw)
    program = t.emu.load_module(parse_ptx(text))
    t.emu.launch(program, t.entry, grid=t.grid, block=t.block,
                 params=list(t.values) + [table, len(ranges)], shared_bytes=t.shared_bytes)


def _memory(t, table):
    return {b: d for b, d in t.emu.memory.snapshot().items() if b != table}


@pytest.mark.parametrize("kernel,number,disjoint", [
    ("vec_add", 0, True), ("scatter_f32", 3, False), ("strided_pair_copy", 3, False),
    ("atomic_add_all", 0, False), ("loop_bound_from_memory", 0, False),
])
def test_guarded_kernel_with_its_write_footprint_computes_the_same(kernel, number, disjoint):
    t, ranges, table = _setup(kernel, number, disjoint)
    t.emu.launch(t.program, t.entry, **t.launch_kwargs())
    golden = _memory(t, table)
    t.reset()
    _launch(t, rewrite_store_guard(t.module, t.entry), table, ranges)
    assert _memory(t, table) == golden


def test_store_outside_the_table_traps_before_it_lands():
    t, ranges, table = _setup("vec_add", 0, True)
    initial = _memory(t, table)
    (lo, hi), = ranges
    allowed = ((lo, lo + (hi - lo) // 2),)
    with pytest.raises(LaunchError, match="trap"):
        _launch(t, rewrite_store_guard(t.module, t.entry), table, allowed)
    after = _memory(t, table)
    # nothing outside the allowed half changed
    for base, data in initial.items():
        for k in range(0, len(data), 64):
            a = base + k
            if not lo <= a < lo + (hi - lo) // 2:
                assert after[base][k:k + 64] == data[k:k + 64]


def test_flipped_address_is_trapped_where_the_plain_kernel_corrupts_memory():
    # strided_pair_copy #3, thread 91: bit 8 of its first parameter load flipped (the stray
    # store of campaign trial 566, seed 2026); the store lands outside the write footprint
    t, ranges, table = _setup("strided_pair_copy", 3)
    flipped = rewrite_bit_flip(t.module, t.entry, 1, (0, 0, 0), (91, 0, 0), 1, 0x100)
    initial = _memory(t, table)
    t.emu.launch(t.emu.load_module(parse_ptx(flipped)), t.entry, **t.launch_kwargs())
    plain = _memory(t, table)
    t.reset()
    t.emu.launch(t.program, t.entry, **t.launch_kwargs())
    golden = _memory(t, table)
    def outside(a):
        return not any(lo <= a < hi for lo, hi in ranges)
    assert any(x != y and outside(base + k) for base, data in plain.items()
               for k, (x, y) in enumerate(zip(data, golden[base], strict=True)))
    t.reset()
    guarded = rewrite_store_guard(parse_ptx(flipped), t.entry)
    with pytest.raises(LaunchError, match="trap"):
        _launch(t, guarded, table, ranges)
    after = _memory(t, table)
    for base, data in initial.items():
        for k, (x, y) in enumerate(zip(data, after[base], strict=True)):
            assert x == y or not outside(base + k)


def test_stores_of_a_called_function_are_refused():
    t = load_target("noinline_accumulate", 0)
    with pytest.raises(UnsupportedFeature, match="not rewritten"):
        rewrite_store_guard(t.module, t.entry)


def test_every_global_store_gets_one_check():
    t = load_target("scatter_f32", 0)
    text = rewrite_store_guard(t.module, t.entry)
    function = next(f for f in parse_ptx(text).kernels if f.name == t.entry)
    assert text.count("trap;") == len(guarded_stores(function)) >= 1
    assert [p.name for p in function.params][-2:] == [f"{t.entry}_kcwg_table",
                                                       f"{t.entry}_kcwg_count"]
