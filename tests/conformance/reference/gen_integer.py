"""Generated sweeps of the integer instructions the other integer cases leave out: the carry
chains on every type (PTX ISA 9.7.2 "Extended-Precision Integer Arithmetic": add.cc, addc,
sub.cc, subc, mad.cc, madc), sad, mad24, bfind.shiftamt, dp2a, dp4a and min/max.relu
(9.7.1.7, 9.7.1.6, 9.7.1.18, 9.7.1.24-25, 9.7.1.10-11).

Each chain is a multi-word computation whose words are the reference's: add.cc/addc give the
words of the sum, sub.cc/subc of the difference (a pure subtraction chain, whose words are the
same whether CC.CF holds the borrow or its complement, see integer/carry_mixed), and
mad.lo.cc/madc.hi.cc/madc.lo of a product plus an addend; .s and .u chains differ only in
madc.hi, where the high word of the signed product is added. sad: c + |a - b|. mad24.lo:
the low 32 bits of the 48-bit product of the 24-bit operands (sign-extended for .s32) plus
c; mad24.hi: its bits 47..16 plus c. min/max.relu: the result, or 0 if negative.
"""

from __future__ import annotations

from tests.conformance.reference.bitops import bfind, dp2a, dp4a
from tests.conformance.reference.bits import signed, unsigned
from tests.conformance.reference.sweep_values import INT_VALUES, hexes
from tests.conformance.sweep import Form, Operand, Sweep, register


def _value(x: int, type_name: str) -> int:
    bits = int(type_name[1:])
    return signed(x, bits) if type_name[0] == "s" else unsigned(x, bits)


def _word(x: int, k: int, bits: int) -> int:
    return unsigned(x >> (bits * k), bits)


def _chain_forms(type_name: str) -> list[Form]:
    bits = int(type_name[1:])
    w = str(bits)
    forms = []

    def u(x: int) -> int:
        return unsigned(x, bits)

    # add.cc / addc.cc / addc: (b:a) + (a:b), three words
    add_chain = (f"add.cc.{type_name} %rd1, %a{w}, %b{w};\n"
                 f"addc.cc.{type_name} %rd2, %b{w}, %a{w};\n"
                 f"addc.{type_name} %rd3, 0, 0;")
    if bits == 32:
        add_chain = add_chain.replace("%rd", "%r")

    def total(th):
        return (u(th.b) << bits | u(th.a)) + (u(th.a) << bits | u(th.b))

    for k in range(3):
        forms.append(Form(f"u{w}", add_chain + f"\nmov.b{w} {{d}}, %{'r' if bits == 32 else 'rd'}"
                          f"{k + 1};", lambda th, k=k: _word(total(th), k, bits)))
    # sub.cc / subc.cc / subc: (b:a) - (a:b)
    sub_chain = (f"sub.cc.{type_name} %rd1, %a{w}, %b{w};\n"
                 f"subc.cc.{type_name} %rd2, %b{w}, %a{w};\n"
                 f"subc.{type_name} %rd3, 0, 0;")
    if bits == 32:
        sub_chain = sub_chain.replace("%rd", "%r")

    def difference(th):
        return (u(th.b) << bits | u(th.a)) - (u(th.a) << bits | u(th.b))

    for k in range(3):
        forms.append(Form(f"u{w}", sub_chain + f"\nmov.b{w} {{d}}, %{'r' if bits == 32 else 'rd'}"
                          f"{k + 1};", lambda th, k=k: _word(difference(th), k, bits)))
    # mad.lo.cc / madc.hi.cc / madc.lo: lo(a b) + c, then hi(a b) + a + carry, then the carry
    mad_chain = (f"mad.lo.cc.{type_name} %rd1, %a{w}, %b{w}, %c{w};\n"
                 f"madc.hi.cc.{type_name} %rd2, %a{w}, %b{w}, %a{w};\n"
                 f"madc.lo.{type_name} %rd3, 0, 0, 0;")
    if bits == 32:
        mad_chain = mad_chain.replace("%rd", "%r")

    def mad_words(th):
        product = _value(th.a, type_name) * _value(th.b, type_name)
        first = u(product) + u(th.c)
        carry = first >> bits
        second = u(product >> bits) + u(th.a) + carry
        carry2 = second >> bits
        return [u(first), u(second), carry2]

    for k in range(3):
        forms.append(Form(f"u{w}", mad_chain + f"\nmov.b{w} {{d}}, %{'r' if bits == 32 else 'rd'}"
                          f"{k + 1};", lambda th, k=k: mad_words(th)[k]))
    return forms


