"""Re-executable regions inside kernels: where the clobbers are, and where a block may resume.

:func:`kernel_regions` places region boundaries so that no region holds a clobber
antidependence on global memory, with as few boundaries as it can prove, and records the live
state each boundary saves. docs/regions.md explains the model with a worked example.
"""

from kernelcheck.regions.build import (
    FORMAT_VERSION,
    Boundary,
    KernelRegions,
    Region,
    kernel_regions,
)
from kernelcheck.regions.clobbers import Clobber, ClobberModel, GlobalAccess, clobber_model
from kernelcheck.regions.describe import format_regions

__all__ = ["FORMAT_VERSION", "Boundary", "KernelRegions", "Region", "kernel_regions",
           "Clobber", "ClobberModel", "GlobalAccess", "clobber_model", "format_regions"]
