"""Kernel parameters of a launch file, packed against the kernel's ``.param`` list.

Every backend passes the same bytes: one little-endian value per parameter, sized by the
parameter's declaration (PTX ISA 5.1.6.1 "Kernel Function Parameters"). A pointer is the
device address of a buffer plus an offset; a scalar without a ``type`` takes the declared
type of its parameter.
"""

from __future__ import annotations

from collections.abc import Mapping

from kernelcheck.ir.nodes import Function, Param
from kernelcheck.launchfile.spec import LaunchFileError, LaunchSpec, ParamSpec
from kernelcheck.launchfile.values import SCALAR_TYPES, LaunchValueError, encode_value

__all__ = ["param_values", "param_buffer"]


def param_values(spec: LaunchSpec, function: Function, addresses: Mapping[str, int]
                 ) -> list[bytes]:
    """The bytes of each parameter of ``function``, in declaration order.

    ``addresses`` maps buffer names to their device addresses on the backend in use.
    """
    where = spec.path or "<launch>"
    declared = function.params
    if spec.params is not None:
        if len(spec.params) != len(declared):
            names = ", ".join(p.name for p in declared) or "none"
            raise LaunchFileError(f"{where}: params: kernel {function.name} takes "
                                  f"{len(declared)} parameters ({names}), the launch file "
                                  f"gives {len(spec.params)}")
        pairs = list(zip(spec.params, declared, strict=True))
        labels = [f"params[{k}]" for k in range(len(declared))]
    else:
        given = dict(spec.named_params)
        unknown = sorted(set(given) - {p.name for p in declared})
        if unknown:
            raise LaunchFileError(f"{where}: params.{unknown[0]}: kernel {function.name} has "
                                  f"no parameter of that name")
        missing = [p.name for p in declared if p.name not in given]
        if missing:
            raise LaunchFileError(f"{where}: params: no value for parameter {missing[0]} of "
                                  f"kernel {function.name}")
        pairs = [(given[p.name], p) for p in declared]
        labels = [f"params.{p.name}" for p in declared]
    return [_pack(item, param, addresses, f"{where}: {label}")
            for (item, param), label in zip(pairs, labels, strict=True)]


def param_buffer(function: Function, values: list[bytes]) -> bytes:
    """The whole parameter buffer: each value at its parameter's offset."""
    buffer = bytearray(function.param_size)
    for param, value in zip(function.params, values, strict=True):
        buffer[param.offset:param.offset + len(value)] = value
    return bytes(buffer)


def _pack(item: ParamSpec, param: Param, addresses: Mapping[str, int], where: str) -> bytes:
    size = param.size
    if item.name is not None and item.name != param.name:
        raise LaunchFileError(f"{where}: named {item.name!r} but the kernel's parameter is "
                              f"{param.name}")
    if item.raw is not None:
        if len(item.raw) != size:
            raise LaunchFileError(f"{where}: {len(item.raw)} bytes given for parameter "
                                  f"{param.name}, which takes {size}")
        return item.raw
    if item.buffer is not None:
        if size not in (4, 8):
            raise LaunchFileError(f"{where}: parameter {param.name} is .{param.type} "
                                  f"({size} bytes) and cannot hold a pointer")
        address = addresses[item.buffer] + item.offset
        return (address & ((1 << (8 * size)) - 1)).to_bytes(size, "little")
    type_name = item.type or param.type
    if type_name not in SCALAR_TYPES:
        raise LaunchFileError(f"{where}: parameter {param.name} is declared .{param.type}; "
                              f"give its bytes with \"hex\" or a \"type\"")
    try:
        data = encode_value(item.value, type_name)
    except LaunchValueError as error:
        raise LaunchFileError(f"{where}: {error}") from None
    if len(data) != size:
        raise LaunchFileError(f"{where}: parameter {param.name} is .{param.type} ({size} "
                              f"bytes) but the value is {type_name} ({len(data)} bytes)")
    return data
