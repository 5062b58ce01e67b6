"""Random instructions of every form the emulator lists, with random operand values: each one
runs, or stops with UnsupportedFeature (a form or operand shape it does not run, a value it
cannot represent) or MemoryFault (an address outside its memory). Never another exception: a
KeyError, IndexError, ValueError or OverflowError escaping the emulator is a bug.

The instructions come from ``kernelcheck.emu.dispatch_entries()`` through
:mod:`tests.emu.fuzz_forms`. The default run draws a bounded sample; the ``slow`` sweep runs
every (opcode, type) pair of the table several times.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kernelcheck.emu import MemoryFault, dispatch_entries
from kernelcheck.errors import UnsupportedFeature
from tests.emu.fuzz_forms import CONTROL, accepted_by_the_table, instruction, run

ENTRIES = tuple(e for e in dispatch_entries() if e[0] not in CONTROL)
PAIRS = tuple(sorted({(opcode, ty) for opcode, ty, _ in ENTRIES}))


def _outcome(line: str, threads: int, seed: int) -> str:
    try:
        run(line, threads, seed)
    except UnsupportedFeature as err:
        assert err.where, f"{line}: {err} names no position"
        return "unsupported"
    except MemoryFault:
        return "fault"
    return "ran"


@settings(max_examples=300, deadline=None, derandomize=False,
          suppress_health_check=[HealthCheck.too_slow])
@given(entry=st.sampled_from(ENTRIES), choices=st.randoms(use_true_random=False),
       threads=st.sampled_from([1, 32, 40, 64]), seed=st.integers(0, 2**32 - 1))
def test_random_forms_run_or_are_unsupported(entry, choices, threads, seed):
    line = instruction(choices, entry)
    assert accepted_by_the_table(line), line
    _outcome(line, threads, seed)


def test_most_generated_instructions_run():
    # The generator writes operands as the ISA does for most opcodes: a sample that mostly
    # failed would test the rejection paths only.
    rng = random.Random(7)
    outcomes = [_outcome(instruction(rng, rng.choice(ENTRIES)), 32, k) for k in range(150)]
    assert outcomes.count("ran") > len(outcomes) // 2


@pytest.mark.slow
@pytest.mark.parametrize("round_", range(4))
def test_every_opcode_and_type_of_the_table(round_):
    rng = random.Random(1000 + round_)
    for opcode, ty in PAIRS:
        mods = [m for o, t, m in ENTRIES if (o, t) == (opcode, ty)]
        line = instruction(rng, (opcode, ty, rng.choice(mods)))
        _outcome(line, rng.choice([1, 32, 40, 64]), rng.randrange(2**32))
