"""Binaries through load_input, the PTX-versus-SASS choice, bad images, and the pool run."""

from __future__ import annotations

import json
import re

import pytest

from kernelcheck.binary.nvdisasm import NvdisasmError
from kernelcheck.errors import SassSyntaxError
from kernelcheck.inputs import load_input
from kernelcheck.sass.listing import parse_sass

from .conftest import FIXTURES, needs_nvdisasm

pytestmark = needs_nvdisasm

HOST = FIXTURES / "exe" / "vec_add_host"


@pytest.mark.parametrize("name", ["elementwise.fatbin", "elementwise_compressed.fatbin",
                                  "elementwise_compressed_zstd.fatbin"])
def test_fatbins_parse_into_sass_ir(name):
    loaded = load_input(FIXTURES / "fatbin" / name)
    assert loaded.errors == ()
    sass = [m for m in loaded.modules if m.language == "sass"]
    assert sass and all(m.module.kernels for m in sass)
    assert {k.name for m in sass for k in m.module.kernels} >= {"vec_add", "saxpy"}


def test_host_executable_prefers_the_cubin_and_says_why():
    loaded = load_input(HOST, arch="sm_90")
    assert loaded.errors == ()
    assert {m.language for m in loaded.modules} == {"sass"}
    kernels = [m for m in loaded.modules if m.module.kernels]
    assert len(kernels) == 1 and "PTX for the same architecture" in kernels[0].note
    ptx = load_input(HOST, arch="sm_90", prefer="ptx")
    assert {m.language for m in ptx.modules} == {"ptx"}
    assert "also holds a cubin" in ptx.modules[0].note
    # sm_80 has a cubin and no PTX: SASS, and the note says there is no PTX.
    sm80 = load_input(HOST, arch="sm_80")
    assert all(m.language == "sass" and "no PTX" in m.note for m in sm80.modules)


def test_nvdisasm_failing_on_one_image_names_it_and_the_rest_is_analysed(monkeypatch):
    import kernelcheck.sass.loader as loader

    real = loader.disassemble

    def flaky(data, *, label="<cubin>", **kwargs):
        if label.endswith("#2 @0x1ba0"):
            raise NvdisasmError(f"{label}: nvdisasm exited with status 1: boom")
        return real(data, label=label, **kwargs)

    monkeypatch.setattr(loader, "disassemble", flaky)
    loaded = load_input(HOST)
    assert len(loaded.errors) == 1
    assert str(HOST) in loaded.errors[0] and "#2 @0x1ba0" in loaded.errors[0]
    assert [m.arch for m in loaded.modules if m.module.kernels] == ["sm_80"]


def test_corpus_run_survives_a_failing_image_and_groups_the_cause(monkeypatch):
    import kernelcheck.binary.nvdisasm as nvdisasm
    from kernelcheck.corpus import run_corpus

    real = nvdisasm.disassemble

    def flaky(data, *, label="<cubin>", **kwargs):
        if label.endswith("#0 @0xc60"):
            raise NvdisasmError(f"{label}: nvdisasm exited with status 1: boom")
        return real(data, label=label, **kwargs)

    monkeypatch.setattr(nvdisasm, "disassemble", flaky)
    records = []
    summary = run_corpus(str(HOST), jobs=1, on_record=records.append, progress=False)
    assert summary.images == 4 and summary.images_failed == 1
    assert summary.causes == {"NvdisasmError": 1}
    failed = [r for r in records if r.status == "failed"]
    assert failed[0].image.endswith("#0 @0xc60") and "boom" in failed[0].error
    assert [r.kernel for r in records if r.status == "ok"] == ["vec_add"]


def test_analyze_jsonl_over_a_pool(tmp_path, capsys):
    from kernelcheck.cli import main

    out = tmp_path / "out.jsonl"
    status = main(["analyze", str(HOST), "--arch", "sm_90", "--jobs", "2",
                   "--jsonl", str(out)])
    assert status == 0
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["kernel"], r["status"], r["language"]) for r in lines] == [
        ("vec_add", "ok", "sass")]
    accesses = {(a["space"], a["kind"]): a["count"] for a in lines[0]["accesses"]}
    assert accesses[("global", "read")] == 2 and accesses[("global", "write")] == 1
    err = capsys.readouterr().err
    assert "1 kernel(s): 1 analysed, 0 failed" in err
    assert re.search(r"analysis time per kernel: median \d+ ms, p90 \d+ ms, max \d+ ms", err)
    assert "seconds" not in lines[0]  # the lines stay the same from run to run
    assert lines[0]["class"] == "conditional" and lines[0]["verdict"] == "depends_on_arguments"


def test_listing_errors_give_the_line_and_column_of_the_text():
    text = ".text.k:\n        /*0000*/  MOV R0, 0x1 ;\n        /*0010*/  IADD3 R0, R0, %x ;\n"
    with pytest.raises(SassSyntaxError) as caught:
        parse_sass(text, filename="k.sass")
    assert (caught.value.line, caught.value.column) == (3, 33)
