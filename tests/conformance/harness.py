"""Find, run and judge the conformance cases.

A case is ``cases/<group>/<name>.ptx`` with ``<name>.launch.json`` beside it. What its output
buffers must hold comes from the launch file's ``expect`` (hand-checked constants, or values
computed by gcc for the cases under cases/cuda) and/or from the reference registered for
``<group>/<name>`` (reference/*.py); a case with neither is an error, not a pass. A case
registered with ``expect_failure`` (a kernel that executes ``trap``) must instead end in a
launch failure naming the given text.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from kernelcheck.launchfile import (
    Expectation,
    LaunchFailed,
    LaunchSpec,
    Mismatch,
    check_expectation,
    load_launch_file,
    load_program,
    run_launch,
)
from kernelcheck.launchfile.values import type_width
from tests.conformance import reference as reference_package
from tests.conformance.reference.registry import FAILURES, REFERENCES, Expected, Inputs

CASES = Path(__file__).resolve().parent / "cases"


@dataclass(frozen=True)
class Case:
    group: str
    name: str
    ptx: Path
    launch: Path

    @property
    def id(self) -> str:
        return f"{self.group}/{self.name}"


def discover_cases() -> list[Case]:
    """Every case under cases/, sorted by group and name.

    ``<name>.launch.json`` runs ``<name>.ptx``; when several launch files share one module
    (the CUDA C cases: ``integers.hash32_k.launch.json``), the PTX is ``<module>.ptx``.
    """
    cases = []
    for launch in sorted(CASES.glob("*/*.launch.json")):
        name = launch.name[: -len(".launch.json")]
        ptx = launch.with_name(f"{name}.ptx")
        if not ptx.exists() and "." in name:
            ptx = launch.with_name(f"{name.split('.', 1)[0]}.ptx")
        cases.append(Case(launch.parent.name, name, ptx, launch))
    return cases


def load_references() -> dict:
    """Import every reference module (each registers its functions) and return the table."""
    for module in pkgutil.iter_modules(reference_package.__path__):
        importlib.import_module(f"{reference_package.__name__}.{module.name}")
    return REFERENCES


def expectations(case: Case, spec: LaunchSpec) -> list[tuple[Expectation, np.ndarray | None]]:
    """The launch file's expectations plus the reference's, each with the mask of elements
    left unspecified (or None)."""
    found: list[tuple[Expectation, np.ndarray | None]] = [(e, None) for e in spec.expectations]
    function = load_references().get(case.id)
    if function is not None:
        for name, expected in function(Inputs(spec)).items():
            found.append(_from_reference(case, spec, name, expected))
    if not found:
        raise AssertionError(f"{case.id}: no expectation in the launch file and no reference")
    return found


def run_case(case: Case) -> list[Mismatch]:
    """Run the case on the emulator and return every element that is not as expected."""
    spec = load_launch_file(case.launch)
    load_references()
    if case.id in FAILURES:
        return _run_failing(case, spec, FAILURES[case.id])
    checks = expectations(case, spec)
    program = load_program(case.ptx, spec.kernel)
    outputs = run_launch(program, spec, "emulator")
    mismatches = []
    for expectation, unspecified in checks:
        found = outputs[expectation.buffer]
        if unspecified is not None:
            expectation = _ignoring(expectation, unspecified, found)
        mismatches += check_expectation(expectation, found)
    return mismatches


def _run_failing(case: Case, spec: LaunchSpec, text: str) -> list[Mismatch]:
    """A case whose kernel must fail (trap): the launch must end in an error naming ``text``."""
    program = load_program(case.ptx, spec.kernel)
    try:
        run_launch(program, spec, "emulator")
    except LaunchFailed as error:
        if text in str(error):
            return []
        return [Mismatch("<launch>", 0, 0, f"a failure naming {text!r}", str(error))]
    return [Mismatch("<launch>", 0, 0, f"a failure naming {text!r}", "the kernel completed")]


def _ignoring(expectation: Expectation, unspecified: np.ndarray, found: bytes) -> Expectation:
    """``expectation`` with the unspecified elements taken from what was found."""
    width = len(expectation.data) // len(unspecified)
    data = bytearray(expectation.data)
    for index in np.flatnonzero(unspecified):
        data[index * width:(index + 1) * width] = found[index * width:(index + 1) * width]
    return replace(expectation, data=bytes(data))


def _from_reference(case: Case, spec: LaunchSpec, name: str, expected
                    ) -> tuple[Expectation, np.ndarray | None]:
    buffer = spec.get_buffer(name)
    if buffer is None:
        raise AssertionError(f"{case.id}: the reference checks {name!r}, not a buffer")
    if not any(o.buffer == name for o in spec.outputs):
        raise AssertionError(f"{case.id}: the reference checks {name!r}, not an output")
    tolerance = {}
    unspecified = None
    if isinstance(expected, Expected):
        tolerance = dict(ulp=expected.ulp, abs=expected.abs, rel=expected.rel, nan=expected.nan)
        unspecified = expected.unspecified
        expected = expected.values
    values = np.ascontiguousarray(expected)
    if buffer.type is not None and values.dtype.itemsize != type_width(buffer.type):
        raise AssertionError(f"{case.id}: the reference gives {name} as {values.dtype}, the "
                             f"buffer holds {buffer.type}")
    data = values.tobytes()
    if len(data) != len(buffer.data):
        raise AssertionError(f"{case.id}: the reference gives {len(data)} bytes of {name}, "
                             f"the buffer holds {len(buffer.data)}")
    if unspecified is not None and len(unspecified) != len(values):
        raise AssertionError(f"{case.id}: the unspecified mask of {name} has the wrong length")
    return Expectation(name, data, buffer.type, **tolerance), unspecified
