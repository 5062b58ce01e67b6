"""The emitting pass of the SASS lift reuses each block's last fixpoint lift: the result is
the one lifting every block again gives (kernelcheck.sass.lift)."""

from __future__ import annotations

from pathlib import Path

import pytest

import kernelcheck.sass.lift as lift_module
from kernelcheck.sass.division import DivisionPlan
from kernelcheck.sass.lift import lift_kernel
from kernelcheck.sass.loader import module_from_cubin

FIXTURES = sorted((Path(__file__).parents[2] / "fixtures" / "cubin" / "sm_90").glob("*.cubin"))


class _AlwaysLiftAgain(DivisionPlan):
    """The same plan, but one that always says it recognised a division, so every block is
    lifted again by the emitting pass."""

    def __bool__(self) -> bool:
        return True


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.stem)
def test_reused_block_lifts_equal_lifting_again(path, monkeypatch):
    module = module_from_cubin(path.read_bytes())
    reused = {k.name: lift_kernel(k, module) for k in module.kernels}
    plan_divisions = lift_module.plan_divisions

    def always_lift_again(instructions, known=None):
        plan = plan_divisions(instructions, known)
        return _AlwaysLiftAgain(plan.copies, plan.results)

    monkeypatch.setattr(lift_module, "plan_divisions", always_lift_again)
    for kernel in module.kernels:
        again = lift_kernel(kernel, module)
        mine = reused[kernel.name]
        assert mine.function.body == again.function.body, kernel.name
        assert (mine.origin, mine.reasons) == (again.origin, again.reasons), kernel.name
