"""A PTX program to launch: its text, its parsed module, and the kernel chosen.

Both backends need the kernel's ``.param`` list to pack parameters, so the PTX is parsed once
by kernelcheck's front end; the emulator then runs that parsed module, and the GPU backend
hands the original text to the driver.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kernelcheck.errors import KernelcheckError
from kernelcheck.ir.nodes import Function, Module
from kernelcheck.ptx.parser import parse_ptx

__all__ = ["PtxProgram", "load_program"]


@dataclass(frozen=True)
class PtxProgram:
    """PTX text, where it came from, its module, and the kernel to launch."""

    text: str
    filename: str
    module: Module
    kernel: Function

    def position(self, function: str, index: int) -> tuple[int, int] | None:
        """Line and column of instruction ``index`` of ``function``, when known."""
        found = self.module.get_function(function)
        if found is None or not 0 <= index < len(found.instructions):
            return None
        pos = found.instructions[index].pos
        return (pos.line, pos.column) if pos else None


def load_program(path: str | Path, kernel: str | None) -> PtxProgram:
    """Read and parse a PTX file and pick ``kernel`` (the only kernel when ``None``)."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as error:
        raise KernelcheckError(f"{path}: cannot read PTX file: {error.strerror}") from error
    except UnicodeDecodeError:
        raise KernelcheckError(f"{path}: not a PTX text file") from None
    return program_from_text(text, str(path), kernel)


def program_from_text(text: str, filename: str, kernel: str | None) -> PtxProgram:
    """Parse PTX text and pick ``kernel`` (the only kernel when ``None``)."""
    module = parse_ptx(text, filename)
    kernels = [f for f in module.functions if f.is_kernel and f.body is not None]
    names = ", ".join(f.name for f in kernels) or "none"
    if kernel is None:
        if len(kernels) != 1:
            raise KernelcheckError(f"{filename}: holds {len(kernels)} kernels ({names}); "
                                   f"name one with --kernel or \"kernel\" in the launch file")
        chosen = kernels[0]
    else:
        matches = [f for f in kernels if f.name == kernel]
        if not matches:
            raise KernelcheckError(f"{filename}: no kernel named {kernel!r} (kernels: "
                                   f"{names})")
        chosen = matches[0]
    return PtxProgram(text, filename, module, chosen)
