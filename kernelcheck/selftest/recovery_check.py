"""Recovery on the device: faults planted by the PTX rewriter, recovered by the engine.

A campaign over fixture instances (the first of each kernel with ``--quick``, all of them
otherwise). For each target, a fault-free run on the emulator gives the dynamic profile
faults are drawn from (:func:`kernelcheck.faults.models.draw_fault`: a register bit flip,
``single`` or ``double``, uniform over the executions of an NVBitFI instruction group), and a
fault-free run on the device gives the golden bytes. Each trial then:

1. rewrites the kernel's PTX so that the drawn thread flips the drawn bits right after the
   drawn execution (:func:`kernelcheck.faults.rewrite.rewrite_bit_flip`);
2. runs the instance through a :class:`~kernelcheck.recovery.session.RecoverySession` on
   the device, the rewritten kernel for the first launch only (a transient fault: the
   engine's redundant run and its replays get the clean kernel), with redundant execution
   of every replayable instance (``RecoveryConfig(redundant="replayable")``);
3. compares the allocations with the golden bytes.

Every fault the engine detects must end in the golden bytes (**recovered**); a detected
fault that does not is a failure with its reproducer. Undetected faults that leave memory
golden are **masked**, the others **SDC** (reported, not failures: detection by redundant
execution needs the fault to change a re-run's bytes). On a GPU a memory fault or trap is a
sticky error that ends the context, and the recovery engine's device does not rebuild
contexts (docs/recovery.md): such a trial counts as **context lost** and the runner starts a
new worker for the remaining trials.

The saved-bytes ratio is the bytes the engine saved over the bytes of every allocation the
launch writes (a whole-allocation checkpoint); its floor is the same ratio for the bytes
the emulator oracle saw clobbered (read and written), which any replay must restore.
"""

from __future__ import annotations

import zlib

import numpy as np

from kernelcheck.errors import KernelcheckError
from kernelcheck.recovery.device import DeviceError
from kernelcheck.selftest.cases import InvalidCase, Materialized, materialize
from kernelcheck.selftest.context import SectionContext
from kernelcheck.selftest.device import DeviceCallError, DeviceImage
from kernelcheck.selftest.results import SectionResult

__all__ = ["run", "FaultDevice", "DEFAULT_TRIALS", "QUICK_TRIALS"]

DEFAULT_TRIALS, QUICK_TRIALS = 200, 24
_MODELS = ("single", "double")
_GROUPS = ("G_GP", "G_FP32", "G_LD", "G_PR", "G_OTHERS")
_KINDS = {700: "memory_fault", 716: "memory_fault", 715: "trap", 710: "trap", 702: "timeout"}


class FaultDevice:
    """The recovery engine's device over the self-test's device and one instance's image.

    :meth:`arm` makes the next launch run another function (the kernel with a fault
    planted), once; every other launch runs the module's kernel.
    """

    def __init__(self, device, image: DeviceImage, mat: Materialized) -> None:
        self.device = device
        self.image = image
        self.mat = mat
        self.launches = 0
        self._armed = None

    def alloc(self, nbytes: int) -> int:
        return self.device.alloc(nbytes)

    def copy_htod(self, address: int, data) -> None:
        self.device.copy_htod(address, bytes(data))

    def copy_dtoh(self, address: int, nbytes: int) -> bytes:
        return self.device.copy_dtoh(address, nbytes)

    def allocations(self) -> tuple[tuple[int, int], ...]:
        return self.image.allocations()

    def load_module(self, module) -> object:
        return self.device.function(self.device.load_ptx(self.mat.ptx.read_text()),
                                    self.mat.entry)

    def arm(self, function) -> None:
        self._armed = function

    def launch(self, handle, kernel, grid, block, params: bytes, shared_bytes: int = 0) -> None:
        fn, self._armed = (self._armed or handle), None
        index = self.launches
        self.launches += 1
        try:
            self.device.launch(fn, grid, block, params, self.mat.offsets, shared_bytes, kernel)
        except DeviceCallError as error:
            raise DeviceError(str(error), _KINDS.get(error.code, "launch_failure"),
                              index) from error

    def synchronize(self) -> None:
        try:
            self.device.synchronize()
        except DeviceCallError as error:
            raise DeviceError(str(error), _KINDS.get(error.code, "launch_failure")) from error


