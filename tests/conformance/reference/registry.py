"""The table of references: one function per conformance case that has no stored expectation.

A reference takes the case's inputs (:class:`Inputs`, the buffers and parameters of its launch
file as typed numpy arrays) and returns, for each output buffer it checks, the contents the
buffer must hold: a numpy array of the buffer's element type, or :class:`Expected` when a
tolerance applies. References are written from the PTX ISA text; they never call the emulator.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from kernelcheck.launchfile import LaunchSpec
from kernelcheck.launchfile.values import numpy_dtype

__all__ = ["REFERENCES", "FAILURES", "reference", "expect_failure", "Inputs", "Expected"]


@dataclass(frozen=True)
class Expected:
    """Expected contents with a tolerance (see kernelcheck.launchfile.compare).

    ``unspecified`` marks the elements whose value the ISA leaves undefined (e.g. integer
    division by zero, PTX ISA 9.7.1.8): they are not compared.
    """

    values: np.ndarray
    ulp: int = 0
    abs: float = 0.0
    rel: float = 0.0
    nan: str = "exact"
    unspecified: np.ndarray | None = None


ReferenceFunction = Callable[["Inputs"], dict[str, "np.ndarray | Expected"]]

#: case id ("group/name") -> reference
REFERENCES: dict[str, ReferenceFunction] = {}


def reference(case_id: str) -> Callable[[ReferenceFunction], ReferenceFunction]:
    """Register ``function`` as the reference of ``case_id``."""

    def register(function: ReferenceFunction) -> ReferenceFunction:
        if case_id in REFERENCES:
            raise ValueError(f"two references for {case_id}")
        REFERENCES[case_id] = function
        return function

    return register


#: case id -> text the kernel's failure must contain (cases whose launch must fail: trap)
FAILURES: dict[str, str] = {}


def expect_failure(case_id: str, text: str) -> None:
    """Record that running ``case_id`` must fail with an error naming ``text``."""
    if case_id in FAILURES or case_id in REFERENCES:
        raise ValueError(f"two expectations for {case_id}")
    FAILURES[case_id] = text


class Inputs:
    """A case's launch file seen by a reference: typed buffers, parameters, launch shape."""

    def __init__(self, spec: LaunchSpec) -> None:
        self.spec = spec

    def __getitem__(self, name: str) -> np.ndarray:
        buffer = self.spec.get_buffer(name)
        if buffer is None:
            raise KeyError(name)
        dtype = numpy_dtype(buffer.type) if buffer.type else np.dtype(np.uint8)
        return np.frombuffer(buffer.data, dtype=dtype).copy()

    @property
    def threads(self) -> int:
        grid, block = self.spec.grid, self.spec.block
        return int(np.prod(grid) * np.prod(block))

    def cross(self, *names: str) -> list[np.ndarray]:
        """Operands of the cross-product kernels: thread ``i`` takes ``a[i % na]``,
        ``b[(i / na) % nb]``, ``c[i / (na * nb)]`` (the layout of cases/*/ cross kernels)."""
        arrays = [self[n] for n in names]
        sizes = [len(a) for a in arrays]
        total = int(np.prod(sizes))
        index = np.arange(total)
        out = []
        stride = 1
        for array, size in zip(arrays, sizes, strict=True):
            out.append(array[(index // stride) % size])
            stride *= size
        return out
