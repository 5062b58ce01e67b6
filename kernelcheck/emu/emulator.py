"""The public face of the emulator: device memory, module loading and kernel launches.

Examples
--------
>>> import numpy as np
>>> from kernelcheck.emu import Emulator
>>> emu = Emulator()
>>> ptx = '''
... .version 8.0
... .target sm_80
... .address_size 64
... .visible .entry twice(.param .u64 p, .param .u32 n)
... {
...   .reg .pred %p<2>; .reg .b32 %r<4>; .reg .b64 %rd<4>;
...   ld.param.u64 %rd1, [p]; ld.param.u32 %r1, [n];
...   mov.u32 %r2, %tid.x;
...   setp.ge.u32 %p1, %r2, %r1;
...   @%p1 bra DONE;
...   mul.wide.u32 %rd2, %r2, 4; add.s64 %rd3, %rd1, %rd2;
...   ld.global.u32 %r3, [%rd3]; shl.b32 %r3, %r3, 1; st.global.u32 [%rd3], %r3;
... DONE:
...   ret;
... }
... '''
>>> buf = emu.alloc(16)
>>> emu.copy_htod(buf, np.arange(4, dtype=np.uint32))
>>> result = emu.launch(emu.load_module(ptx), "twice", grid=(1, 1, 1), block=(8, 1, 1),
...                     params=[buf, 4], trace=True)
>>> emu.copy_dtoh(buf, 16, np.uint32)
array([0, 2, 4, 6], dtype=uint32)
>>> result.trace.verdict
'not_idempotent'
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from kernelcheck.emu.compiler import (
    INTERNAL_ERRORS,
    CompiledFunction,
    compile_function,
    function_where,
)
from kernelcheck.emu.executor import Batch, BitFlip, StepLimitReached, run_kernel
from kernelcheck.emu.memory import DeviceMemory
from kernelcheck.emu.trace import InstanceTrace, Tracer
from kernelcheck.errors import KernelcheckError, UnsupportedFeature
from kernelcheck.ir.nodes import Expression, Function, Immediate, Module, Symbol, VariableDecl

__all__ = ["Emulator", "Program", "LaunchResult", "pack_params"]

#: Lanes run together in one batch at most (whole blocks; at least one block).
DEFAULT_MAX_LANES = 1 << 16


@dataclass(frozen=True, slots=True)
class LaunchResult:
    """The outcome of a launch: counts, whether it was cut short, and the trace if asked."""

    kernel: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    thread_instructions: int
    steps: int
    completed: bool
    trace: InstanceTrace | None = None
    fault_injected: bool = False


class Program:
    """A module loaded on an emulated device: variables placed, functions compiled."""

    def __init__(self, module: Module, memory: DeviceMemory) -> None:
        if module.address_size == 32 and getattr(memory, "address_size", 64) != 32:
            # Its pointers are 32 bits: a 64-bit device address would be cut.
            raise UnsupportedFeature(
                ".address_size 32 on an emulated device with 64-bit addresses (use "
                "Emulator(address_size=32))", module.filename or "")
        self.module = module
        self.symbols: dict[str, tuple[str, int]] = {}
        #: function name -> the variables its body declares in .shared, .global, .const.
        self.function_symbols: dict[str, dict[str, tuple[str, int]]] = {}
        self.static_shared = 0
        try:
            self._place_variables(memory)
        except INTERNAL_ERRORS as err:
            raise UnsupportedFeature(f"module variables ({type(err).__name__}: {err})") \
                from None
        self._compiled: dict[str, CompiledFunction] = {}
        self._local = 0
        self.kernel_name = ""
        for function in module.functions:
            if function.body is not None:
                try:
                    self._compile(function)
                except INTERNAL_ERRORS as err:
                    # the instructions are checked one by one (with their position); this is
                    # the rest of the function: declarations, labels, parameters
                    raise UnsupportedFeature(f"function {function.name} "
                                             f"({type(err).__name__}: {err})",
                                             function_where(function)) from None

    @property
    def local_size(self) -> int:
        return self._local

    def _compile(self, function: Function) -> CompiledFunction:
        symbols = self.symbols
        own = self.function_symbols.get(function.name)
        if own:
            symbols = {**symbols, **own}
        cf = compile_function(function, symbols, self.module, self._local)
        self._local = max(self._local, cf.local_size)
        self._compiled[function.name] = cf
        return cf

    def compiled_functions(self) -> tuple[CompiledFunction, ...]:
        """Every compiled function of the module (kernels and device functions)."""
        return tuple(self._compiled.values())

    def function(self, name: str, instr=None) -> CompiledFunction:
        """The compiled function ``name``."""
        cf = self._compiled.get(name)
        if cf is None:
            where = f"call at instruction {instr.index}" if instr is not None else ""
            raise UnsupportedFeature(f"function {name} has no body in this module", where)
        return cf

    def _place_variables(self, memory: DeviceMemory) -> None:
        """Place the module's variables, and the ``.shared``, ``.global`` and ``.const``
        variables declared inside function bodies (one instance per launch, as for module
        variables; visible only in their function, so they go to :attr:`function_symbols`)."""
        shared = 0
        extern_shared: list[tuple[VariableDecl, dict]] = []
        decls: list[tuple[VariableDecl, dict]] = [(v, self.symbols)
                                                  for v in self.module.variables]
        for function in self.module.functions:
            table = self.function_symbols.setdefault(function.name, {})
            decls += [(v, table) for v in function.local_variables
                      if v.space in ("shared", "global", "const")]
        for var, table in decls:
            if var.space in ("global", "const"):
                size = var.size or var.element_size
                addr = memory.alloc(size, name=var.name)
                table[var.name] = (var.space, addr)
            elif var.space == "shared":
                if var.size is None or "extern" in var.attributes and not var.size:
                    extern_shared.append((var, table))
                    continue
                align = var.align or max(1, var.element_size)
                shared = (shared + align - 1) // align * align
                table[var.name] = ("shared", shared)
                shared += var.size
        shared = (shared + 15) // 16 * 16
        for var, table in extern_shared:
            table[var.name] = ("shared", shared)
        self.static_shared = shared
        for var, table in decls:
            if var.space in ("global", "const") and var.initializer:
                memory.copy_htod(table[var.name][1], self._initial_bytes(var, table))

    def _initial_bytes(self, var: VariableDecl, table: dict | None = None) -> bytes:
        from kernelcheck.emu.values import immediate_value
        symbols = {**self.symbols, **(table or {})}
        size = var.size or var.element_size
        base = var.type.lstrip(".")
        width = var.element_size // (int(var.vector[1:]) if var.vector else 1)
        out = bytearray()
        for value in var.initializer:
            if type(value) is Immediate:
                t = base if base in ("f32", "f64") or value.kind == "int" else \
                    {4: "f32", 8: "f64"}.get(width, base)
                arr = immediate_value(value.value, value.kind, t)
                out += np.asarray(arr).tobytes()[:width]
            elif type(value) is Symbol and value.name in symbols:
                out += symbols[value.name][1].to_bytes(width, "little")
            elif type(value) is Expression and value.text.startswith("generic(") and \
                    value.text[len("generic("):-1] in symbols:
                name = value.text[len("generic("):-1]
                out += symbols[name][1].to_bytes(width, "little")
            else:
                raise UnsupportedFeature(f"initializer {value!r} of {var.name}")
        return bytes(out[:size]).ljust(size, b"\0")


def pack_params(function: Function, params) -> np.ndarray:
    """The parameter buffer of ``function`` for ``params``.

    ``params`` is raw bytes (the whole buffer) or one value per parameter: an ``int`` (packed
    little-endian in the parameter's size; pointers are ints), a ``float`` (packed as the
    parameter's float type, or as f32/f64 by size for ``.b32``/``.b64``), or ``bytes`` for
    one parameter (struct by value).
    """
    size = function.param_size
    if isinstance(params, bytes | bytearray | memoryview):
        raw = bytes(params)
        if len(raw) < size:
            raise KernelcheckError(f"{function.name}: parameter buffer of {len(raw)} bytes, "
                                   f"the kernel takes {size}")
        return np.frombuffer(raw, dtype=np.uint8).copy()
    params = list(params)
    if len(params) != len(function.params):
        raise KernelcheckError(f"{function.name} takes {len(function.params)} parameters, "
                               f"{len(params)} given")
    buf = bytearray(size)
    for p, value in zip(function.params, params, strict=True):
        n = p.size
        if isinstance(value, bytes | bytearray):
            data = bytes(value).ljust(n, b"\0")[:n]
        elif isinstance(value, float | np.floating):
            t = p.type.lstrip(".")
            if t == "f64" or (t not in ("f32", "f16") and n == 8):
                data = struct.pack("<d", float(value))
            elif t == "f16":
                data = np.float16(value).tobytes()
            else:
                data = struct.pack("<f", float(value))
        else:
            data = (int(value) & ((1 << (8 * n)) - 1)).to_bytes(n, "little")
        buf[p.offset:p.offset + n] = data
    return np.frombuffer(bytes(buf), dtype=np.uint8).copy()


class Emulator:
    """An emulated CUDA device: memory plus kernel launches on the CPU."""

    def __init__(self, *, max_lanes: int = DEFAULT_MAX_LANES, address_size: int = 64) -> None:
        # address_size=32 runs modules with `.address_size 32` (PTX ISA 11.1.3): every
        # allocation lies below 2**32, so 32-bit pointers reach it.
        self.memory = DeviceMemory(address_size)
        self.max_lanes = max_lanes
        self._clock = 0

    # ------------------------------------------------------------------ memory
    def alloc(self, nbytes: int) -> int:
        """Allocate device memory; returns the device address."""
        return self.memory.alloc(nbytes)

    def free(self, address: int) -> None:
        self.memory.free(address)

    def copy_htod(self, address: int, data) -> None:
        self.memory.copy_htod(address, data)

    def copy_dtoh(self, address: int, nbytes: int, dtype=np.uint8) -> np.ndarray:
        return self.memory.copy_dtoh(address, nbytes, dtype)

    def copy_dtod(self, dst: int, src: int, nbytes: int) -> None:
        self.memory.copy_dtod(dst, src, nbytes)

    def memset(self, address: int, value: int, nbytes: int) -> None:
        self.memory.memset(address, value, nbytes)

    # ------------------------------------------------------------------ modules
    def load_module(self, source: str | Module) -> Program:
        """Load PTX text or a parsed :class:`Module`: place its variables, compile it."""
        if isinstance(source, str):
            from kernelcheck.ptx.parser import parse_ptx
            source = parse_ptx(source)
        return Program(source, self.memory)

    # ------------------------------------------------------------------ launches
    def launch(self, program: Program, kernel: str, *, grid: Sequence[int],
               block: Sequence[int], params, shared_bytes: int = 0, trace: bool = False,
               inject: BitFlip | None = None, blocks: Sequence[int] | None = None,
               step_limit: int | None = None) -> LaunchResult:
        """Run ``kernel`` of ``program`` over ``grid`` x ``block`` threads.

        Parameters
        ----------
        program : Program
            From :meth:`load_module`.
        kernel : str
            Entry name.
        grid, block : sequence of int
            Launch dimensions (1 to 3 values).
        params : bytes or sequence
            See :func:`pack_params`.
        shared_bytes : int
            Dynamic shared memory size per block.
        trace : bool
            Record global accesses and compute the oracle verdict (``result.trace``).
        inject : BitFlip, optional
            A register bit flip to inject.
        blocks : sequence of int, optional
            Run only these linear block ids (x fastest), in this order.
        step_limit : int, optional
            Stop each batch after this many instruction steps (``completed`` is then False).

        Raises
        ------
        MemoryFault
            An invalid access (with instruction, thread and block).
        LaunchError
            ``trap`` or an invalid indirect branch.
        """
        cf = program.function(kernel)
        if not cf.function.is_kernel:
            raise KernelcheckError(f"{kernel} is a device function, not a kernel")
        grid3 = _dims(grid)
        block3 = _dims(block)
        raw = pack_params(cf.function, params)
        program.kernel_name = kernel
        tracer = Tracer() if trace else None
        gx, gy, gz = grid3
        ids = list(range(gx * gy * gz)) if blocks is None else list(blocks)
        threads = block3[0] * block3[1] * block3[2]
        per_batch = max(1, self.max_lanes // ((threads + 31) // 32 * 32))
        shared_size = program.static_shared + shared_bytes
        total_ti = steps = 0
        completed = True
        injected = False
        with np.errstate(all="ignore"):
            for start in range(0, len(ids), per_batch):
                chunk = ids[start:start + per_batch]
                coords = [(b % gx, (b // gx) % gy, b // (gx * gy)) for b in chunk]
                batch = Batch(blocks=coords, block=block3, grid=grid3, memory=self.memory,
                              params=raw, shared_size=shared_size, dynamic_shared=shared_bytes,
                              local_size=program.local_size, trace=tracer, program=program,
                              clock_base=self._clock, flip=inject)
                batch.step_limit = step_limit
                try:
                    run_kernel(batch, cf)
                except StepLimitReached:
                    completed = False
                finally:
                    total_ti += batch.thread_instructions
                    steps += batch.steps
                    self._clock += batch.steps
                    injected = injected or batch.flip_done
                if not completed:
                    break
        return LaunchResult(kernel, grid3, block3, total_ti, steps, completed,
                            tracer.finish() if tracer is not None else None, injected)


def _dims(dims: Sequence[int]) -> tuple[int, int, int]:
    d = tuple(int(x) for x in dims)
    if not 1 <= len(d) <= 3 or any(x < 1 for x in d):
        raise KernelcheckError(f"launch dimensions must be 1 to 3 positive values, got {dims}")
    return d + (1,) * (3 - len(d))
