"""Reads of a table in the parameter buffer at launch (``PARAMX``): only the offsets a load
of that size can read, in the Python evaluator and in the shim's C evaluator alike."""

from __future__ import annotations

from kernelcheck.launch.evaluate import _paramx


def _buffer() -> bytes:
    # Three 8-byte pointers at 64, 72 and 80, then bytes whose unaligned reads would give
    # values far from any of them.
    table = b"".join((0x7F0000000000 + 0x100000 * k).to_bytes(8, "little") for k in range(3))
    return bytes(64) + table + bytes(range(1, 9))


def test_a_range_of_offsets_reads_only_the_aligned_entries():
    values = _paramx([(64, 80)], 8, _buffer())
    assert values == [(0x7F0000000000, 0x7F0000000000), (0x7F0000100000, 0x7F0000100000),
                      (0x7F0000200000, 0x7F0000200000)]


def test_byte_reads_take_every_offset():
    assert _paramx([(88, 90)], 1, _buffer()) == [(1, 3)]


def test_a_range_with_no_aligned_offset_reads_nothing():
    # Every load of it would fault: no value, so the access it feeds never runs.
    assert _paramx([(65, 71)], 8, _buffer()) == []


def test_an_offset_past_the_buffer_is_invalid():
    assert _paramx([(80, 96)], 8, _buffer()) is None
