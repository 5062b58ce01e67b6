"""Verdict providers: the static analysis as a function of one kernel instance.

:func:`verdict_provider` analyses every kernel of a PTX module once and returns
``provider(kernel, params, grid, block, allocations=None) -> verdict``, the form the
emulator's soundness harness (:mod:`kernelcheck.emu.soundness`) and other consumers call.
The verdict is ``idempotent``, ``not_idempotent`` or ``not_proven``, from the kernel's
LaunchCheck.

Parameters may be given as raw bytes, a list in declaration order, or a mapping keyed by
PTX name (``vec_add_param_0``), position (``p0``) or, when ``source_names`` gives the CUDA
signature's names for the kernel, by those names. A value is an int, a float, bytes, or (for
a struct passed by value) a list of ``(byte_offset, size, value)`` triples.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Callable, Mapping, Sequence

from kernelcheck.analysis.summary import KernelSummary, analyze_kernel
from kernelcheck.ir.nodes import Function, Module
from kernelcheck.launch.evaluate import evaluate
from kernelcheck.launch.params import InstanceInputError, param_buffer

__all__ = ["verdict_provider", "instance_params"]


def _field_bytes(function: Function, param, value) -> bytes | object:
    if isinstance(value, list | tuple) and value and isinstance(value[0], list | tuple):
        raw = bytearray(param.size)
        for offset, size, v in value:
            if isinstance(v, float):
                v = int.from_bytes(struct.pack("<f" if size == 4 else "<d", v), "little")
            raw[offset:offset + size] = (int(v) % (1 << (8 * size))).to_bytes(size, "little")
        return bytes(raw)
    return value


def instance_params(function: Function, params, source_names: Sequence[str] | None = None
                    ) -> bytes:
    """The parameter buffer of ``function`` for ``params`` (see the module documentation).

    Raises
    ------
    InstanceInputError
        A name that is neither a PTX name, a position nor a source name, or a bad value.
    """
    if isinstance(params, bytes | bytearray):
        return param_buffer(function, params)
    if isinstance(params, Mapping):
        by_ptx = {}
        for key, value in params.items():
            name = str(key)
            if source_names is not None and name in source_names and not any(
                    name == p.name for p in function.params):
                name = f"p{list(source_names).index(name)}"
            by_ptx[name] = value
        params = by_ptx
        converted = {}
        for index, param in enumerate(function.params):
            for key in (param.name, f"p{index}"):
                if key in params:
                    converted[key] = _field_bytes(function, param, params[key])
        unknown = [k for k in params if k not in converted]
        if unknown:
            converted.update({k: params[k] for k in unknown})  # param_buffer names them
        return param_buffer(function, converted)
    values = [_field_bytes(function, p, v) for p, v in zip(function.params, params,
                                                           strict=False)]
    if len(params) != len(function.params):
        values = list(params)
    return param_buffer(function, values)


def verdict_provider(module_or_path: Module | str | os.PathLike,
                     source_names: Mapping[str, Sequence[str]] | None = None
                     ) -> Callable[..., str]:
    """A function deciding instances of the kernels of a PTX module.

    Parameters
    ----------
    module_or_path : Module or path
        A parsed PTX module, or the path of a ``.ptx`` file.
    source_names : mapping of kernel name to parameter names, optional
        CUDA parameter names in signature order, so ``params`` may use them.

    Returns
    -------
    callable
        ``provider(kernel, params, grid, block, allocations=None) -> str``. ``kernel`` is
        the PTX entry name. ``provider.summaries`` maps each kernel to its
        :class:`~kernelcheck.analysis.summary.KernelSummary`.

    Examples
    --------
    >>> from kernelcheck.ptx.parser import parse_ptx
    >>> m = parse_ptx(".version 8.0\\n.target sm_80\\n.address_size 64\\n"
    ...     ".visible .entry k(.param .u64 k_param_0) { .reg .b64 %rd<3>;"
    ...     " ld.param.u64 %rd1, [k_param_0]; cvta.to.global.u64 %rd2, %rd1;"
    ...     " st.global.u32 [%rd2], 7; ret; }")
    >>> verdict_provider(m)("k", {"p0": 0x7f0000000000}, (1, 1, 1), (32, 1, 1))
    'idempotent'
    """
    if isinstance(module_or_path, Module):
        module = module_or_path
    else:
        from kernelcheck.ptx.parser import parse_ptx_file

        module = parse_ptx_file(module_or_path)
    summaries: dict[str, KernelSummary] = {}
    functions = {k.name: k for k in module.kernels}
    names = dict(source_names or {})

    def provider(kernel: str, params, grid, block, allocations=None) -> str:
        function = functions.get(kernel)
        if function is None:
            raise InstanceInputError(f"no kernel named {kernel!r} in the module "
                                     f"(kernels: {', '.join(sorted(functions)) or 'none'})")
        summary = summaries.get(kernel)
        if summary is None:
            summary = summaries[kernel] = analyze_kernel(module, function)
        buf = instance_params(function, params, names.get(kernel))
        allocs = None if allocations is None else tuple(tuple(a) for a in allocations)
        grid3 = tuple(grid) + (1,) * (3 - len(grid))
        block3 = tuple(block) + (1,) * (3 - len(block))
        return evaluate(summary.launch_check, buf, grid3, block3, allocs or None).verdict

    provider.summaries = summaries  # type: ignore[attr-defined]
    return provider
