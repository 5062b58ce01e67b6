"""One analysis for kernels with the same code: the records of a shared run are those of a
run that analyses every kernel, renamed; failures and differing module banks fall back to
analysing the kernel in its own image."""

from __future__ import annotations

import json

import pytest

from kernelcheck.corpus import KernelRecord, plan_jobs, run_corpus
from kernelcheck.sharing import SharingPlan, plan_sharing

from .sass.conftest import FIXTURES, needs_nvdisasm, without_line_info

pytestmark = needs_nvdisasm

SM90 = FIXTURES / "cubin" / "sm_90"


@pytest.fixture
def corpus(tmp_path):
    """Three cubins: elementwise, a byte copy of it, and a copy with one kernel renamed;
    and asserts (whose kernels read module bank 4) with a byte copy."""
    paths = []
    elementwise = without_line_info((SM90 / "elementwise.cubin").read_bytes())
    asserts = without_line_info((SM90 / "asserts.cubin").read_bytes())
    for name, data in [("a.cubin", elementwise), ("b.cubin", elementwise),
                       ("c.cubin", elementwise.replace(b"write_thread_ids",
                                                       b"write_thread_idz")),
                       ("d.cubin", asserts), ("e.cubin", asserts)]:
        path = tmp_path / name
        path.write_bytes(data)
        paths.append(str(path))
    return paths


def run(paths, **kwargs):
    records: list[KernelRecord] = []
    summary = run_corpus(paths, jobs=1, stage="analysis", on_record=records.append,
                         progress=False, options={"kernel_timeout": 30}, **kwargs)
    return summary, records


def by_place(records):
    return {(r.file, r.image, r.kernel): json.dumps(r.to_json(), sort_keys=True)
            for r in records}


def test_shared_records_equal_those_of_every_kernel_analysed(corpus):
    shared, records = run(corpus)
    alone, every = run(corpus, share=False)
    assert by_place(records) == by_place(every)
    assert len(records) == 5 * 3 + 3 * 2
    assert shared.kernels_shared == 5 * 2 + 3 and alone.kernels_shared == 0
    renamed = [r for r in records if r.kernel == "write_thread_idz"]
    assert renamed and renamed[0].to_json()["demangled"] == "write_thread_idz"
    # A copy's time is its renaming's.
    copies = [r for r in records if not r.file.endswith(("a.cubin", "d.cubin"))]
    assert max(r.seconds for r in copies) < 0.05


def test_a_kernel_pattern_leaves_out_the_images_it_matches_nothing_in(corpus):
    jobs = [job for path in corpus for job in plan_jobs(path)[0]]
    plan = plan_sharing(jobs, "saxpy", share=False)
    assert plan.whole == {3, 4} and not plan.copies_of
    plan = plan_sharing(jobs, "saxpy")
    assert plan.whole == {1, 2, 3, 4} and plan.copies_of == {(0, "saxpy"): [(1, "saxpy"),
                                                                           (2, "saxpy")]}


def test_copies_of_a_failed_image_are_analysed_in_their_own(corpus, monkeypatch):
    import kernelcheck.binary.nvdisasm as nvdisasm

    real = nvdisasm.disassemble

    def failing(data, *, label="<cubin>", **kwargs):
        if label.startswith(corpus[0]):
            raise nvdisasm.NvdisasmError(f"{label}: nvdisasm exited with status 1: boom")
        return real(data, label=label, **kwargs)

    monkeypatch.setattr(nvdisasm, "disassemble", failing)
    summary, records = run(corpus)
    _, every = run(corpus, share=False)
    assert summary.images_failed == 1
    ok = {k: v for k, v in by_place(records).items() if not k[0].endswith("a.cubin")}
    assert ok == {k: v for k, v in by_place(every).items() if not k[0].endswith("a.cubin")}
    assert all(r.status == "ok" for r in records if r.kernel is not None)


def test_a_kernel_reading_bank4_is_not_shared_across_different_banks(corpus, monkeypatch):
    import kernelcheck.sass.identity as identity

    # Every image a bank of its own: the asserts kernels, which read theirs, are analysed
    # in each image; the elementwise kernels, which do not, are still shared.
    monkeypatch.setattr(identity, "bank4_digest", lambda cubin: str(id(cubin)))
    summary, records = run(corpus)
    _, every = run(corpus, share=False)
    assert by_place(records) == by_place(every)
    assert summary.kernels_shared == 5 * 2


def test_the_plan_declines_a_bank4_reader_between_different_banks():
    plan = SharingPlan(copies_of={(0, "k"): [(1, "k"), (2, "k")]},
                       bank4={0: "x", 1: "x", 2: "y"})
    record = KernelRecord("f", "img0", "sm_90", "sass", "k", "ok", reads_module_bank=True,
                          analysis={"kernel": "k", "name": "k", "demangled": "k"})

    class Job:
        def __init__(self, image):
            self.file, self.image, self.arch = "f", image, "sm_90"

    copies = plan.copies(0, record, [Job("img0"), Job("img1"), Job("img2")])
    assert [(c.image, c.kernel) for c in copies] == [("img1", "k")]
    assert plan.unresolved() == {2: {"k"}}


def test_the_cli_says_how_many_kernels_were_shared(corpus, tmp_path, capsys):
    from kernelcheck.cli import main

    out = tmp_path / "out.jsonl"
    assert main(["analyze", *corpus, "--format", "jsonl", "-o", str(out)]) == 0
    assert "13 kernel(s) have the same code" in capsys.readouterr().err
    assert len(out.read_text().splitlines()) == 21
    assert main(["analyze", *corpus, "--format", "jsonl", "-o", str(out),
                 "--no-sharing"]) == 0
    assert "the same code" not in capsys.readouterr().err


def test_renaming_touches_names_not_words_that_contain_them():
    from kernelcheck.sharing import renamed_record

    class Job:
        file, image, arch = "/lib/b.so", ".nv_fatbin[2]#0 @0x40", "sm_90"

    reason = ("write at an unknown address in add at STG.E /*0040*/; "
              "call to $add$__internal_0 in /lib/a.so:.nv_fatbin[1]#0 @0x10")
    record = KernelRecord("/lib/a.so", ".nv_fatbin[1]#0 @0x10", "sm_90", "sass", "add", "ok",
                          analysis={"kernel": "add", "name": "add", "demangled": "add",
                                    "reasons": [reason],
                                    "results": [{"locations": [{"file": "/lib/a.so",
                                                                "kernel": "add"}]}]})
    copy = renamed_record(record, Job(), "sub")
    assert (copy.file, copy.image, copy.kernel) == (Job.file, Job.image, "sub")
    assert copy.analysis["reasons"] == [
        "write at an unknown address in sub at STG.E /*0040*/; "
        "call to $sub$__internal_0 in /lib/b.so:.nv_fatbin[2]#0 @0x40"]
    assert copy.analysis["results"][0]["locations"] == [{"file": "/lib/b.so",
                                                          "kernel": "sub"}]
    assert (copy.analysis["kernel"], copy.analysis["name"]) == ("sub", "sub")
    assert record.analysis["kernel"] == "add"  # the original is left as it was
