"""CubinFile against the kernel signatures of data/kernels.cu and `cuobjdump -elf` output."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from kernelcheck.binary import CubinFile, parse_nv_info
from kernelcheck.binary.nvinfo import decode_kparam_info, decode_kparam_info_v2
from kernelcheck.errors import BinaryFormatError

# (ordinal, offset, size) per kernel, from the C++ signatures: char/short/long long/Pair
# (float + double, 16 bytes aligned to 8)/pointer, and the 4/4/8/8 of saxpy.
SIGNATURES = {
    "saxpy": [(0, 0, 4), (1, 4, 4), (2, 8, 8), (3, 16, 8)],
    "_Z5mixedcsx4PairPd": [(0, 0, 1), (1, 2, 2), (2, 8, 8), (3, 16, 16), (4, 32, 8)],
    "_ZN2ns5scaleIfEEvPT_S1_j": [(0, 0, 8), (1, 8, 4), (2, 12, 4)],
    "_ZN2ns5scaleIiEEvPT_S1_j": [(0, 0, 8), (1, 8, 4), (2, 12, 4)],
    "counter": [(0, 0, 8)],
}
# Values printed by cuobjdump -elf 13.5.37 for the committed cubins.
EXITS = {
    "k80.cubin": {"saxpy": (0x50, 0xE0), "_Z5mixedcsx4PairPd": (0x150,), "counter": (0x100,),
                  "_ZN2ns5scaleIfEEvPT_S1_j": (0x50, 0xC0)},
}
REGCOUNT_SM80 = {"saxpy": 10, "_Z5mixedcsx4PairPd": 12, "counter": 8}


@pytest.mark.parametrize(("name", "arch", "base"), [("k80.cubin", "sm_80", 0x160),
                                                     ("k90.cubin", "sm_90", 0x210)])
def test_kernels_and_parameter_layout(data_bytes, name, arch, base):
    cubin = CubinFile(data_bytes(name), filename=name)
    assert cubin.arch == arch
    assert cubin.virtual_arch == arch.replace("sm_", "compute_")
    assert cubin.toolkit_version == "13.0"
    assert cubin.num_kernels == 5
    for kernel in cubin.iter_kernels():
        layout = [(p.ordinal, p.offset, p.size) for p in kernel.params]
        assert layout == SIGNATURES[kernel.name]
        assert kernel.param_base == base
        last = kernel.params[-1]
        assert kernel.param_size == last.offset + last.size
        assert kernel.cbank0_size == base + kernel.param_size
        assert len(kernel.text) % 16 == 0 and kernel.text
        assert kernel.cuda_api_version == 130
        for exit_offset in kernel.exit_offsets:
            assert exit_offset < len(kernel.text)


def test_values_match_cuobjdump(data_bytes):
    cubin = CubinFile(data_bytes("k80.cubin"))
    for name, exits in EXITS["k80.cubin"].items():
        assert cubin.get_kernel(name).exit_offsets == exits
    for name, count in REGCOUNT_SM80.items():
        assert cubin.get_kernel(name).regcount == count
    mixed = cubin.get_kernel("mixed(char, short, long long, Pair, double*)")
    assert mixed.max_threads == (128, 1, 1)
    assert mixed.num_barriers == 1
    assert mixed.frame_size == 0
    assert cubin.get_kernel("saxpy").max_threads is None


def test_demangled_names(data_bytes):
    names = {k.demangled for k in CubinFile(data_bytes("k80.cubin")).iter_kernels()}
    assert "void ns::scale<float>(float*, float, unsigned int)" in names
    assert "saxpy" in names


def test_truncated_elf(data_bytes):
    with pytest.raises(BinaryFormatError) as caught:
        CubinFile(data_bytes("k80.cubin")[:3000], filename="cut.cubin")
    assert caught.value.filename == "cut.cubin"
    assert "cut.cubin" in str(caught.value)


def test_wrong_machine(data_bytes):
    data = bytearray(data_bytes("k80.cubin"))
    struct.pack_into("<H", data, 18, 62)  # EM_X86_64
    with pytest.raises(BinaryFormatError, match="EM_CUDA") as caught:
        CubinFile(bytes(data), filename="x86.o")
    assert caught.value.filename == "x86.o" and caught.value.offset == 18


def test_corrupt_nv_info_record_names_section_and_offset(data_bytes):
    cubin = CubinFile(data_bytes("k80.cubin"))
    section = cubin.get_section(".nv.info.saxpy")
    data = bytearray(data_bytes("k80.cubin"))
    data[section.offset + 12] = 0x07  # the format byte of the second record
    with pytest.raises(BinaryFormatError) as caught:
        CubinFile(bytes(data), filename="bad.cubin")
    error = caught.value
    assert (error.filename, error.section, error.offset) == ("bad.cubin", ".nv.info.saxpy", 12)


def test_nv_info_sval_past_end():
    with pytest.raises(BinaryFormatError, match="runs past") as caught:
        parse_nv_info(bytes.fromhex("04170c00 00000000"), section=".nv.info.k")
    assert caught.value.offset == 0


def test_kparam_size_bits():
    # Size lives in bits 18..31 of the last word: 0x100 bytes -> 0x100 << 18.
    word = (0x100 << 18) | (0x1F << 12)
    record = parse_nv_info(bytes.fromhex("04170c00") + struct.pack("<IHHI", 0, 2, 0x20, word))
    param = decode_kparam_info(record[0])
    assert (param.ordinal, param.offset, param.size, param.cbank, param.is_cbank) == (
        2, 0x20, 0x100, 0x1F, True)



# Parameters past 4 KB: the EIATTR_KPARAM_INFO_V2 records of fixtures/sass/sm_90/
# large_params.cubin, as cuobjdump -elf 13.5.37 prints them and as the C++ signatures lay
# them out (a 5440-byte struct; a 4400-byte struct, two pointers and an int).
LARGE_PARAMS = {
    "copy_lists": [(0, 0, 0x1540)],
    "scale_after_table": [(0, 0, 0x1130), (1, 0x1130, 8), (2, 0x1138, 8), (3, 0x1140, 4)],
}


def test_parameters_past_4_kb_come_from_the_v2_records():
    path = Path(__file__).parents[2] / "fixtures" / "sass" / "sm_90" / "large_params.cubin"
    cubin = CubinFile(path.read_bytes(), filename=str(path))
    for name, layout in LARGE_PARAMS.items():
        kernel = cubin.get_kernel(name)
        assert not any(r.name == "EIATTR_KPARAM_INFO" for r in kernel.attributes)
        assert [(p.ordinal, p.offset, p.size) for p in kernel.params] == layout
        assert kernel.param_size == layout[-1][1] + layout[-1][2]


def test_v2_record_with_a_size_past_the_parameter_area_is_refused():
    # A size word with bits above the largest parameter area is a layout not known here.
    record = parse_nv_info(bytes.fromhex("04450c00") + struct.pack("<IHHI", 0, 1, 8, 0x10008))
    with pytest.raises(BinaryFormatError, match="32764-byte parameter area"):
        decode_kparam_info_v2(record[0], section=".nv.info.k")

def _section_header(data: bytes, cubin: CubinFile, name: str) -> int:
    """The file offset of the ELF section header of ``name``."""
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, = struct.unpack_from("<H", data, 0x3A)
    return shoff + shentsize * cubin.get_section(name).index


def test_constant_bank_relocations_name_the_assertion_handler():
    from tests.sass.conftest import FIXTURES

    data = (FIXTURES / "cubin" / "sm_90" / "asserts.cubin").read_bytes()
    cubin = CubinFile(data)
    assert "__assertfail" in cubin.constant_bank_symbols(4).values()
    # A relocation table cut short of a whole entry is a format error, not a guess.
    broken = bytearray(data)
    header = _section_header(data, cubin, ".rela.nv.constant4")
    size, = struct.unpack_from("<Q", broken, header + 0x20)
    struct.pack_into("<Q", broken, header + 0x20, size - 1)
    with pytest.raises(BinaryFormatError, match="relocation table"):
        CubinFile(bytes(broken), filename="bad.cubin").constant_bank_symbols(4)
