"""Generated cases of wmma (PTX ISA 9.7.14.4): wmma.load.a/.b/.c, wmma.mma and wmma.store.d in
every shape (m16n16k16, m32n8k16, m8n32k16), with .f16 multiplicands and every .f16/.f32
accumulator pair, and with .bf16 multiplicands, in row and column layouts, from global, shared
and shared::cta memory and through generic addresses, with and without an explicit stride.

The fragments' contents are unspecified ("the identity of individual matrix elements in the
fragment is unspecified", 9.7.14.4.1), so each block of a kernel loads A, B and C from memory,
multiplies, and stores D to memory, and only the stored matrix is compared: D = A B + C of
the row-major matrices, laid out as the store's layout says (.row: element (r, c) at
r * ld + c; .col: at c * ld + r; ld the stride, here the matrix's own leading dimension). The
elements are small integers, so every product and sum is exact in either accumulator format.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from tests.conformance.reference.ieee import BF16, F16, F32, round_to, value_of
from tests.conformance.reference.registry import Expected, Inputs, reference
from tests.conformance.sweep import GENERATED, SWEEPS, _dump

SHAPES = {"m16n16k16": (16, 16, 16), "m32n8k16": (32, 8, 16), "m8n32k16": (8, 32, 16)}
_FORMAT = {"f16": F16, "bf16": BF16, "f32": F32}
_BYTES = {"f16": 2, "bf16": 2, "f32": 4}


@dataclass(frozen=True)
class Block:
    """One load-load-load-mma-store sequence."""

    ab: str            # multiplicand type: f16 or bf16
    c: str             # C type
    d: str             # D type
    a_layout: str
    b_layout: str
    c_layout: str
    d_layout: str
    space: str         # global, shared, shared::cta or "" (generic)
    stride: bool       # pass the stride operand


BLOCKS = (
    Block("f16", "f16", "f16", "row", "col", "row", "row", "global", True),
    Block("f16", "f32", "f16", "col", "row", "col", "col", "shared", False),
    Block("f16", "f16", "f32", "col", "row", "row", "col", "shared::cta", True),
    Block("f16", "f32", "f32", "row", "col", "col", "row", "", False),
    Block("bf16", "f32", "f32", "row", "col", "row", "row", "global", False),
    Block("bf16", "f32", "f32", "col", "row", "col", "col", "shared", True),
    Block("bf16", "f32", "f32", "row", "row", "row", "col", "shared::cta", False),
)


def _registers(kind: str, type_name: str, shape: str) -> int:
    """Fragment registers (9.7.14.4.1): .f16 A/B eight, .f16 C/D four, .f32 C/D eight; .bf16
    A/B by shape."""
    if kind in ("c", "d"):
        return 4 if type_name == "f16" else 8
    if type_name == "f16":
        return 8
    m, n, _k = SHAPES[shape]
    rows = m if kind == "a" else n
    return {16: 4, 8: 2, 32: 8}[rows]


class _Random:
    def __init__(self, seed: int) -> None:
        self.state = seed

    def pick(self, choices: tuple[int, ...]) -> int:
        self.state = (self.state * 6364136223846793005 + 1442695040888963407) % (1 << 64)
        return choices[(self.state >> 33) % len(choices)]


def _layout(matrix: list[list[int]], layout: str) -> list[int]:
    rows, cols = len(matrix), len(matrix[0])
    if layout == "row":
        return [matrix[r][c] for r in range(rows) for c in range(cols)]
    return [matrix[r][c] for c in range(cols) for r in range(rows)]


def _unlayout(values: list, rows: int, cols: int, layout: str) -> list[list]:
    if layout == "row":
        return [[values[r * cols + c] for c in range(cols)] for r in range(rows)]
    return [[values[c * rows + r] for c in range(cols)] for r in range(rows)]


class WmmaCase:
    """A generated case with the interface generate.py uses (group, name, target, ptx(),
    launch())."""

    group = "matrix"
    target = "sm_90a"
    version = "8.7"

    def __init__(self, shape: str, ab: str) -> None:
        self.shape = shape
        self.blocks = tuple(b for b in BLOCKS if b.ab == ab)
        self.name = f"gen_wmma_{shape}" if ab == "f16" else f"gen_wmma_{ab}_{shape}"
        m, n, k = SHAPES[shape]
        rng = _Random(m * 1000 + n * 10 + k)
        small = (-3, -2, -1, 0, 1, 2, 3)
        self.matrices = {
            "a": [[rng.pick(small) for _ in range(k)] for _ in range(m)],
            "b": [[rng.pick(small) for _ in range(n)] for _ in range(k)],
            "c": [[rng.pick((-20, -5, 0, 4, 17)) for _ in range(n)] for _ in range(m)],
        }

    @property
    def case_id(self) -> str:
        return f"{self.group}/{self.name}"

    def buffer(self, matrix: str, type_name: str, layout: str) -> str:
        return f"{matrix}_{type_name}_{layout}"

    def inputs(self) -> list[tuple[str, str, str]]:
        """(matrix, type, layout) of every input buffer the blocks read."""
        out = []
        for block in self.blocks:
            for item in (("a", block.ab, block.a_layout), ("b", block.ab, block.b_layout),
                         ("c", block.c, block.c_layout)):
                if item not in out:
                    out.append(item)
        return out

    def _dims(self, matrix: str) -> tuple[int, int]:
        m, n, k = SHAPES[self.shape]
        return {"a": (m, k), "b": (k, n), "c": (m, n), "d": (m, n)}[matrix]

    def _leading(self, matrix: str, layout: str) -> int:
        rows, cols = self._dims(matrix)
        return cols if layout == "row" else rows

    # -- the kernel ---------------------------------------------------------------------

    def ptx(self) -> str:
        params = [f".param .u64 {self.buffer(*item)}" for item in self.inputs()]
        params += [f".param .u64 d{k}" for k in range(len(self.blocks))]
        shared_bytes = sum(self._size(*item) for item in self.inputs())
        lines = [
            f"// wmma.load, wmma.mma and wmma.store.d on .{self.shape} (PTX ISA 9.7.14.4): "
            "each block loads A, B, C, multiplies and stores D.",
            f"// {GENERATED} the sweep {self.case_id}; do not edit.",
            f".version {self.version}", f".target {self.target}", ".address_size 64", "",
            f".visible .entry {self.name}(",
            "    " + ", ".join(params) + ")",
            "{",
            "    .reg .pred %p<4>;",
            "    .reg .b32 %r<40>;",
            "    .reg .b64 %rd<40>;",
            f"    .shared .align 16 .b8 sbuf[{shared_bytes}];",
            "    mov.u32 %r0, %tid.x;",
        ]
        # copy every input to shared memory (each lane copies every 32nd word)
        offset = 0
        self.shared_offsets = {}
        for item in self.inputs():
            name = self.buffer(*item)
            words = self._size(*item) // 4
            self.shared_offsets[item] = offset
            lines += [
                f"    // {name} -> sbuf+{offset}",
                f"    ld.param.u64 %rd1, [{name}];",
                "    mov.u32 %r1, %r0;",
                f"COPY_{name}:",
                f"    setp.ge.u32 %p0, %r1, {words};",
                f"    @%p0 bra DONE_{name};",
                "    mul.wide.u32 %rd2, %r1, 4;",
                "    add.s64 %rd3, %rd1, %rd2;",
                "    ld.global.b32 %r2, [%rd3];",
                "    mov.u64 %rd4, sbuf;",
                f"    add.s64 %rd4, %rd4, {offset};",
                "    add.s64 %rd4, %rd4, %rd2;",
                "    st.shared.b32 [%rd4], %r2;",
                "    add.u32 %r1, %r1, 32;",
                f"    bra COPY_{name};",
                f"DONE_{name}:",
            ]
            offset += self._size(*item)
        lines.append("    bar.warp.sync 0xffffffff;")
        for k, block in enumerate(self.blocks):
            lines += self._block(k, block)
        lines += ["    ret;", "}", ""]
        return "\n".join(lines)

    def _size(self, matrix: str, type_name: str, layout: str) -> int:
        rows, cols = self._dims(matrix)
        return rows * cols * _BYTES[type_name]

    def _address(self, item: tuple[str, str, str], space: str, register: str) -> list[str]:
        if space in ("shared", "shared::cta"):
            return [f"    mov.u64 {register}, sbuf;",
                    f"    add.s64 {register}, {register}, {self.shared_offsets[item]};"]
        return [f"    ld.param.u64 {register}, [{self.buffer(*item)}];"]

    def _block(self, k: int, block: Block) -> list[str]:
        space = f".{block.space}" if block.space else ""
        types = {"a": block.ab, "b": block.ab, "c": block.c, "d": block.d}
        regs = {kind: _registers(kind, types[kind], self.shape) for kind in "abcd"}
        base = {"a": 4, "b": 12, "c": 20, "d": 28}

        def vector(kind: str) -> str:
            return "{" + ", ".join(f"%r{base[kind] + j}" for j in range(regs[kind])) + "}"

        def stride(matrix: str, layout: str) -> str:
            return f", {self._leading(matrix, layout)}" if block.stride else ""

        a_item = ("a", block.ab, block.a_layout)
        b_item = ("b", block.ab, block.b_layout)
        c_item = ("c", block.c, block.c_layout)
        lines = [f"    // block {k}: {block}"]
        lines += self._address(a_item, block.space, "%rd10")
        lines += self._address(b_item, block.space, "%rd11")
        lines += self._address(c_item, block.space, "%rd12")
        lines.append(f"    ld.param.u64 %rd13, [d{k}];")
        lines += [
            f"    wmma.load.a.sync.aligned.{block.a_layout}.{self.shape}{space}.{block.ab} "
            f"{vector('a')}, [%rd10]{stride('a', block.a_layout)};",
            f"    wmma.load.b.sync.aligned.{block.b_layout}.{self.shape}{space}.{block.ab} "
            f"{vector('b')}, [%rd11]{stride('b', block.b_layout)};",
            f"    wmma.load.c.sync.aligned.{block.c_layout}.{self.shape}{space}.{block.c} "
            f"{vector('c')}, [%rd12]{stride('c', block.c_layout)};",
        ]
        if block.ab == "f16":
            types = f"{block.d}.{block.c}"
        else:
            types = f"{block.d}.{block.ab}.{block.ab}.{block.c}"
        lines.append(f"    wmma.mma.sync.aligned.{block.a_layout}.{block.b_layout}.{self.shape}."
                     f"{types} {vector('d')}, {vector('a')}, {vector('b')}, {vector('c')};")
        store_space = ".global" if block.space in ("shared", "shared::cta") else space
        lines.append(f"    wmma.store.d.sync.aligned.{block.d_layout}.{self.shape}{store_space}."
                     f"{block.d} [%rd13], {vector('d')}{stride('d', block.d_layout)};")
        return lines

    # -- the launch file ----------------------------------------------------------------

    def launch(self) -> str:
        buffers = {}
        for matrix, type_name, layout in self.inputs():
            values = _layout(self.matrices[matrix], layout)
            buffers[self.buffer(matrix, type_name, layout)] = {
                "type": "u16" if type_name == "bf16" else type_name,
                "values": [round_to(Fraction(v), BF16) for v in values]
                if type_name == "bf16" else values}
        m, n, _k = SHAPES[self.shape]
        for k, block in enumerate(self.blocks):
            buffers[f"d{k}"] = {"type": block.d, "count": m * n}
        params = [{"buffer": self.buffer(*item)} for item in self.inputs()]
        params += [{"buffer": f"d{k}"} for k in range(len(self.blocks))]
        return _dump({
            "format": "kernelcheck-launch", "version": 1,
            "comment": f"{GENERATED} the sweep {self.case_id}; do not edit.",
            "kernel": self.name, "grid": [1], "block": [32], "buffers": buffers,
            "params": params, "outputs": [f"d{k}" for k in range(len(self.blocks))]})

    # -- the reference ------------------------------------------------------------------

    def expected(self, inputs: Inputs) -> dict[str, Expected]:
        out = {}
        for k, block in enumerate(self.blocks):
            a = self._read(inputs, "a", block.ab, block.a_layout)
            b = self._read(inputs, "b", block.ab, block.b_layout)
            c = self._read(inputs, "c", block.c, block.c_layout)
            m, n, kk = SHAPES[self.shape]
            d = [[sum(a[r][j] * b[j][col] for j in range(kk)) + c[r][col] for col in range(n)]
                 for r in range(m)]
            bits = [round_to(v, _FORMAT[block.d]) for v in _layout(d, block.d_layout)]
            dtype = "<u2" if block.d == "f16" else "<u4"
            view = "<f2" if block.d == "f16" else "<f4"
            out[f"d{k}"] = Expected(np.array(bits, dtype=dtype).view(view), nan="any")
        return out

    def _read(self, inputs: Inputs, matrix: str, type_name: str, layout: str):
        raw = inputs[self.buffer(matrix, type_name, layout)]
        bits = raw.view("<u2" if _BYTES[type_name] == 2 else "<u4")
        rows, cols = self._dims(matrix)
        values = [Fraction(value_of(int(x), _FORMAT[type_name])) for x in bits]
        return _unlayout(values, rows, cols, layout)


for _shape in SHAPES:
    for _ab in ("f16", "bf16"):
        _case = WmmaCase(_shape, _ab)
        SWEEPS[_case.case_id] = _case
        reference(_case.case_id)(_case.expected)
