"""Kernel parameter buffers from values people (and test harnesses) write.

A kernel instance's parameters reach the LaunchCheck as the raw parameter buffer, laid out
by the CUDA ABI (each PTX ``.param`` at its byte offset). This module builds that buffer
from:

* a mapping ``name -> value`` where ``name`` is the PTX parameter name
  (``vec_add_param_0``) or its position ``p0``, ``p1``, ...;
* a sequence of values in declaration order;
* raw ``bytes`` (taken as the buffer itself).

A value is an ``int`` (two's complement in the parameter's size), a ``float`` (IEEE binary32
or binary64 by the parameter's size), or ``bytes`` (an aggregate, exactly its size).
:func:`parse_instance_text` reads the command-line form
``p0=0x7f3a00000000,p1=1024,p2=1.5,p3=hex:00ff...``.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence

from kernelcheck.errors import KernelcheckError
from kernelcheck.ir.nodes import Function

__all__ = ["InstanceInputError", "param_buffer", "parse_instance_text", "parse_dims"]


class InstanceInputError(KernelcheckError, ValueError):
    """A parameter name or value that does not fit the kernel's parameter list."""


def _resolve(function: Function, name: str):
    for index, param in enumerate(function.params):
        if name in (param.name, f"p{index}", f"param_{index}"):
            return param
    names = ", ".join(p.name for p in function.params) or "none"
    if len(names) > 200:
        names = names[:200] + "..."
    raise InstanceInputError(f"{function.name[:80]} has no parameter {name[:80]!r} "
                             f"(parameters: {names}, or p0..p{len(function.params) - 1})")


def _encode(function: Function, param, value) -> bytes:
    size = param.size
    if isinstance(value, bytes | bytearray):
        if len(value) != size:
            raise InstanceInputError(f"parameter {param.name} of {function.name} takes "
                                     f"{size} bytes, got {len(value)}")
        return bytes(value)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InstanceInputError(f"parameter {param.name}: expected an int, float or bytes, "
                                 f"got {type(value).__name__}")
    if isinstance(value, float):
        if size not in (4, 8):
            raise InstanceInputError(f"parameter {param.name} ({size} bytes) cannot hold "
                                     f"a float")
        if param.type.lstrip(".")[:1] in ("u", "s"):
            raise InstanceInputError(f"parameter {param.name} is an integer (.{param.type}): "
                                     f"got the float {value!r}")
        return struct.pack("<f" if size == 4 else "<d", value)
    if not -(1 << (8 * size - 1)) <= value < 1 << (8 * size):
        shown = str(value) if value.bit_length() <= 128 else f"a {value.bit_length()}-bit value"
        raise InstanceInputError(f"parameter {param.name}: {shown} does not fit in {size} "
                                 f"bytes")
    return (value % (1 << (8 * size))).to_bytes(size, "little")


def param_buffer(function: Function, values) -> bytes:
    """The parameter buffer of ``function`` holding ``values``.

    Parameters
    ----------
    function : Function
        The kernel (its ``params`` give names, offsets and sizes).
    values : Mapping[str, int | float | bytes] or Sequence or bytes
        By name (PTX name or ``pK``), in declaration order, or the raw buffer. Every
        parameter must be given (a missing pointer silently read as 0 would decide a
        different instance).

    Returns
    -------
    bytes
        ``function.param_size`` bytes.

    Raises
    ------
    InstanceInputError
        Unknown name, missing parameter, or a value that does not fit.
    """
    if isinstance(values, bytes | bytearray):
        if len(values) < function.param_size:
            raise InstanceInputError(f"{function.name} takes a {function.param_size}-byte "
                                     f"parameter buffer, got {len(values)} bytes")
        return bytes(values)
    buf = bytearray(function.param_size)
    given: dict[str, object] = {}
    if isinstance(values, Mapping):
        for name, value in values.items():
            given[_resolve(function, str(name)).name] = value
    elif isinstance(values, Sequence) and not isinstance(values, str):
        if len(values) != len(function.params):
            raise InstanceInputError(f"{function.name} takes {len(function.params)} "
                                     f"parameters, got {len(values)} values")
        given = {p.name: v for p, v in zip(function.params, values, strict=True)}
    else:
        raise InstanceInputError("parameters must be a mapping, a sequence or bytes")
    missing = [p.name for p in function.params if p.name not in given]
    if missing:
        raise InstanceInputError(f"no value for {', '.join(missing)} of {function.name}")
    for param in function.params:
        buf[param.offset:param.offset + param.size] = _encode(function, param,
                                                              given[param.name])
    return bytes(buf)


