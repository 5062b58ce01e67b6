"""Launch files: what they accept, and one-line errors naming the bad item."""

from __future__ import annotations

import json

import numpy as np
import pytest

from kernelcheck.launchfile import LaunchFileError, load_launch_file, parse_launch
from kernelcheck.launchfile.values import decode_values, encode_value

HEAD = {"format": "kernelcheck-launch", "version": 1}


def launch(**fields):
    return parse_launch({**HEAD, **fields}, where="t.json")


def test_buffers_from_values_hex_size_and_fill():
    spec = launch(block=[2, 3], grid=4, shared_bytes=64, buffers={
        "a": {"type": "s16", "values": [-1, 2, "0x8000"]},
        "b": {"hex": "00ff"},
        "c": {"size": 3, "fill": 255},
        "d": {"type": "f32", "values": [1.5, "nan", "-0.0"], "count": 4},
    })
    assert spec.grid == (4, 1, 1) and spec.block == (2, 3, 1) and spec.shared_bytes == 64
    assert spec.get_buffer("a").data == bytes.fromhex("ffff02000080")
    assert spec.get_buffer("b").data == b"\x00\xff"
    assert spec.get_buffer("c").data == b"\xff\xff\xff"
    d = spec.get_buffer("d").data
    assert len(d) == 16 and d[:4] == np.float32(1.5).tobytes() and d[8:12] == b"\0\0\0\x80"
    # outputs default to every buffer, with its type
    assert [(o.buffer, o.type) for o in spec.outputs] == [
        ("a", "s16"), ("b", None), ("c", None), ("d", "f32")]


def test_npy_paths_are_relative_to_the_launch_file(tmp_path):
    np.save(tmp_path / "x.npy", np.array([1, 2, 3], dtype=">u4"))  # big-endian on disk
    (tmp_path / "l.json").write_text(json.dumps({**HEAD, "block": [1], "buffers": {
        "x": {"npy": "x.npy", "type": "u32"}}}))
    spec = load_launch_file(tmp_path / "l.json")
    assert decode_values(spec.get_buffer("x").data, "u32") == [1, 2, 3]


def test_expectations_become_outputs_and_keep_tolerances():
    spec = launch(block=[1], buffers={"o": {"type": "f32", "count": 2}}, outputs=[],
                  expect={"o": {"values": [1.0, 2.0], "ulp": 2, "nan": "any"}})
    (expectation,) = spec.expectations
    assert expectation.ulp == 2 and expectation.nan == "any" and expectation.type == "f32"
    assert [o.buffer for o in spec.outputs] == ["o"]


@pytest.mark.parametrize("fields, message", [
    ({"block": [1], "version": 2}, "version: this kernelcheck reads version 1, found 2"),
    ({}, "missing \"block\""),
    ({"block": [0]}, "block[0]: expected an integer >= 1, found 0"),
    ({"block": [1, 1, 1, 1]}, "block: expected 1 to 3 positive integers"),
    ({"block": [1], "buffers": {"a": {"type": "u8", "values": [1, 300]}}},
     "buffers.a.values: value [1]: value 300 does not fit u8"),
    ({"block": [1], "buffers": {"a": {"type": "u9", "values": [1]}}},
     "buffers.a.type: unknown type 'u9'"),
    ({"block": [1], "buffers": {"a": {"values": [1]}}}, "\"values\" needs a \"type\""),
    ({"block": [1], "buffers": {"a": {"hex": "abc"}}}, "buffers.a.hex: not a string of hex"),
    ({"block": [1], "buffers": {"a": {"hex": "00", "size": 0}}}, "buffers.a.size"),
    ({"block": [1], "buffers": {"a": {"hex": "0000", "size": 1}}}, "more than its size 1"),
    ({"block": [1], "buffers": {"a": {}}}, "give its contents"),
    ({"block": [1], "params": [{"buffer": "zz"}]}, "params[0].buffer: no buffer named 'zz'"),
    ({"block": [1], "params": [{"type": "f16", "value": 1e6}]}, "params[0].value: 1000000.0 "
     "overflows f16"),
    ({"block": [1], "params": [{"value": 1, "hex": "00"}]}, "give exactly one of"),
    ({"block": [1], "buffers": {"a": {"size": 4}}, "expect": {"a": {"hex": "00"}}},
     "expected contents are 1 bytes but the buffer holds 4"),
    ({"block": [1], "buffers": {"a": {"size": 4}}, "expect": {"a": {"hex": "00000000",
                                                                    "ulp": 1}}},
     "tolerances need a floating-point type"),
    ({"block": [1], "gird": [1]}, "unknown key 'gird'"),
])
def test_errors_name_the_file_and_the_item(fields, message):
    with pytest.raises(LaunchFileError) as caught:
        launch(**fields)
    text = str(caught.value)
    assert text.startswith("t.json: ") and message in text and "\n" not in text


def test_not_json_names_line_and_column(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('{"format": "kernelcheck-launch",\n  "version": 1,, }')
    with pytest.raises(LaunchFileError, match=r"bad.json:2:16: not JSON"):
        load_launch_file(path)


@pytest.mark.parametrize("value, type_name, hex_bytes", [
    (-1, "s8", "ff"), (255, "u8", "ff"), ("0x8000", "s16", "0080"), ("-5", "s32", "fbffffff"),
    (1, "f16", "003c"), ("inf", "f16", "007c"), ("0x7e00", "f16", "007e"),
    (1.0, "bf16", "803f"), ("-inf", "bf16", "80ff"), (1.00390625, "bf16", "803f"),
    (1.01171875, "bf16", "823f"),  # halfway cases round to even
    ("-0.0", "f32", "00000080"), (0.1, "f64", "9a9999999999b93f"), (True, "u32", "01000000"),
])
def test_value_encoding(value, type_name, hex_bytes):
    assert encode_value(value, type_name).hex() == hex_bytes
