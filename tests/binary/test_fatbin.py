"""Fatbin entries, decompression round trips, host ELF embedding and error recovery."""

from __future__ import annotations

import struct

import pytest

from kernelcheck.binary import open_binary, parse_fatbin
from kernelcheck.binary.decompress import lz4_block_decompress
from kernelcheck.errors import BinaryFormatError

ENTRIES = [("cubin", "sm_80"), ("cubin", "sm_90"), ("ptx", "compute_90")]


@pytest.mark.parametrize(("name", "compression"), [("plain.fatbin", None),
                                                   ("lz4.fatbin", "lz4"),
                                                   ("zstd.fatbin", "zstd")])
def test_entries_decompress_to_the_cubins(data_bytes, name, compression):
    binary = open_binary(data_bytes(name), filename=name)
    assert binary.kind == "fatbin" and binary.errors == ()
    assert [(i.kind, i.arch) for i in binary.images] == ENTRIES
    assert all(i.compression == compression for i in binary.images)
    assert binary.images[0].data == data_bytes("k80.cubin")
    assert binary.images[1].data == data_bytes("k90.cubin")
    assert ".target sm_90" in binary.images[2].ptx_text()
    assert binary.images[0].cubin().num_kernels == 5


def test_header_fields(data_bytes):
    fatbin = parse_fatbin(data_bytes("lz4.fatbin"))
    assert fatbin.header.version == 1 and fatbin.header.header_size == 16
    first = fatbin.entries[0]
    assert first.kind_name == "cubin" and first.arch_number == 80
    assert first.is_64bit and first.flags & 0x2000 and first.compressed
    assert first.uncompressed_size == len(data_bytes("k80.cubin"))
    assert fatbin.entries[2].code_version == (9, 0)


def test_host_executable(data_bytes):
    binary = open_binary(data_bytes("host.exe"), filename="host.exe")
    assert binary.kind == "host-elf" and binary.errors == ()
    # Same list as `cuobjdump -lelf -lptx host.exe`: 6 cubins, 2 PTX, in three fatbins.
    assert [i.kind for i in binary.images].count("cubin") == 6
    assert [i.kind for i in binary.images].count("ptx") == 2
    assert {i.origin.section for i in binary.images} == {".nv_fatbin"}
    assert {i.origin.fatbin_index for i in binary.images} == {0, 1, 2}
    counts = [i.cubin().num_kernels for i in binary.images if i.kind == "cubin"]
    assert counts.count(5) == 2


def test_relocatable_object(data_bytes):
    binary = open_binary(data_bytes("rdc.o"))
    assert [(i.kind, i.origin.section) for i in binary.images] == [
        ("cubin", "__nv_relfatbin"), ("ptx", "__nv_relfatbin")]
    assert binary.images[0].cubin().arch == "sm_80"


def _two_fatbins(data_bytes) -> tuple[bytes, int]:
    first = data_bytes("plain.fatbin")
    return first + data_bytes("lz4.fatbin"), len(first)


def test_unknown_entry_kind_is_reported_and_rest_listed(data_bytes):
    data, _ = _two_fatbins(data_bytes)
    data = bytearray(data)
    struct.pack_into("<H", data, 16, 7)  # kind of the first entry
    binary = open_binary(bytes(data), filename="two.fatbin")
    assert len(binary.images) == 5
    (error,) = binary.errors
    assert "unknown entry kind 7" in str(error)
    assert (error.filename, error.offset) == ("two.fatbin", 16)


def test_bad_compression_is_reported_and_rest_listed(data_bytes):
    data, second = _two_fatbins(data_bytes)
    data = bytearray(data)
    entry = second + 16
    header_size = struct.unpack_from("<I", data, entry + 4)[0]
    data[entry + header_size:entry + header_size + 8] = b"\xff" * 8  # wreck the LZ4 block
    binary = open_binary(bytes(data), filename="two.fatbin")
    assert len(binary.images) == 5
    (error,) = binary.errors
    assert error.offset == entry and "LZ4" in str(error)


def test_bad_zstd_frame(data_bytes):
    data = bytearray(data_bytes("zstd.fatbin"))
    data[16 + 0x40:16 + 0x44] = b"\0\0\0\0"  # the frame magic of the first entry
    binary = open_binary(bytes(data))
    assert len(binary.images) == 2 and "Zstandard" in str(binary.errors[0])


def test_bad_fatbin_magic_raises():
    with pytest.raises(BinaryFormatError, match="not a cubin"):
        open_binary(b"\x00" * 64, filename="zero.bin")


def test_lz4_overlapping_match():
    assert lz4_block_decompress(bytes([0x2F, 1, 2, 2, 0, 0x00]), 21) == bytes([1, 2] * 10 + [1])
    with pytest.raises(ValueError, match="reaches before"):
        lz4_block_decompress(bytes([0x10, 1, 9, 0, 0x00]), 8)
