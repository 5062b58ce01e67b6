"""Content keys of cubin kernels: equal for the same code under another name, different
for different code; the module bank is hashed apart and detected in the parsed SASS."""

from __future__ import annotations

import pytest

from kernelcheck.binary.cubin import CubinFile
from kernelcheck.sass.identity import bank4_digest, kernel_keys, reads_module_bank
from kernelcheck.sass.loader import module_from_cubin

from .conftest import CUBINS, FIXTURES, needs_nvdisasm, without_line_info

SM90 = FIXTURES / "cubin" / "sm_90"


def read(name: str) -> bytes:
    return without_line_info((SM90 / name).read_bytes())


def test_an_image_with_line_information_gets_no_keys():
    data = (SM90 / "elementwise.cubin").read_bytes()
    assert kernel_keys(CubinFile(data)) == {}
    assert len(kernel_keys(CubinFile(without_line_info(data)))) == 5


def test_no_two_fixture_kernels_share_a_key():
    seen: dict[str, tuple[str, str]] = {}
    for path in CUBINS:
        cubin = CubinFile(without_line_info(path.read_bytes()))
        keys = kernel_keys(cubin)
        assert set(keys) == set(cubin.kernel_names())
        for name, key in keys.items():
            assert key not in seen, (path.name, name, seen.get(key))
            seen[key] = (path.name, name)


def test_a_renamed_kernel_keeps_its_key_and_a_changed_one_does_not():
    data = read("elementwise.cubin")
    renamed = data.replace(b"write_thread_ids", b"write_thread_idz")
    before, after = kernel_keys(CubinFile(data)), kernel_keys(CubinFile(renamed))
    assert after["write_thread_idz"] == before["write_thread_ids"]
    assert after["saxpy"] == before["saxpy"]
    cubin = CubinFile(data)
    kernel = cubin.get_kernel("saxpy")
    # One byte of saxpy's code changed: only saxpy's key changes.
    at = kernel.text_offset + 0x40
    changed = data[:at] + bytes([data[at] ^ 1]) + data[at + 1:]
    keys = kernel_keys(CubinFile(changed))
    assert keys["saxpy"] != before["saxpy"]
    assert {n: k for n, k in keys.items() if n != "saxpy"} == {
        n: k for n, k in before.items() if n != "saxpy"}


def test_the_architecture_is_part_of_the_key():
    sm80 = without_line_info((FIXTURES / "cubin" / "sm_80" / "elementwise.cubin").read_bytes())
    assert (set(kernel_keys(CubinFile(sm80)).values())
            .isdisjoint(kernel_keys(CubinFile(read("elementwise.cubin"))).values()))


def test_bank4_digest_follows_the_tables():
    asserts, elementwise = CubinFile(read("asserts.cubin")), CubinFile(read("elementwise.cubin"))
    assert bank4_digest(asserts) == bank4_digest(CubinFile(read("asserts.cubin")))
    assert bank4_digest(asserts) != bank4_digest(elementwise)


@needs_nvdisasm
@pytest.mark.parametrize("name, reads", [("asserts.cubin", True),
                                         ("elementwise.cubin", False)])
def test_reads_module_bank(name, reads):
    # The checked kernels load __assertfail's address from c[0x4][...]; elementwise
    # kernels read parameters and launch values (bank 0) only.
    module = module_from_cubin(read(name))
    assert any(reads_module_bank([k]) for k in module.kernels) is reads


@pytest.mark.parametrize("text, reads", [
    ("IADD3 R0, R1, c[0x0][0x210], RZ", False),
    ("FADD R0, R1, c[0x2][0x8]", False),
    ("LDC.64 R2, c[0x4][R2]", True),
    ("FADD R0, R1, -c[0x4][0x10]", True),
    ("HADD2 R0, R1, c[0x3][0x0].H0_H0", True),
    ("LDC R0, cx[UR4][0x10]", True),
])
def test_reads_module_bank_finds_the_bank_under_modifiers(text, reads):
    from kernelcheck.binary.nvdisasm import SassFunction, SassInstruction
    from kernelcheck.sass.function import function_from_sass

    function = function_from_sass(SassFunction("k", (SassInstruction(0, text),
                                                     SassInstruction(16, "EXIT"))))
    assert reads_module_bank([function]) is reads


def test_docstring_examples(monkeypatch):
    import doctest

    import kernelcheck.sass.identity as identity

    monkeypatch.chdir(FIXTURES.parent)
    result = doctest.testmod(identity)
    assert result.attempted > 0 and result.failed == 0