def _golden_profile(mat: Materialized):
    """The emulator's fault-free profile of the instance, as campaigns draw faults from."""
    from kernelcheck.emu import Emulator
    from kernelcheck.emu.instances import param_values
    from kernelcheck.emu.profile import profile_launch
    from kernelcheck.faults.groups import group_sites
    from kernelcheck.faults.models import Golden

    emu = Emulator()
    for lo, data in mat.regions:
        emu.memory.alloc_at(lo, len(data))
        emu.copy_htod(lo, np.frombuffer(data, np.uint8))
    program = emu.load_module(mat.module)
    profile, result = profile_launch(emu, program, mat.entry, grid=mat.case.grid,
                                     block=mat.case.block,
                                     params=param_values(mat.param_names, mat.params),
                                     shared_bytes=mat.shared_bytes, trace=True)
    golden = Golden(profile, group_sites(program), result.trace.read_bytes.ranges,
                    result.trace.written_bytes.ranges, result.steps)
    return golden, program


class _Target:
    def __init__(self, ctx: SectionContext, mat: Materialized) -> None:
        self.mat = mat
        self.golden, self.program = _golden_profile(mat)
        self.image = DeviceImage(ctx.device, mat.regions)
        self.params = mat.packed(mat.device_params(self.image))
        self.device = FaultDevice(ctx.device, self.image, mat)
        fn = self.device.load_module(mat.module)
        self.image.upload()
        ctx.device.launch(fn, mat.case.grid, mat.case.block, self.params, mat.offsets,
                          mat.shared_bytes, mat.entry)
        self.golden_bytes = self.image.contents(self.image.read())
        self.trials = 0


def _trial(ctx, target: _Target, j: int, checks: dict, counts: dict, result) -> bool:
    """Run trial ``j`` of ``target``; returns False when the context was lost."""
    from kernelcheck.faults.models import draw_fault
    from kernelcheck.faults.rewrite import rewrite_bit_flip
    from kernelcheck.recovery.policy import RecoveryConfig
    from kernelcheck.recovery.session import RecoverySession

    mat = target.mat
    name = mat.case.name
    rng = np.random.default_rng([ctx.seed, zlib.crc32(name.encode()), j])
    model = _MODELS[j % len(_MODELS)]
    fault = draw_fault(model, target.golden, target.program, rng, _GROUPS[j % len(_GROUPS)])
    if fault is None or fault.function != mat.entry:
        counts["not_injectable"] += 1  # no site in the group, or inside a device function
        return True
    try:
        text = rewrite_bit_flip(mat.module, mat.entry, fault.instruction, fault.ctaid,
                                fault.tid, fault.occurrence, fault.bits, fault.element)
        faulty = ctx.device.function(ctx.device.load_ptx(text), mat.entry)
    except KernelcheckError:
        counts["not_injectable"] += 1
        return True
    counts["trials"] += 1
    repro = ctx.reproducer(name, "--trials", str(j + 1))
    target.image.upload()
    target.device.arm(faulty)
    session = RecoverySession(target.device, RecoveryConfig(redundant="replayable"),
                              check_cache=checks)
    module = session.load_module(mat.module)
    try:
        session.launch(module, mat.entry, grid=mat.case.grid, block=mat.case.block,
                       params=target.params, shared_bytes=mat.shared_bytes)
        report = session.synchronize()
    except (DeviceError, DeviceCallError) as error:
        if ctx.device.context_lost():
            counts["context_lost"] += 1
            return False
        result.fail(name, f"trial {j} ({fault.describe()}): the engine could not finish: "
                          f"{error}", repro)
        return True
    if ctx.device.context_lost():
        counts["context_lost"] += 1
        return False
    snapshot = target.image.read()
    good = target.image.contents(snapshot) == target.golden_bytes and \
        not target.image.guards_changed(snapshot)
    record = report.launches[0]
    counts["saved_bytes"] += record.saved_bytes
    counts["written_allocation_bytes"] += record.written_allocation_bytes or 0
    counts["clobbered_bytes"] += mat.trace.clobbered.size
    if report.detections:
        if good and report.all_recovered:
            counts["recovered"] += 1
            result.passed += 1
        else:
            counts["unrecovered"] += 1
            result.fail(name, f"trial {j} ({model} {fault.describe()}): detected by "
                              f"{', '.join(d.kind for d in report.detections)} but memory "
                              f"is not the fault-free run's after recovery", repro)
    elif good:
        counts["masked"] += 1
        result.passed += 1
    else:
        counts["sdc"] += 1
        result.passed += 1
    return True


