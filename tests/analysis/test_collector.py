"""The collector pause around an analysis: the program it runs in gets its collector back."""

import gc
import threading
import weakref

import pytest

from kernelcheck.analysis.budget import BudgetExceeded, within_budget
from kernelcheck.analysis.collector import paused_collector, recover
from kernelcheck.analysis.summary import analyze_kernel
from kernelcheck.ptx.parser import parse_ptx

PTX = """
.version 8.0
.target sm_80
.address_size 64
.visible .entry scale(.param .u64 p, .param .u32 n)
{
    .reg .pred %p<2>; .reg .b32 %r<6>; .reg .b64 %rd<5>; .reg .f32 %f<3>;
    ld.param.u64 %rd1, [p]; ld.param.u32 %r1, [n];
    mov.u32 %r2, %tid.x; setp.ge.u32 %p1, %r2, %r1; @%p1 bra DONE;
    cvta.to.global.u64 %rd2, %rd1; mul.wide.u32 %rd3, %r2, 4; add.s64 %rd4, %rd2, %rd3;
    ld.global.f32 %f1, [%rd4]; add.f32 %f2, %f1, %f1; st.global.f32 [%rd4], %f2;
DONE:
    ret;
}
"""


class _Cycle:
    def __init__(self) -> None:
        self.me = self


def test_the_collector_runs_again_after_the_pause_and_frees_its_cycles():
    assert gc.isenabled()
    with paused_collector():
        assert not gc.isenabled()
        cycle = _Cycle()
        gone = weakref.ref(cycle)
        del cycle
        assert gone() is not None  # no collection while paused
    assert gone() is None  # the one collection at the end freed it
    assert gc.isenabled()


def test_a_stopped_analysis_gives_the_collector_back():
    released = []
    with pytest.raises(RuntimeError), paused_collector(release=lambda: released.append(1)):
        raise RuntimeError("stopped part-way")
    assert released == [1]
    assert gc.isenabled()


def test_a_collector_the_program_turned_off_stays_off():
    gc.disable()
    try:
        with paused_collector():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_nested_pauses_end_with_the_outermost():
    with paused_collector():
        with paused_collector():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_another_thread_analyses_with_the_collector_as_it_is():
    seen = []

    def other():
        with paused_collector():
            seen.append(gc.isenabled())

    thread = threading.Thread(target=other)
    thread.start()
    thread.join(5)
    assert seen == [True]


def test_an_analysis_stopped_by_its_budget_gives_the_collector_back():
    def slow():
        with paused_collector():
            while True:  # stopped by the budget, wherever it lands
                pass

    with pytest.raises(BudgetExceeded):
        within_budget(slow, 0.05)
    assert gc.isenabled()


def test_recover_after_a_pause_whose_end_was_cut_short():
    pause = paused_collector()
    pause.__enter__()  # the exit never runs, as when a stop lands in it
    assert not gc.isenabled()
    recover()
    assert gc.isenabled()
    with paused_collector():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_an_analysis_leaves_the_collector_as_it_found_it():
    module = parse_ptx(PTX)
    summary = analyze_kernel(module, module.get_function("scale"))
    assert summary.kernel_class == "never"
    assert gc.isenabled()
