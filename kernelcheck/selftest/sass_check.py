"""SASS verdicts against the hardware: the fixture cubins through the re-execution oracle.

For a device of architecture ``sm_XY`` with cubins in ``fixtures/cubin/sm_XY`` (built by
NVRTC from the same sources as the PTX), every case of a CUDA C++ fixture kernel gets its
verdict from the SASS analysis (:func:`kernelcheck.sass.analysis.analyze_sass_kernel`: the
cubin lifted to the Kernel IR, its LaunchCheck evaluated on the launch's parameter buffer
and allocation table), and the cubin's kernel is what the device runs once, twice and after
a partial run (:mod:`kernelcheck.selftest.reexec`). SASS cannot be rewritten here, so the
partial first run is the PTX of the same source with its later blocks exiting at entry: the
state it leaves is one a partial run of the cubin leaves too when both compute the same
bytes, which the ``emulator`` and ``reexec`` sections check for the PTX.

The stand-in driver runs PTX only (cubins load but cannot launch): there the section says
"skipped: no device".
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from kernelcheck.selftest.cases import Materialized, expected
from kernelcheck.selftest.context import SectionContext
from kernelcheck.selftest.partial import rewrite_early_exit
from kernelcheck.selftest.reexec import check_cases
from kernelcheck.selftest.results import SectionResult

__all__ = ["run", "cubin_path", "sass_verdict", "cubin_loader"]


def cubin_path(root: Path, arch: str, kernel: str) -> Path | None:
    """The cubin of ``kernel`` for ``arch``, if the corpus has one."""
    source = expected(root)[kernel]["source"]
    if not source.endswith(".cu"):
        return None
    path = root / "cubin" / arch / f"{source[:-3]}.cubin"
    return path if path.exists() else None


@cache
def _sass_module(path: Path):
    from kernelcheck.sass.loader import module_from_cubin
    return module_from_cubin(path.read_bytes(), str(path))


@cache
def _summary(path: Path, entry: str):
    from kernelcheck.sass.analysis import analyze_sass_kernel
    module = _sass_module(path)
    return analyze_sass_kernel(module, module.get_function(entry))


def sass_verdict(arch: str, root: Path):
    """A verdict function for :func:`~kernelcheck.selftest.reexec.check_cases` from the
    SASS of the cubins for ``arch``."""
    from kernelcheck.launch.evaluate import evaluate

    def verdict(mat: Materialized, params: bytes, allocations) -> tuple[str, str]:
        path = cubin_path(root, arch, mat.case.kernel)
        summary = _summary(path, mat.entry)
        v = evaluate(summary.launch_check, params, mat.case.grid, mat.case.block, allocations)
        return v.verdict, f"SASS: {v.decided_by}"
    return verdict


def cubin_loader(arch: str, root: Path):
    """A loader for :func:`~kernelcheck.selftest.reexec.check_cases`: the cubin's kernel,
    and the PTX early-exit rewrite for the partial run (see the module docs)."""
    def load(device, mat: Materialized):
        path = cubin_path(root, arch, mat.case.kernel)
        full = device.function(device.load_image(path.read_bytes()), mat.entry)

        def partial(first_exiting: int):
            text = rewrite_early_exit(mat.module, mat.entry, first_exiting)
            return device.function(device.load_ptx(text), mat.entry)
        return full, partial
    return load


def run(ctx: SectionContext) -> SectionResult:
    """The ``sass`` section (see the module docs)."""
    device = ctx.device
    if device.standin:
        return SectionResult.skipped("sass", "no device (the stand-in driver cannot run "
                                             "cubins)")
    arch = device.arch
    if not (ctx.root / "cubin" / arch).is_dir():
        return SectionResult.skipped("sass", f"no fixture cubins for {arch} "
                                             f"(fixtures/cubin/{arch})")
    result = SectionResult("sass")
    kernels = {k for k in expected(ctx.root) if cubin_path(ctx.root, arch, k)}
    check_cases(ctx, result, sass_verdict(arch, ctx.root), cubin_loader(arch, ctx.root),
                what=f"SASS verdicts ({arch} cubins)",
                cases=[c for c in ctx.cases() if c.kernel in kernels])
    return result.finish()
