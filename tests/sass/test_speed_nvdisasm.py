"""nvdisasm's plain listing (the faster form) reads into the same IR as its ``-json``."""

from __future__ import annotations

import json

import pytest

from kernelcheck.binary.cubin import CubinFile
from kernelcheck.binary.nvdisasm import _from_json, _from_listing, disassemble
from kernelcheck.sass.function import build_function
from kernelcheck.sass.loader import functions_of_cubin

from .conftest import CUBINS, needs_nvdisasm

LISTING = """\
\t.target\tsm_90
//--------------------- .text.k --------------------------
\t.section\t.text.k,"ax",@progbits
        .size           k,(.L_x_9 - k)
k:
.text.k:
        /*0000*/                   ISETP.GE.AND P0, PT, R0, 0x10, PT ;
        /*0010*/              @P0 BRA `(.L_x_1) ;
        /*0020*/                   STL [R1], R2                        (*"SpillRefill"*);
        /*0030*/                   CALL.REL.NOINC `($k$sub) ;
.L_x_1:
        /*0040*/                   BSSY B0, `(.L_x_9) ;
        /*0050*/                   RET.REL.NODEC R2 `(k) ;
.L_x_9:
        /*0060*/                   EXIT ;
.L_x_2:
//--------------------- .text.other --------------------------
.text.other:
        /*0000*/                   BRA `(.L_x_2) ;
        /*0010*/                   EXIT ;
"""


def test_listing_references_become_offsets_and_annotations_go():
    functions = {f.name: f for f in _from_listing(LISTING)}
    assert [(i.offset, i.text) for i in functions["k"].instructions] == [
        (0x0, "ISETP.GE.AND P0, PT, R0, 0x10, PT"),
        (0x10, "@P0 BRA 0x40"),
        (0x20, "STL [R1], R2"),
        (0x30, "CALL.REL.NOINC $k$sub"),
        (0x40, "BSSY B0, 0x60"),
        (0x50, "RET.REL.NODEC R2 ,k"),
        (0x60, "EXIT"),
    ]
    # A label belongs to its own function: .L_x_2 closes k (its end, 0x70), and is
    # unknown in `other`, where it stays a name.
    assert [i.text for i in functions["other"].instructions] == ["BRA .L_x_2", "EXIT"]


def test_json_p2r_gets_its_pr_operand_back():
    document = [{}, [{"function-name": "k", "start": 0, "sass-instructions": [
        {"predicate": "PR", "opcode": "P2R", "operands": "R23,RZ,0x4"},
        {"predicate": "@!P1", "opcode": "P2R", "operands": "R6,PR,R10,0xf"},
        {"predicate": "@P0", "opcode": "EXIT"},
        {"opcode": "NOP"},
    ]}]]
    (function,) = _from_json(json.dumps(document), "k.cubin")
    assert [i.text for i in function.instructions] == [
        "P2R R23,PR,RZ,0x4", "@!P1 P2R R6,PR,R10,0xf", "@P0 EXIT", "NOP"]
    built = build_function("k", [(i.offset, i.text) for i in function.instructions])
    assert [(i.opcode, i.guard) for i in built.instructions][:1] == [("P2R", None)]
    assert built.instructions[0] == build_function(
        "k", [(0, "P2R R23, PR, RZ, 0x4")]).instructions[0]


@needs_nvdisasm
@pytest.mark.parametrize("path", CUBINS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_listing_and_json_give_equal_ir(path):
    data = path.read_bytes()
    cubin = CubinFile(data)
    from_listing = disassemble(data)
    from_json = disassemble(data, use_json=True)
    assert from_listing.keys() == from_json.keys()
    for name in from_listing:
        assert [i.offset for i in from_listing[name].instructions] == [
            i.offset for i in from_json[name].instructions]
    listing_functions, listing_failures = functions_of_cubin(cubin, from_listing)
    json_functions, json_failures = functions_of_cubin(cubin, from_json)
    assert not listing_failures and not json_failures
    assert listing_functions == json_functions