def run(ctx: SectionContext) -> SectionResult:
    """The ``recovery`` section (see the module docs)."""
    result = SectionResult("recovery")
    previous = ctx.options.get("previous") or {}
    counts = {k: 0 for k in ("trials", "recovered", "unrecovered", "masked", "sdc",
                             "context_lost", "not_injectable", "saved_bytes",
                             "written_allocation_bytes", "clobbered_bytes", "targets",
                             "invalid")}
    for key, value in previous.get("figures", {}).items():
        if key in counts:
            counts[key] = value
    result.passed = int(previous.get("passed", 0))
    for f in previous.get("failures", []):
        result.fail(f["case"], f["what"], f["reproducer"])
    total = int(ctx.options.get("trials") or (QUICK_TRIALS if ctx.quick else DEFAULT_TRIALS))
    cases = ctx.cases(random=False)
    if not ctx.options.get("cases") and ctx.quick:
        cases = cases[:QUICK_TRIALS]
    start = int(ctx.options.get("resume_at", 0))
    targets: dict[str, _Target | None] = {}
    checks: dict = {}
    t = start
    stopped = False
    while t < total and cases:
        if ctx.out_of_time():
            result.capped = True
            break
        case = cases[t % len(cases)]
        j = t // len(cases)
        if case.name not in targets:
            try:
                mat = materialize(ctx.root, case, driver_version=ctx.device.driver_version,
                                  arch=ctx.device.arch, seed=ctx.seed)
                targets[case.name] = _Target(ctx, mat)
                counts["targets"] += 1
            except (InvalidCase, KernelcheckError):
                targets[case.name] = None
                counts["invalid"] += 1
        target = targets[case.name]
        t += 1
        if target is None:
            continue
        if not _trial(ctx, target, j, checks, counts, result):
            stopped = True
            break
    for target in targets.values():
        if target is not None and not stopped:
            target.image.release()
    if stopped and t < total:
        result.figures["resume_at"] = t
    result.figures.update(counts)
    written = counts["written_allocation_bytes"]
    ratio = counts["saved_bytes"] / written if written else None
    floor = counts["clobbered_bytes"] / written if written else None
    result.figures["saved_ratio"] = ratio
    result.figures["saved_ratio_floor"] = floor
    detected = counts["recovered"] + counts["unrecovered"]
    share = (f"saved bytes {ratio:.1%} of written allocations (floor {floor:.1%}: the "
             f"oracle's clobbered bytes)" if ratio is not None else "no bytes written")
    result.summary = (f"{counts['trials']} faults planted by PTX rewrite in "
                      f"{counts['targets']} instances: {counts['recovered']} of {detected} "
                      f"detected recovered byte-exactly, {counts['masked']} masked, "
                      f"{counts['sdc']} undetected SDC, {counts['context_lost']} context "
                      f"lost; {share}")
    if counts["context_lost"]:
        result.notes.append(f"{counts['context_lost']} trials ended the device context (a "
                            f"sticky error); the recovery engine's CUDA device does not "
                            f"rebuild contexts, so these are detected but not recovered "
                            f"in process")
    if counts["sdc"]:
        result.notes.append(f"{counts['sdc']} faults changed memory without being detected "
                            f"(redundant execution compares re-runs of replayable "
                            f"instances only)")
    if result.capped:
        result.notes.append(f"time cap reached after {t} of {total} trials")
    return result.finish()