_CHAIN_VALUES = hexes([0x0, 0x1, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0x7FFFFFFFFFFFFFFF,
                       0x8000000000000000, 0xFFFFFFFFFFFFFFFF, 0x123456789ABCDEF0])

chains = Sweep("integer", "gen_carry",
               "add.cc/addc, sub.cc/subc and mad.cc/madc chains on .u32, .s32, .u64 and .s64 "
               "(PTX ISA 9.7.2.1-9.7.2.6).",
               [Operand("a", "u64", _CHAIN_VALUES), Operand("b", "u64", _CHAIN_VALUES),
                Operand("c", "u64", hexes([0x0, 0xFFFFFFFFFFFFFFFF, 0x8000000000000001]))])
for _t in ("u32", "s32", "u64", "s64"):
    chains.forms += _chain_forms(_t)
register(chains)

misc = Sweep("integer", "gen_integer_misc",
             "sad on every type, mad24.lo/.hi on .u32 and .s32, bfind.shiftamt on .u64 and "
             ".s64, dp2a.lo/.hi and dp4a on every type pair, min/max.relu.s32 (PTX ISA "
             "9.7.1.7, 9.7.1.6, 9.7.1.18, 9.7.1.24, 9.7.1.25, 9.7.1.10, 9.7.1.11).",
             [Operand("a", "u64", INT_VALUES), Operand("b", "u64", INT_VALUES),
              Operand("c", "u64", hexes([0x0, 0x8000000180000001]))])
for _t in ("u16", "s16", "u32", "s32", "u64", "s64"):
    _w = _t[1:]
    misc.forms.append(Form(
        f"u{_w}", f"sad.{_t} {{d}}, %a{_w}, %b{_w}, %c{_w};",
        lambda th, t=_t: _value(th.c, t) + abs(_value(th.a, t) - _value(th.b, t))))


def _mad24(a: int, b: int, c: int, is_signed: bool, hi: bool) -> int:
    value = signed if is_signed else unsigned
    product = value(a, 24) * value(b, 24)
    return unsigned((product >> 16 if hi else product) + c, 32)


for _t in ("u32", "s32"):
    for _mode in ("lo", "hi"):
        misc.forms.append(Form(
            "u32", f"mad24.{_mode}.{_t} {{d}}, %a32, %b32, %c32;",
            lambda th, s=_t == "s32", hi=_mode == "hi": _mad24(th.a, th.b, unsigned(th.c, 32),
                                                               s, hi)))
for _t in ("u64", "s64"):
    misc.forms.append(Form("u32", f"bfind.shiftamt.{_t} {{d}}, %a64;",
                           lambda th, s=_t == "s64": bfind(th.a, 64, s, True)))
    misc.forms.append(Form("u32", f"bfind.{_t} {{d}}, %a64;",
                           lambda th, s=_t == "s64": bfind(th.a, 64, s, False)))
for _at in ("u32", "s32"):
    for _bt in ("u32", "s32"):
        _signed = "s32" in (_at, _bt)
        for _mode in ("lo", "hi"):
            misc.forms.append(Form(
                "u32", f"dp2a.{_mode}.{_at}.{_bt} {{d}}, %a32, %b32, %c32;",
                lambda th, a=_at, b=_bt, hi=_mode == "hi", s=_signed: unsigned(dp2a(
                    unsigned(th.a, 32), unsigned(th.b, 32),
                    signed(th.c, 32) if s else unsigned(th.c, 32), a == "s32", b == "s32", hi),
                    32)))
        misc.forms.append(Form(
            "u32", f"dp4a.{_at}.{_bt} {{d}}, %a32, %b32, %c32;",
            lambda th, a=_at, b=_bt, s=_signed: unsigned(dp4a(
                unsigned(th.a, 32), unsigned(th.b, 32),
                signed(th.c, 32) if s else unsigned(th.c, 32), a == "s32", b == "s32"), 32)))
for _op in ("min", "max"):
    misc.forms.append(Form(
        "u32", f"{_op}.relu.s32 {{d}}, %a32, %b32;",
        lambda th, op=_op: max(0, (min if op == "min" else max)(signed(th.a, 32),
                                                               signed(th.b, 32)))))
register(misc)
