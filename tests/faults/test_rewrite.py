"""The PTX bit-flip rewriter gives the same outcome as the emulator's own injection."""

from __future__ import annotations

import pytest

from kernelcheck.emu.executor import BitFlip
from kernelcheck.errors import KernelcheckError, UnsupportedFeature
from kernelcheck.faults.campaign import Campaign
from kernelcheck.faults.rewrite import rewrite_bit_flip
from kernelcheck.ptx.parser import parse_ptx

KERNELS = [("saxpy", 0, True), ("inplace_add_one", 0, False),
           ("_Z5axpbyIdEvPT_PKS0_S3_S0_S0_i", 0, True), ("reduce_sum_block", 0, True),
           ("scale_gridstride", 0, True)]


def _final(target, program, inject=None):
    target.reset()
    try:
        target.emu.launch(program, target.entry, inject=inject, **target.launch_kwargs())
    except KernelcheckError as err:
        return type(err).__name__
    return target.emu.memory.snapshot()


@pytest.mark.parametrize("group", ["G_GP", "G_PR", "G_LD"])
def test_rewritten_ptx_matches_emulator_injection(group):
    campaign = Campaign(KERNELS)
    for trial in range(12):
        k, f = campaign.draw(trial, 7, "single", [group])
        t = campaign.prepared(k).target
        flip = BitFlip(f.instruction, f.ctaid, f.tid, f.bits, f.occurrence, f.function,
                       f.element)
        text = rewrite_bit_flip(t.module, t.entry, f.instruction, f.ctaid, f.tid,
                                f.occurrence, f.bits, f.element)
        rewritten = t.emu.load_module(parse_ptx(text))
        assert _final(t, rewritten) == _final(t, t.program, flip), f.describe()


def test_rewriting_a_store_is_refused():
    t = Campaign(KERNELS).prepared(0).target
    st = next(i.index for i in t.module.kernels[0].instructions if i.opcode == "st")
    with pytest.raises(UnsupportedFeature, match="no destination"):
        rewrite_bit_flip(t.module, t.module.kernels[0].name, st, (0, 0, 0), (0, 0, 0), 1, 1)
