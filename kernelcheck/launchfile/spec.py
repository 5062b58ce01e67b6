"""The launch file: one kernel launch described in JSON, read into frozen values.

A launch file names the grid, the block, the dynamic shared memory, the device buffers with
their initial contents, the kernel's parameters (scalars by PTX type, pointers by buffer
name), the buffers to read back after the launch and, optionally, the contents expected in
them. docs/launch-files.md describes the format (``"format": "kernelcheck-launch"``,
``"version": 1``) with examples.

Every problem is a :class:`LaunchFileError` that names the file and the JSON path of the bad
item (``buffers.a.values: value [3]: 300 does not fit u8``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from kernelcheck.errors import KernelcheckError
from kernelcheck.launchfile.values import (
    SCALAR_TYPES,
    LaunchValueError,
    encode_value,
    encode_values,
    type_width,
)

__all__ = [
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "LaunchFileError",
    "BufferSpec",
    "ParamSpec",
    "OutputSpec",
    "Expectation",
    "LaunchSpec",
    "load_launch_file",
    "parse_launch",
]

FORMAT_NAME = "kernelcheck-launch"
FORMAT_VERSION = 1

_TOP_KEYS = {"format", "version", "kernel", "grid", "block", "shared_bytes", "buffers",
             "params", "outputs", "expect", "comment"}
_BUFFER_KEYS = {"type", "values", "hex", "npy", "size", "count", "fill", "comment"}
_PARAM_KEYS = {"name", "buffer", "offset", "type", "value", "hex", "comment"}
_EXPECT_KEYS = {"type", "values", "hex", "npy", "ulp", "abs", "rel", "nan", "comment"}


class LaunchFileError(KernelcheckError):
    """A launch file that cannot be read or does not describe a launch."""


@dataclass(frozen=True, slots=True)
class BufferSpec:
    """A device buffer: its name, its initial bytes, and the element type people read it as."""

    name: str
    data: bytes
    type: str | None = None


@dataclass(frozen=True, slots=True)
class ParamSpec:
    """One kernel parameter.

    Exactly one of ``buffer`` (a pointer to the named buffer plus ``offset`` bytes),
    ``value`` (a scalar; ``type`` defaults to the parameter's declared PTX type) or ``raw``
    (the parameter's bytes, e.g. a struct passed by value) is set.
    """

    name: str | None = None
    buffer: str | None = None
    offset: int = 0
    type: str | None = None
    value: object = None
    raw: bytes | None = None


@dataclass(frozen=True, slots=True)
class OutputSpec:
    """A buffer read back after the launch, and the element type it is shown in."""

    buffer: str
    type: str | None = None


@dataclass(frozen=True, slots=True)
class Expectation:
    """The bytes a buffer must hold after the launch, and how closely.

    With no tolerance the comparison is bit for bit. ``ulp``, ``abs`` and ``rel`` accept a
    float element within that many units in the last place, that absolute error, or that
    relative error; ``nan="any"`` lets any NaN match any NaN.
    """

    buffer: str
    data: bytes
    type: str | None = None
    ulp: int = 0
    abs: float = 0.0
    rel: float = 0.0
    nan: str = "exact"


@dataclass(frozen=True, slots=True)
class LaunchSpec:
    """A whole launch file."""

    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    buffers: tuple[BufferSpec, ...] = ()
    params: tuple[ParamSpec, ...] | None = None
    named_params: tuple[tuple[str, ParamSpec], ...] = ()
    outputs: tuple[OutputSpec, ...] = ()
    expectations: tuple[Expectation, ...] = ()
    kernel: str | None = None
    shared_bytes: int = 0
    path: str | None = None

    def get_buffer(self, name: str) -> BufferSpec | None:
        for buffer in self.buffers:
            if buffer.name == name:
                return buffer
        return None


def load_launch_file(path: str | Path) -> LaunchSpec:
    """Read and check a launch file; ``.npy`` paths inside it are relative to its directory."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as error:
        raise LaunchFileError(f"{path}: cannot read launch file: {error.strerror}") from error
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise LaunchFileError(f"{path}:{error.lineno}:{error.colno}: not JSON: {error.msg}"
                              ) from error
    return parse_launch(document, base=path.parent, where=str(path))


def parse_launch(document: object, *, base: Path | None = None, where: str = "<launch>"
                 ) -> LaunchSpec:
    """Check a decoded launch document and turn it into a :class:`LaunchSpec`.

    >>> spec = parse_launch({"format": "kernelcheck-launch", "version": 1, "block": [32],
    ...                      "buffers": {"out": {"type": "u32", "count": 32}},
    ...                      "params": [{"buffer": "out"}]})
    >>> spec.block, spec.get_buffer("out").data[:4]
    ((32, 1, 1), b'\\x00\\x00\\x00\\x00')
    """
    reader = _Reader(where, base or Path("."))
    return reader.launch(document)


class _Reader:
    """Walks a launch document, keeping the file name for every error."""

    def __init__(self, where: str, base: Path) -> None:
        self.where = where
        self.base = base

    def fail(self, at: str, message: str) -> LaunchFileError:
        return LaunchFileError(f"{self.where}: {at}: {message}" if at else
                               f"{self.where}: {message}")

    # -- top level ----------------------------------------------------------------------

    def launch(self, document: object) -> LaunchSpec:
        if not isinstance(document, dict):
            raise self.fail("", "a launch file is a JSON object")
        if document.get("format") != FORMAT_NAME:
            raise self.fail("format", f"expected \"{FORMAT_NAME}\", found "
                            f"{document.get('format')!r}")
        if document.get("version") != FORMAT_VERSION:
            raise self.fail("version", f"this kernelcheck reads version {FORMAT_VERSION}, "
                            f"found {document.get('version')!r}")
        self.keys(document, _TOP_KEYS, "")
        kernel = document.get("kernel")
        if kernel is not None and not isinstance(kernel, str):
            raise self.fail("kernel", "must be a string")
        if "block" not in document:
            raise self.fail("", "missing \"block\" (threads per block)")
        grid = self.dims(document.get("grid", [1]), "grid")
        block = self.dims(document["block"], "block")
        shared = self.count(document.get("shared_bytes", 0), "shared_bytes", minimum=0)
        buffers = self.buffers(document.get("buffers", {}))
        names = {b.name for b in buffers}
        params, named = self.params(document.get("params", []), names)
        outputs = self.outputs(document.get("outputs"), buffers)
        expectations = self.expectations(document.get("expect", {}), buffers)
        shown = {o.buffer for o in outputs}
        outputs += tuple(OutputSpec(e.buffer, e.type) for e in expectations
                         if e.buffer not in shown)
        return LaunchSpec(grid=grid, block=block, buffers=buffers, params=params,
                          named_params=named, outputs=outputs, expectations=expectations,
                          kernel=kernel, shared_bytes=shared, path=self.where)

    def keys(self, obj: dict, allowed: set[str], at: str) -> None:
        unknown = sorted(set(obj) - allowed)
        if unknown:
            raise self.fail(at, f"unknown key {unknown[0]!r} (expected one of "
                            f"{', '.join(sorted(allowed))})")

    def dims(self, value: object, at: str) -> tuple[int, int, int]:
        if isinstance(value, int) and not isinstance(value, bool):
            value = [value]
        if not isinstance(value, list) or not 1 <= len(value) <= 3:
            raise self.fail(at, "expected 1 to 3 positive integers")
        dims = [self.count(v, f"{at}[{k}]", minimum=1) for k, v in enumerate(value)]
        return tuple(dims + [1] * (3 - len(dims)))  # type: ignore[return-value]

    def count(self, value: object, at: str, *, minimum: int) -> int:
        if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
            raise self.fail(at, f"expected an integer >= {minimum}, found {value!r}")
        return value

    def type_name(self, value: object, at: str) -> str:
        if value not in SCALAR_TYPES:
            raise self.fail(at, f"unknown type {value!r} (expected one of "
                            f"{', '.join(sorted(SCALAR_TYPES))})")
        return value  # type: ignore[return-value]

    # -- data ---------------------------------------------------------------------------

    def data(self, obj: dict, at: str, type_name: str | None) -> bytes | None:
        """The bytes given by ``values``, ``hex`` or ``npy`` (at most one), or None."""
        given = [k for k in ("values", "hex", "npy") if k in obj]
        if len(given) > 1:
            raise self.fail(at, f"give one of values, hex, npy (found {', '.join(given)})")
        if not given:
            return None
        key = given[0]
        if key == "values":
            if type_name is None:
                raise self.fail(at, "\"values\" needs a \"type\"")
            try:
                return encode_values(obj["values"], type_name)
            except LaunchValueError as error:
                raise self.fail(f"{at}.values", str(error)) from None
        if key == "hex":
            text = obj["hex"]
            if not isinstance(text, str):
                raise self.fail(f"{at}.hex", "must be a string of hex digits")
            try:
                return bytes.fromhex(text.replace("_", ""))
            except ValueError:
                raise self.fail(f"{at}.hex", "not a string of hex digit pairs") from None
        return self.npy(obj["npy"], f"{at}.npy")

    def npy(self, name: object, at: str) -> bytes:
        if not isinstance(name, str):
            raise self.fail(at, "must be a path (relative to the launch file)")
        path = self.base / name
        try:
            array = np.load(path, allow_pickle=False)
        except (OSError, ValueError) as error:
            raise self.fail(at, f"cannot read {path}: {error}") from None
        if array.dtype.byteorder == ">":
            array = array.astype(array.dtype.newbyteorder("<"))
        return np.ascontiguousarray(array).tobytes()

    def buffers(self, value: object) -> tuple[BufferSpec, ...]:
        if not isinstance(value, dict):
            raise self.fail("buffers", "must be an object mapping names to buffers")
        out = []
        for name, obj in value.items():
            at = f"buffers.{name}"
            if not isinstance(obj, dict):
                raise self.fail(at, "must be an object")
            self.keys(obj, _BUFFER_KEYS, at)
            type_name = self.type_name(obj["type"], f"{at}.type") if "type" in obj else None
            data = self.data(obj, at, type_name)
            size = None
            if "size" in obj and "count" in obj:
                raise self.fail(at, "give size or count, not both")
            if "size" in obj:
                size = self.count(obj["size"], f"{at}.size", minimum=1)
            if "count" in obj:
                if type_name is None:
                    raise self.fail(at, "\"count\" needs a \"type\"")
                size = self.count(obj["count"], f"{at}.count", minimum=1) * type_width(
                    type_name)
            fill = obj.get("fill", 0)
            if not isinstance(fill, int) or isinstance(fill, bool) or not 0 <= fill <= 255:
                raise self.fail(f"{at}.fill", f"expected a byte value 0..255, found {fill!r}")
            if data is None and size is None:
                raise self.fail(at, "give its contents (values, hex, npy) or its size "
                                "(size, count)")
            data = data or b""
            if size is not None:
                if len(data) > size:
                    raise self.fail(at, f"contents are {len(data)} bytes, more than its size "
                                    f"{size}")
                data += bytes([fill]) * (size - len(data))
            if not data:
                raise self.fail(at, "a buffer must hold at least one byte")
            out.append(BufferSpec(name, data, type_name))
        return tuple(out)

    # -- parameters ---------------------------------------------------------------------

    def params(self, value: object, buffers: set[str]
               ) -> tuple[tuple[ParamSpec, ...] | None, tuple[tuple[str, ParamSpec], ...]]:
        if isinstance(value, dict):
            named = tuple((str(k), self.param(v, f"params.{k}", buffers, str(k)))
                          for k, v in value.items())
            return None, named
        if not isinstance(value, list):
            raise self.fail("params", "must be a list (in order) or an object (by name)")
        return tuple(self.param(v, f"params[{k}]", buffers, None)
                     for k, v in enumerate(value)), ()

    def param(self, obj: object, at: str, buffers: set[str], name: str | None) -> ParamSpec:
        if not isinstance(obj, dict):
            raise self.fail(at, "must be an object: {\"buffer\": NAME}, {\"type\": T, "
                            "\"value\": V} or {\"hex\": BYTES}")
        self.keys(obj, _PARAM_KEYS, at)
        name = obj.get("name", name)
        kinds = [k for k in ("buffer", "value", "hex") if k in obj]
        if len(kinds) != 1:
            raise self.fail(at, "give exactly one of buffer, value, hex")
        if "buffer" in obj:
            if obj["buffer"] not in buffers:
                raise self.fail(f"{at}.buffer", f"no buffer named {obj['buffer']!r}")
            offset = obj.get("offset", 0)
            if not isinstance(offset, int) or isinstance(offset, bool):
                raise self.fail(f"{at}.offset", "must be an integer")
            return ParamSpec(name=name, buffer=obj["buffer"], offset=offset)
        if "hex" in obj:
            raw = self.data({"hex": obj["hex"]}, at, None)
            return ParamSpec(name=name, raw=raw)
        type_name = self.type_name(obj["type"], f"{at}.type") if "type" in obj else None
        if type_name is not None:
            try:
                encode_value(obj["value"], type_name)
            except LaunchValueError as error:
                raise self.fail(f"{at}.value", str(error)) from None
        return ParamSpec(name=name, type=type_name, value=obj["value"])

    # -- results ------------------------------------------------------------------------

    def outputs(self, value: object, buffers: tuple[BufferSpec, ...]) -> tuple[OutputSpec, ...]:
        by_name = {b.name: b for b in buffers}
        if value is None:
            return tuple(OutputSpec(b.name, b.type) for b in buffers)
        if not isinstance(value, list):
            raise self.fail("outputs", "must be a list of buffer names or objects")
        out = []
        for k, item in enumerate(value):
            at = f"outputs[{k}]"
            if isinstance(item, str):
                item = {"buffer": item}
            if not isinstance(item, dict):
                raise self.fail(at, "must be a buffer name or {\"buffer\": NAME, \"type\": T}")
            self.keys(item, {"buffer", "type", "comment"}, at)
            buffer = by_name.get(item.get("buffer"))  # type: ignore[arg-type]
            if buffer is None:
                raise self.fail(at, f"no buffer named {item.get('buffer')!r}")
            type_name = (self.type_name(item["type"], f"{at}.type") if "type" in item
                         else buffer.type)
            out.append(OutputSpec(buffer.name, type_name))
        return tuple(out)

    def expectations(self, value: object, buffers: tuple[BufferSpec, ...]
                     ) -> tuple[Expectation, ...]:
        by_name = {b.name: b for b in buffers}
        if not isinstance(value, dict):
            raise self.fail("expect", "must be an object mapping buffer names to contents")
        out = []
        for name, obj in value.items():
            at = f"expect.{name}"
            buffer = by_name.get(name)
            if buffer is None:
                raise self.fail(at, f"no buffer named {name!r}")
            if not isinstance(obj, dict):
                raise self.fail(at, "must be an object")
            self.keys(obj, _EXPECT_KEYS, at)
            type_name = (self.type_name(obj["type"], f"{at}.type") if "type" in obj
                         else buffer.type)
            data = self.data(obj, at, type_name)
            if data is None:
                raise self.fail(at, "give the expected contents (values, hex or npy)")
            if len(data) != len(buffer.data):
                raise self.fail(at, f"expected contents are {len(data)} bytes but the buffer "
                                f"holds {len(buffer.data)}")
            tolerance = {}
            for key in ("ulp", "abs", "rel"):
                if key in obj:
                    amount = obj[key]
                    if not isinstance(amount, int | float) or isinstance(amount, bool) \
                            or amount < 0:
                        raise self.fail(f"{at}.{key}", "must be a non-negative number")
                    tolerance[key] = amount
            if tolerance and type_name not in ("f16", "bf16", "f32", "f64"):
                raise self.fail(at, "ulp/abs/rel tolerances need a floating-point type")
            if "ulp" in tolerance and not isinstance(tolerance["ulp"], int):
                raise self.fail(f"{at}.ulp", "must be an integer")
            nan = obj.get("nan", "exact")
            if nan not in ("exact", "any"):
                raise self.fail(f"{at}.nan", "must be \"exact\" or \"any\"")
            out.append(Expectation(name, data, type_name, nan=nan, **tolerance))
        return tuple(out)
