"""The lifter's facts (kernelcheck.sass.lift_state): every register an instruction writes
loses the facts about its older value, and a predicate's value number holds only while
the registers it reads are unchanged."""

from __future__ import annotations

from pathlib import Path

import pytest

import kernelcheck.sass.lift_rules as rules
from kernelcheck.ir.operands import defs
from kernelcheck.sass.lift import lift_kernel
from kernelcheck.sass.loader import module_from_cubin

from .conftest import CUBINS, needs_nvdisasm


@needs_nvdisasm
@pytest.mark.parametrize("path", CUBINS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_every_lifted_write_forgets_the_older_value(path: Path, monkeypatch):
    # A fact (a pair's 64-bit value, a guarded value, a predicate's value number) that
    # outlived a write of its register would describe a value the register no longer
    # holds. Convergence barrier registers (BSSY B0) carry no facts.
    lift_instruction = rules.lift_instruction
    missed: list[str] = []

    def checked(lifter, instr):
        before = dict(lifter.state.writes)
        lift_instruction(lifter, instr)
        if lifter.stopped:
            return
        for name in defs(instr):
            if name in ("RZ", "URZ", "PT", "UPT") or name.startswith("B"):
                continue
            if lifter.state.writes.get(name, 0) <= before.get(name, 0):
                missed.append(f"{instr.full_opcode} {name}")

    monkeypatch.setattr(rules, "lift_instruction", checked)
    module = module_from_cubin(path.read_bytes())
    for kernel in module.kernels:
        lift_kernel(kernel, module, every_instruction=True)
    assert missed == []
