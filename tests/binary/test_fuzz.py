"""Mutated cubins and fatbins raise BinaryFormatError or parse; never any other exception."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kernelcheck.binary import CubinFile, open_binary
from kernelcheck.binary.describe import describe_binary
from kernelcheck.errors import BinaryFormatError

DATA = Path(__file__).parent / "data"
CUBIN = (DATA / "k80.cubin").read_bytes()
FATBIN = (DATA / "lz4.fatbin").read_bytes()

mutations = st.lists(
    st.tuples(st.integers(min_value=0, max_value=1 << 20), st.integers(0, 255)),
    min_size=1, max_size=8,
)


def _mutate(data: bytes, edits, cut: int | None) -> bytes:
    out = bytearray(data)
    for position, value in edits:
        out[position % len(out)] = value
    return bytes(out[:cut] if cut else out)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(edits=mutations, cut=st.none() | st.integers(1, len(CUBIN)))
def test_mutated_cubin(edits, cut):
    data = _mutate(CUBIN, edits, cut)
    try:
        cubin = CubinFile(data, filename="fuzz.cubin")
        for kernel in cubin.iter_kernels():
            _ = (kernel.exit_offsets, kernel.regcount, kernel.max_threads, kernel.num_barriers)
    except BinaryFormatError:
        pass


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(edits=mutations, cut=st.none() | st.integers(1, len(FATBIN)))
def test_mutated_fatbin(edits, cut):
    data = _mutate(FATBIN, edits, cut)
    try:
        describe_binary(open_binary(data, filename="fuzz.fatbin"))
    except BinaryFormatError:
        pass
