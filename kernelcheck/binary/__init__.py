"""The binary front end: cubins, fatbins, host executables, and nvdisasm.

Layered as pyelftools is: raw records (:mod:`~kernelcheck.binary.nvinfo`,
:mod:`~kernelcheck.binary.fatbin`), containers (:mod:`~kernelcheck.binary.hostelf`), the
:class:`CubinFile` facade, the :func:`open_binary` entry point, and ``describe_*`` functions
for the command line. Every malformed input raises
:class:`~kernelcheck.errors.BinaryFormatError`.
"""

from kernelcheck.binary.cubin import CubinFile, CubinKernel, CubinSection
from kernelcheck.binary.demangle import demangle
from kernelcheck.binary.describe import describe_binary, describe_image, describe_kernel
from kernelcheck.binary.eiattr import EIATTR, EIATTR_NAMES, eiattr_name
from kernelcheck.binary.fatbin import FatbinEntry, FatbinFile, FatbinHeader, parse_fatbin
from kernelcheck.binary.image import (
    BinaryImage,
    EmbeddedImage,
    ImageOrigin,
    open_binary,
    sniff_kind,
)
from kernelcheck.binary.nvinfo import KernelParam, NvInfoRecord, ParamCbank, parse_nv_info

__all__ = [
    "BinaryImage",
    "CubinFile",
    "CubinKernel",
    "CubinSection",
    "EIATTR",
    "EIATTR_NAMES",
    "EmbeddedImage",
    "FatbinEntry",
    "FatbinFile",
    "FatbinHeader",
    "ImageOrigin",
    "KernelParam",
    "NvInfoRecord",
    "ParamCbank",
    "demangle",
    "describe_binary",
    "describe_image",
    "describe_kernel",
    "eiattr_name",
    "open_binary",
    "parse_fatbin",
    "parse_nv_info",
    "sniff_kind",
]
