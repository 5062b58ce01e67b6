"""The fast path of the SASS parser gives what the grammar gives, or steps aside."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from kernelcheck.errors import SassSyntaxError
from kernelcheck.sass.fast_path import FastPath, split_operands
from kernelcheck.sass.grammar import (
    InstructionParts,
    parse_instruction_text,
    parse_with_grammar,
)

from .conftest import CUBINS, needs_nvdisasm

SAMPLE = Path(__file__).parent / "data" / "libtorch_sm90_sample.txt.gz"


def _fresh_fast_path() -> FastPath:
    return FastPath(lambda text: parse_with_grammar(text).operands, InstructionParts)


def _reference(text: str):
    try:
        return parse_with_grammar(text)
    except SassSyntaxError:
        return None


def _sample_texts() -> list[str]:
    with gzip.open(SAMPLE, "rt") as handle:
        return [line.rstrip("\n") for line in handle if not line.startswith("#")]


def test_libtorch_sample_gives_the_grammars_parts():
    texts = _sample_texts()
    assert len(texts) > 20_000
    fast = _fresh_fast_path()
    taken = 0
    for text in texts:
        parts = fast.parse(text)
        reference = _reference(text)
        if parts is not None:
            taken += 1
            assert parts == reference, text
        else:
            # Only what the grammar must see whole steps aside; it still parses.
            assert reference is not None, text
            assert parse_instruction_text(text) == reference
    # The sample holds every distinct operand of 24 images: nearly all take the fast path.
    assert taken > 0.98 * len(texts)


@needs_nvdisasm
def test_every_fixture_instruction_gives_the_grammars_parts(sass_images):
    fast = _fresh_fast_path()
    count = 0
    for path in CUBINS:
        from kernelcheck.binary.nvdisasm import disassemble

        for function in disassemble(path.read_bytes()).values():
            for instruction in function.instructions:
                parts = fast.parse(instruction.text)
                assert parts is not None, instruction.text
                assert parts == parse_with_grammar(instruction.text), instruction.text
                count += 1
    assert count > 1000


@pytest.mark.parametrize("text", [
    "IADD3 R0, R1, %r2, RZ",        # an operand the grammar rejects
    "IADD3 R0, , R2",               # an empty operand
    "IADD3 R0, R1,",                # a trailing comma
    "@P0",                          # a guard alone
    "@ P0 EXIT",                    # a guard the fast path does not split
    "iadd3 R0, R1, R2",             # not an opcode
    "RET.REL.NODEC R2 _Z1kv",       # two operands without a comma
    "LDG.E R0, [R2.64+",            # unbalanced
])
def test_what_the_fast_path_cannot_split_goes_to_the_grammar(text):
    assert _fresh_fast_path().parse(text) is None
    reference = _reference(text)
    if reference is None:
        with pytest.raises(SassSyntaxError) as fast_error:
            parse_instruction_text(text, filename="k.sass", line=2)
        with pytest.raises(SassSyntaxError) as grammar_error:
            parse_with_grammar(text, filename="k.sass", line=2)
        assert (fast_error.value.column, fast_error.value.expected) == (
            grammar_error.value.column, grammar_error.value.expected)
    else:
        assert parse_instruction_text(text) == reference


def test_a_rejected_operand_does_not_spoil_a_later_good_one():
    fast = _fresh_fast_path()
    assert fast.parse("IADD3 R0, R1, %r2, RZ") is None
    assert fast.parse("IADD3 R0, R1, R2, RZ") == parse_with_grammar("IADD3 R0, R1, R2, RZ")


def test_operands_split_at_top_level_commas_only():
    assert split_operands("R2, {5,4,3}, c[0x0][0x10]") == ["R2", "{5,4,3}", "c[0x0][0x10]"]
    assert split_operands("R23,PR,RZ,0x4") == ["R23", "PR", "RZ", "0x4"]
    assert split_operands("R2, ") is None