#: Longest value text accepted (a 64-byte aggregate in hex is 132 characters).
_MAX_VALUE_TEXT = 4096


def _value(text: str, key: str):
    text = text.strip()
    if len(text) > _MAX_VALUE_TEXT:
        raise InstanceInputError(f"malformed value for {key}: {len(text)} characters "
                                 f"(at most {_MAX_VALUE_TEXT})")
    try:
        if text.lower().startswith("hex:"):
            return bytes.fromhex(text[4:])
        if text.lower().startswith(("0x", "-0x", "0b", "0o")) or text.lstrip("-").isdigit():
            return int(text, 0)
        return float(text)
    except ValueError:
        raise InstanceInputError(f"malformed value for {key}: {text!r} (expected an integer "
                                 f"such as 0x7f3a00000000 or 1024, a float, or hex:<bytes>)"
                                 ) from None


def parse_instance_text(text: str) -> dict[str, int | float | bytes]:
    """Parse ``name=value,name=value`` into a mapping for :func:`param_buffer`.

    Examples
    --------
    >>> parse_instance_text("p0=0x10,p1=hex:0a0b,n=3")
    {'p0': 16, 'p1': b'\\n\\x0b', 'n': 3}
    """
    out: dict[str, int | float | bytes] = {}
    for item in text.split(","):
        if not item.strip():
            continue
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise InstanceInputError(f"malformed instance item {item.strip()!r} "
                                     f"(expected name=value)")
        if key in out:
            raise InstanceInputError(f"parameter {key} given twice")
        out[key] = _value(value, key)
    return out


#: The CUDA launch limits every architecture kernelcheck reads has (CUDA C++ Programming
#: Guide, "Features and Technical Specifications": grid x < 2^31, y and z <= 65535; block
#: x and y <= 1024, z <= 64, at most 1024 threads).
GRID_LIMITS = (2**31 - 1, 65535, 65535)
BLOCK_LIMITS = (1024, 1024, 64)
MAX_THREADS_PER_BLOCK = 1024


def parse_dims(text: str, what: str) -> tuple[int, int, int]:
    """``"4"`` or ``"4,2"`` or ``"4,2,1"`` as ``(x, y, z)``, within CUDA's launch limits.

    ``what`` is ``--grid`` or ``--block`` (the limits of a block apply to ``--block``).

    Examples
    --------
    >>> parse_dims("4,2", "--grid")
    (4, 2, 1)
    """
    parts = [p.strip() for p in text.split(",")]
    if len(text) > 64:
        raise InstanceInputError(f"malformed {what} (expected x[,y[,z]] of positive "
                                 f"integers, got {len(text)} characters)")
    try:
        dims = [int(p, 0) for p in parts]
    except ValueError:
        raise InstanceInputError(f"malformed {what} {text!r} (expected x[,y[,z]] of "
                                 f"positive integers)") from None
    if not 1 <= len(dims) <= 3 or any(d <= 0 for d in dims):
        raise InstanceInputError(f"malformed {what} {text!r} (expected x[,y[,z]] of "
                                 f"positive integers)")
    dims += [1] * (3 - len(dims))
    limits = BLOCK_LIMITS if what == "--block" else GRID_LIMITS
    for axis, value, limit in zip("xyz", dims, limits, strict=True):
        if value > limit:
            raise InstanceInputError(f"{what} {text}: {axis} = {value} is past CUDA's limit "
                                     f"of {limit}")
    if what == "--block" and dims[0] * dims[1] * dims[2] > MAX_THREADS_PER_BLOCK:
        raise InstanceInputError(f"{what} {text}: {dims[0] * dims[1] * dims[2]} threads, "
                                 f"more than CUDA's {MAX_THREADS_PER_BLOCK} per block")
    return tuple(dims)  # type: ignore[return-value]
