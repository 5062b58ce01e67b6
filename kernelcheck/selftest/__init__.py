"""``kernelcheck selftest``: check kernelcheck's claims against a device, section by section.

Every soundness figure elsewhere comes from the CPU emulator, which reads PTX through the same
front end as the analysis. The self-test checks the same claims through the CUDA driver
(``cuda.bindings.driver``): on a GPU machine against the hardware, on a machine without one
against the stand-in ``libcuda.so.1`` (the emulator behind the real driver's interface), so
that the same code runs in CI and on a GPU.

Sections (:data:`~kernelcheck.selftest.runner.SECTIONS`), each run in its own process with a
time cap:

``reexec``
    The re-execution oracle: every instance the PTX analysis calls idempotent is run once,
    twice, and after a partial first run, from the same initial memory, and the bytes of its
    allocations (and guard bytes around them) are compared (:mod:`.reexec`).
``emulator``
    The emulator against the device: the same instances on both (:mod:`.emulator_check`).
``sass``
    SASS verdicts of the fixture cubins through the re-execution oracle (:mod:`.sass_check`).
``recovery``
    A fault-injection campaign with the PTX-rewrite injector on the device, recovered by the
    recovery engine (:mod:`.recovery_check`).
``pytorch``
    A small PyTorch training step plainly and under ``kernelcheck run --recover``
    (:mod:`.torch_check`).
``launch``
    The shim's added cost per launch (:mod:`.launch_cost`).

The orchestration is :func:`kernelcheck.selftest.runner.run_selftest`; importing this package
imports no driver binding.
"""

from kernelcheck.selftest.results import Failure, SectionResult, SelftestReport

__all__ = ["Failure", "SectionResult", "SelftestReport"]
