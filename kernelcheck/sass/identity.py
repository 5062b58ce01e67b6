"""Which kernels of a cubin are the same code as kernels elsewhere: a content key per kernel.

A library holds the same kernel many times over: a template instantiated in several
translation units (cub's ``EmptyKernel`` is in 452 images of libtorch_cuda.so), or
instantiations whose template arguments do not change the machine code. The SASS analysis
of a kernel reads nothing but what :func:`kernelcheck.sass.loader.functions_of_cubin` builds
its IR from, so two kernels with equal inputs there have the same analysis up to their
names, and one analysis can answer for both (:mod:`kernelcheck.sharing`).

:func:`kernel_keys` hashes, for each kernel, exactly those inputs, with the kernel's own
name replaced by a placeholder wherever a symbol holds it as a whole part
(:func:`symbol_pattern`: its local subroutines are named after it):

* the architecture, the bytes of its ``.text`` section and the relocations applied to it
  (offset, type, symbol, addend: nvdisasm prints the symbols in the code);
* the code symbols inside the section (subroutines and labels), its parameter layout
  (EIATTR_KPARAM_INFO, the parameter bank offset and size), its indirect branch tables and
  its constant bank 2 words;
* the same, recursively, for every other function the kernel's relocations name (the
  callees the analysis may inline or summarise).

The image's constant bank 4 (the addresses of functions and variables its loader fills
in, which code reads as ``c[0x4][...]``) is the image's, not the kernel's: nearly every
image of a library has one. It is left out of the key; :func:`bank4_digest` hashes it (with
the code of the functions it names), and :func:`reads_module_bank` says whether a parsed
kernel reads it, so a kernel that does is shared only with kernels whose images have the
same digest.

An image built with line information gets no keys: records carry source lines, and those
are the image's, not the code's.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

from kernelcheck.binary.cubin import CubinFile
from kernelcheck.ir.nodes import (
    BracketList,
    ConstantRef,
    Function,
    ModifiedOperand,
    ParenList,
    VectorOperand,
)
from kernelcheck.sass.calls import BRANCH_TARGETS_DIRECTIVE
from kernelcheck.sass.loader import (
    bank2_words,
    bank_functions,
    bank_objects,
    has_line_info,
    local_code_symbols,
)

__all__ = ["kernel_keys", "bank4_digest", "reads_module_bank", "symbol_pattern"]

_PLACEHOLDER = "\x00kernel\x00"


def kernel_keys(cubin: CubinFile) -> dict[str, str]:
    """``{kernel name: key}`` for the kernels of ``cubin`` (none with line information).

    Two kernels, in this image or another, have the same key only when the SASS loader
    builds the same IR for them, up to their names (see the module documentation).

    >>> data = open("fixtures/cubin/sm_90/elementwise.cubin", "rb").read()
    >>> kernel_keys(CubinFile(data))  # built with -lineinfo
    {}
    >>> plain = CubinFile(data.replace(b".debug_line", b".debug_lime"))
    >>> keys = kernel_keys(plain)
    >>> len(keys) == plain.num_kernels == len(set(keys.values()))
    True
    """
    if has_line_info(cubin):
        return {}
    symbols = local_code_symbols(cubin)
    functions = {name for name, _, kind, _ in cubin.symbols if kind == "STT_FUNC"}
    keys = {}
    for kernel in cubin.iter_kernels():
        parts = [cubin.arch, repr(kernel.params), kernel.param_base, kernel.param_size,
                 [record.payload for record in kernel.find(BRANCH_TARGETS_DIRECTIVE)]]
        parts += _code(cubin, [kernel.name], functions, symbols, kernel.name)
        keys[kernel.name] = hashlib.sha256(repr(parts).encode()).hexdigest()
    return keys


def bank4_digest(cubin: CubinFile) -> str:
    """A hash of the image's constant bank 4 tables (function and variable addresses) and
    of the code of the functions they name."""
    functions = {name for name, _, kind, _ in cubin.symbols if kind == "STT_FUNC"}
    tables = (bank_functions(cubin), bank_objects(cubin))
    parts = [repr(tables)] + _code(cubin, [name for _, _, name in tables[0]], functions,
                                   local_code_symbols(cubin), None)
    return hashlib.sha256(repr(parts).encode()).hexdigest()


def reads_module_bank(functions: Iterable[Function]) -> bool:
    """Whether any of the parsed SASS ``functions`` reads a constant bank other than the
    parameters' (bank 0) and its own constants (bank 2), or a bank chosen by a register."""
    for function in functions:
        for instr in function.instructions:
            pending = list(instr.operands)
            while pending:
                operand = pending.pop()
                if isinstance(operand, ConstantRef):
                    if operand.bank not in (0, 2):
                        return True
                elif isinstance(operand, ModifiedOperand):  # -c[0x4][0x10], c[..].H1
                    pending.append(operand.operand)
                elif isinstance(operand, (VectorOperand, ParenList, BracketList)):
                    pending.extend(operand.elements)
    return False


def symbol_pattern(name: str) -> str:
    """A regular expression for ``name`` as a whole symbol, or a whole part of one between
    ``$`` or ``.`` separators (``$vec_add$__internal_0``), never inside a longer identifier
    (``add`` is not in ``address``)."""
    return rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])"


def _code(cubin: CubinFile, names: list[str], functions: set[str],
          symbols: dict[str, dict[str, int]], kernel: str | None) -> list:
    """The code of the functions ``names`` and of every function their relocations name,
    with ``kernel``'s name replaced by a placeholder."""
    own = re.compile(symbol_pattern(kernel)) if kernel else None

    def plain(text: str) -> str:
        return own.sub(_PLACEHOLDER, text) if own else text

    parts = []
    pending = list(dict.fromkeys(names))
    seen = set(pending)
    while pending:
        name = pending.pop()
        section = f".text.{name}"
        relocations = cubin.relocations(section)
        parts.append((plain(name), cubin.section_data(section),
                      [(o, t, plain(s), a) for o, t, s, a in relocations],
                      sorted((plain(s), offset)
                             for s, offset in symbols.get(section, {}).items()),
                      bank2_words(cubin, name)))
        for _, _, symbol, _ in relocations:
            if symbol in functions and symbol not in seen:
                seen.add(symbol)
                pending.append(symbol)
    return parts
