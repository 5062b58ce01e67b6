"""The demangler, name by name against binutils ``c++filt`` (skipped where it is absent).

Two sets of names: every kernel name of the fixture corpus (PTX ``.entry`` names and cubin
kernel symbols), and 300 kernel names of PyTorch 2.14.1's libtorch_cuda.so
(tests/binary/data/libtorch_kernel_names.txt, sampled at even steps over its 23,021 distinct
kernel names by scripts/sample_kernel_names.py; the file's header says where from).
:func:`demangle` (libstdc++'s ``__cxa_demangle``) must agree with ``c++filt`` on every name;
the pure-Python fallback is measured too, and must not lose ground.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from kernelcheck.binary.demangle import demangle, demangle_python, system_demangler
from tests.conftest import FIXTURES

DATA = Path(__file__).parent / "data"
CXXFILT = shutil.which("c++filt")
needs_cxxfilt = pytest.mark.skipif(CXXFILT is None, reason="binutils c++filt not installed")

#: Names the pure-Python fallback reads exactly as c++filt does, at least (of 300). It
#: returns 126 others unchanged and misreads 36 (local names inside template arguments).
FALLBACK_EXACT_LIBTORCH = 138


def _fixture_names() -> list[str]:
    names: set[str] = set()
    entry = re.compile(rb"\.entry\s+([A-Za-z_$][\w$]*)")
    for path in FIXTURES.glob("ptx/**/*.ptx"):
        names.update(m.decode() for m in entry.findall(path.read_bytes()))
    from kernelcheck.binary.cubin import CubinFile

    for path in FIXTURES.glob("cubin/**/*.cubin"):
        names.update(k.name for k in CubinFile(path.read_bytes()).iter_kernels())
    return sorted(names)


def _libtorch_names() -> list[str]:
    lines = (DATA / "libtorch_kernel_names.txt").read_text().splitlines()
    return [line for line in lines if line and not line.startswith("#")]


def _cxxfilt(names: list[str]) -> list[str]:
    done = subprocess.run([CXXFILT], input="\n".join(names) + "\n", capture_output=True,
                          text=True, check=True)
    return done.stdout.splitlines()


def test_the_samples_are_what_their_provenance_says():
    names = _libtorch_names()
    assert len(names) == 300 and len(set(names)) == 300
    assert all(n.startswith("_Z") for n in names)
    assert "libtorch_cuda.so" in (DATA / "libtorch_kernel_names.txt").read_text()
    fixtures = _fixture_names()
    assert any(n.startswith("_Z") for n in fixtures) and "vec_add" in fixtures


def test_the_system_demangler_is_used_where_libstdcxx_loads():
    assert system_demangler() is not None
    assert system_demangler()("_Z5axpbyIfEvPT_PKS0_S3_S0_S0_i") == (
        "void axpby<float>(float*, float const*, float const*, float, float, int)")
    assert system_demangler()("vec_add") is None


@needs_cxxfilt
@pytest.mark.parametrize("sample", ["fixtures", "libtorch"])
def test_demangle_agrees_with_cxxfilt_on_every_name(sample):
    names = _fixture_names() if sample == "fixtures" else _libtorch_names()
    expected = _cxxfilt(names)
    wrong = [(n, d, e) for n, e in zip(names, expected, strict=True)
             if (d := demangle(n)) != e]
    assert not wrong, f"{len(wrong)} of {len(names)} differ, first: {wrong[0]}"


@needs_cxxfilt
def test_the_fallback_reads_the_fixture_names_and_most_library_names():
    names = _fixture_names()
    assert [demangle_python(n) for n in names] == _cxxfilt(names)
    names = _libtorch_names()
    exact = sum(demangle_python(n) == e for n, e in zip(names, _cxxfilt(names), strict=True))
    assert exact >= FALLBACK_EXACT_LIBTORCH


def test_names_that_are_not_mangled_come_back_unchanged():
    for name in ("saxpy", "_Zjunk", "_Z", "", "triton_poi_fused_add_0"):
        assert demangle(name) == name
