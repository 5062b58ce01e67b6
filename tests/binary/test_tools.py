"""The demangler against c++filt, nvdisasm against the .nv.info exit offsets, the CLI."""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess

import pytest

from kernelcheck.binary import CubinFile, demangle
from kernelcheck.binary.nvdisasm import NvdisasmError, disassemble, find_nvdisasm
from kernelcheck.commands import list as list_command

from .conftest import DATA

DEMANGLED = {
    "_ZN2ns5scaleIfEEvPT_S1_j": "void ns::scale<float>(float*, float, unsigned int)",
    "_Z5mixedcsx4PairPd": "mixed(char, short, long long, Pair, double*)",
    "_Z6kernelIZ4mainEUliE_EvT_": "void kernel<main::{lambda(int)#1}>(main::{lambda(int)#1})",
    "_Z3addIfLi4EEvPKT_PS0_i": "void add<float, 4>(float const*, float*, int)",
    "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEE"
    "viT0_T1_": "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor"
    "<float>, std::array<char*, 1ul> >(int, at::native::FillFunctor<float>, "
    "std::array<char*, 1ul>)",
    "_Z1fPFviE": "f(void (*)(int))",
    "_Z1fRA10_i": "f(int (&) [10])",
    "_ZN12_GLOBAL__N_13fooEv": "(anonymous namespace)::foo()",
    "_Z1fIJifEEvDpT_": "void f<int, float>(int, float)",
    "_Z9my_kernelILb1ELj3EEvPf": "void my_kernel<true, 3u>(float*)",
    "_ZN7cutlass6KernelINS_4gemm6kernel4GemmIiEEEEvNT_6ParamsE":
        "void cutlass::Kernel<cutlass::gemm::kernel::Gemm<int> >"
        "(cutlass::gemm::kernel::Gemm<int>::Params)",
    "saxpy": "saxpy",
    "_Zjunk": "_Zjunk",
}


@pytest.mark.parametrize(("mangled", "expected"), DEMANGLED.items())
def test_demangle(mangled, expected):
    assert demangle(mangled) == expected


@pytest.mark.skipif(shutil.which("c++filt") is None, reason="binutils c++filt not installed")
def test_demangle_agrees_with_cxxfilt():
    names = [n for n in DEMANGLED if n.startswith("_Z") and n != "_Zjunk"]
    out = subprocess.run(["c++filt", *names], capture_output=True, text=True, check=True)
    assert [demangle(n) for n in names] == out.stdout.splitlines()


def _nvdisasm_available() -> bool:
    try:
        find_nvdisasm()
    except NvdisasmError:
        return False
    return True


@pytest.mark.skipif(not _nvdisasm_available(), reason="nvidia-cuda-nvdisasm not installed")
@pytest.mark.parametrize("use_json", [True, False])
def test_nvdisasm_exits_match_nv_info(use_json):
    data = (DATA / "k80.cubin").read_bytes()
    code = disassemble(data, use_json=use_json)
    for kernel in CubinFile(data).iter_kernels():
        instructions = code[kernel.name].instructions
        assert len(instructions) * 16 == len(kernel.text)
        exits = tuple(i.offset for i in instructions if i.text.split()[-1] == "EXIT")
        assert exits == kernel.exit_offsets


@pytest.mark.skipif(not _nvdisasm_available(), reason="nvidia-cuda-nvdisasm not installed")
def test_nvdisasm_failure_names_the_image():
    with pytest.raises(NvdisasmError, match="broken.cubin"):
        disassemble(b"\x7fELF" + bytes(100), label="broken.cubin")


def _run_list(argv, capsys):
    parser = argparse.ArgumentParser()
    list_command.register(parser.add_subparsers())
    args = parser.parse_args(["list", *argv])
    status = args.func(args)
    return status, capsys.readouterr().out


def test_list_json(capsys):
    status, out = _run_list(["--json", str(DATA / "host.exe")], capsys)
    listing = json.loads(out)
    assert status == 0 and listing["kind"] == "host-elf"
    assert sum(i.get("num_kernels", 0) for i in listing["images"]) == 10
    saxpy = next(k for i in listing["images"] for k in i.get("kernels", ())
                 if k["name"] == "saxpy" and i["arch"] == "sm_90")
    assert saxpy["param_base"] == 0x210 and saxpy["params"][3] == {
        "ordinal": 3, "offset": 16, "size": 8}


def test_list_text(capsys):
    status, out = _run_list([str(DATA / "zstd.fatbin")], capsys)
    assert status == 0 and "zstd-compressed" in out and "ns::scale<float>" in out
