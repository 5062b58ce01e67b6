"""Byte and half-word operand selectors of the video instructions (PTX ISA 9.7.10) are read
and refused as one unsupported construct at their place, never misread."""

from __future__ import annotations

import pytest

from kernelcheck.errors import UnsupportedFeature
from kernelcheck.ptx.parser import parse_ptx

KERNEL = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out)
{
    .reg .b32 %r<4>;
    .reg .b32 bare;
    mov.u32 %r1, 7;
    mov.u32 bare, 9;
    vadd.u32.u32.u32.add %r2, OPERAND, %r1, %r1;
    ret;
}
"""


@pytest.mark.parametrize("operand", ["%r1.b0", "%r1.h1", "bare.b3", "%r1.b3210", "%r1.h10"])
def test_a_selected_operand_is_an_unsupported_construct_at_its_place(operand):
    with pytest.raises(UnsupportedFeature) as info:
        parse_ptx(KERNEL.replace("OPERAND", operand), filename="video.ptx")
    message = str(info.value)
    assert message.startswith("video.ptx:10:")
    assert "unsupported" in message and operand in message
    assert "\n" not in message


def test_vector_elements_are_not_selectors():
    module = parse_ptx(KERNEL.replace("OPERAND", "%r1").replace(
        ".reg .b32 bare;", ".reg .v4 .b32 bare;").replace("mov.u32 bare, 9;",
                                                          "mov.u32 bare.b, 9;"))
    assert module.get_function("k") is not None
