"""PTX constant expressions: tokenize, parse and evaluate (PTX ISA 9.x §4.5.4, §4.5.5).

An operand or initializer such as ``(1<<4)+3``, ``N-1``, ``sym+8``, ``!%p1`` or ``%p1|%p2``
reaches the front end as one ``EXPRESSION`` token; this module turns its text into a small
tree and folds what is constant. Names stay in the tree: whether a name is a register, a
variable or a label is only known once the scopes of its function are resolved
(:mod:`kernelcheck.ptx.scopes`).

Evaluation follows the ISA's rules (§4.5.5, "Constant Expression Evaluation Rules"):

* integer literals are ``.s64`` unless they do not fit or carry the ``U`` suffix, then
  ``.u64`` (§4.5.1); floating-point literals are ``.f64`` (§4.5.2); hexadecimal float forms
  (``0f...``) are not allowed in expressions (ptxas rejects them);
* binary arithmetic and bitwise operators use the usual conversions: ``.u64`` if either
  integer operand is ``.u64``, else ``.s64``; results wrap to 64 bits; ``/`` truncates
  toward zero; ``%`` works on the unsigned 64-bit values and gives ``.u64`` (ptxas of
  CUDA 13.0: ``-7 % 4`` is 1); ``?:`` gives the chosen operand with its own type;
* shifts keep the type of the left operand (``>>`` is arithmetic on ``.s64``);
* comparisons, ``!``, ``&&`` and ``||`` give ``.s64`` 0 or 1;
* ``(.s64)`` and ``(.u64)`` cast integers only; integers and floats never mix (ptxas:
  "Constant expression type mismatch"); ``%``, shifts, bitwise and logical operators take
  integers only;
* ``WARP_SZ`` is the predefined constant 32 (§4.4, predefined identifiers).

A division by zero is an error. Where the ISA's table leaves a case open, the rule is
what ptxas of CUDA 13.0 computes (checked by compiling such expressions and reading the
constants in the SASS).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["ConstExprError", "Node", "parse_expression", "evaluate", "names_in", "WARP_SIZE",
           "is_constant"]

#: The value of the predefined identifier ``WARP_SZ`` (PTX ISA §4.4).
WARP_SIZE = 32

_MASK = (1 << 64) - 1

_TOKEN = re.compile(
    r"(?P<ws>\s+)"
    r"|(?P<cast>\(\s*\.(?:s64|u64)\s*\))"
    r"|(?P<float>\d+\.\d*(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+)"
    r"|(?P<int>0[xX][0-9a-fA-F]+U?|0[bB][01]+U?|\d+U?)"
    r"|(?P<name>%[\w$]+(?:\.[xyzwrgba](?![\w$]))?|[A-Za-z_$][\w$]*(?:\.[xyzwrgba](?![\w$]))?)"
    r"|(?P<op><<|>>|<=|>=|==|!=|&&|\|\||[-+*/<>&^|?:!~()%])"
)

# Binary operators by binding strength (C's table, PTX ISA §4.5.4).
_BINARY = {
    "||": 1, "&&": 2, "|": 3, "^": 4, "&": 5, "==": 6, "!=": 6,
    "<": 7, ">": 7, "<=": 7, ">=": 7, "<<": 8, ">>": 8, "+": 9, "-": 9,
    "*": 10, "/": 10, "%": 10,
}


class ConstExprError(Exception):
    """A malformed or ill-typed constant expression; ``offset`` is within the text."""

    def __init__(self, message: str, offset: int = 0) -> None:
        super().__init__(message)
        self.message = message
        self.offset = offset


@dataclass(frozen=True, slots=True)
class Node:
    """One node of an expression tree.

    ``kind`` is ``"num"`` (``value`` a Python int or float, ``type`` ``s64``/``u64``/``f64``),
    ``"name"`` (``value`` the identifier text), ``"unary"`` / ``"cast"`` (``op`` and one
    child), ``"binary"`` (``op`` and two children) or ``"cond"`` (three children). ``offset``
    is where the node starts in the expression text.
    """

    kind: str
    value: object = None
    type: str = ""
    op: str = ""
    children: tuple[Node, ...] = ()
    offset: int = 0


def _tokens(text: str) -> list[tuple[str, str, int]]:
    out = []
    pos = 0
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if match is None:
            raise ConstExprError(f"unexpected character {text[pos]!r} in expression", pos)
        kind = match.lastgroup
        if kind != "ws":
            out.append((kind, match.group(kind), pos))
        pos = match.end()
    return out


class _Parser:
    def __init__(self, text: str) -> None:
        self.tokens = _tokens(text)
        self.k = 0

    def peek(self):
        return self.tokens[self.k] if self.k < len(self.tokens) else ("end", "", -1)

    def take(self):
        token = self.peek()
        self.k += 1
        return token

    def expect(self, value: str) -> None:
        kind, text, offset = self.take()
        if text != value or kind != "op":
            raise ConstExprError(f"expected {value!r} in expression", max(offset, 0))

    def expression(self) -> Node:
        condition = self.binary(1)
        kind, text, offset = self.peek()
        if kind == "op" and text == "?":
            self.take()
            then = self.expression()
            self.expect(":")
            other = self.expression()
            return Node("cond", children=(condition, then, other), offset=condition.offset)
        return condition

    def binary(self, level: int) -> Node:
        left = self.unary()
        while True:
            kind, text, offset = self.peek()
            strength = _BINARY.get(text) if kind == "op" else None
            if strength is None or strength < level:
                return left
            self.take()
            right = self.binary(strength + 1)
            left = Node("binary", op=text, children=(left, right), offset=left.offset)

    def unary(self) -> Node:
        kind, text, offset = self.take()
        if kind == "op" and text in ("-", "+", "!", "~"):
            return Node("unary", op=text, children=(self.unary(),), offset=offset)
        if kind == "cast":
            return Node("cast", op="u64" if "u64" in text else "s64",
                        children=(self.unary(),), offset=offset)
        if kind == "op" and text == "(":
            inner = self.expression()
            self.expect(")")
            return inner
        if kind == "int":
            return _integer(text, offset)
        if kind == "float":
            return Node("num", float(text), "f64", offset=offset)
        if kind == "name":
            if text == "WARP_SZ":
                return Node("num", WARP_SIZE, "s64", offset=offset)
            return Node("name", text, offset=offset)
        if kind == "end":
            raise ConstExprError("expression ends too early", max(offset, 0))
        raise ConstExprError(f"unexpected {text!r} in expression", offset)


def _integer(text: str, offset: int) -> Node:
    unsigned = text.endswith("U")
    digits = text[:-1] if unsigned else text
    if digits[:2] in ("0x", "0X"):
        value = int(digits[2:], 16)
    elif digits[:2] in ("0b", "0B"):
        value = int(digits[2:], 2)
    elif len(digits) > 1 and digits[0] == "0":
        value = int(digits, 8)
    else:
        value = int(digits)
    if value > _MASK:
        raise ConstExprError(f"integer constant {text} does not fit in 64 bits", offset)
    return Node("num", value, "u64" if unsigned or value >= 1 << 63 else "s64",
                offset=offset)


def parse_expression(text: str) -> Node:
    """Parse the text of a constant expression into a :class:`Node` tree.

    Folds every subtree whose leaves are all numbers (so a fully constant expression comes
    back as one ``"num"`` node).

    Examples
    --------
    >>> parse_expression("(1<<4)+3").value
    19
    >>> parse_expression("%r1+1").kind
    'binary'
    """
    parser = _Parser(text)
    node = parser.expression()
    if parser.k != len(parser.tokens):
        kind, token, offset = parser.peek()
        raise ConstExprError(f"unexpected {token!r} in expression", offset)
    return fold(node)


def is_constant(node: Node) -> bool:
    """Whether ``node`` has no names left."""
    return node.kind == "num"


def names_in(node: Node) -> list[Node]:
    """The ``"name"`` nodes of the tree, left to right."""
    out: list[Node] = []
    stack = [node]
    while stack:
        item = stack.pop()
        if item.kind == "name":
            out.append(item)
        stack.extend(reversed(item.children))
    return out


def fold(node: Node) -> Node:
    """Evaluate every constant subtree of ``node`` (iteratively, bottom-up)."""
    if node.kind in ("num", "name"):
        return node
    children = tuple(fold(child) for child in node.children)
    if all(child.kind == "num" for child in children):
        value, kind = _apply(node, children)
        return Node("num", value, kind, offset=node.offset)
    return Node(node.kind, node.value, node.type, node.op, children, node.offset)


def evaluate(node: Node) -> tuple[int | float, str]:
    """``(value, type)`` of a constant tree; integers are returned as their signed or
    unsigned Python value according to the type. Raises ConstExprError if a name is left."""
    folded = fold(node)
    if folded.kind != "num":
        name = names_in(folded)[0]
        raise ConstExprError(f"{name.value} is not a constant", name.offset)
    return folded.value, folded.type


def _signed(value: int) -> int:
    value &= _MASK
    return value - (1 << 64) if value >> 63 else value


def _typed(value: int, kind: str) -> int:
    return _signed(value) if kind == "s64" else value & _MASK


def _apply(node: Node, children: tuple[Node, ...]) -> tuple[int | float, str]:
    kinds = [c.type for c in children]
    values = [c.value for c in children]
    floating = ["f64" in k for k in kinds]
    op = node.op
    if node.kind == "cast":
        if kinds[0] == "f64":
            raise ConstExprError("an integer constant expression is expected after a cast",
                                 node.offset)
        return _typed(values[0], op), op
    if node.kind == "unary":
        (value,), (kind,) = values, kinds
        if op == "+":
            return value, kind
        if op == "-":
            return (-value, kind) if kind == "f64" else (_typed(-value, kind), kind)
        if kind == "f64":
            raise ConstExprError(f"operator {op!r} takes an integer", node.offset)
        if op == "!":
            return int(value == 0), "s64"
        return _typed(~value, kind), kind  # "~"
    if node.kind == "cond":
        if kinds[0] == "f64":
            raise ConstExprError("the condition of ?: must be an integer", node.offset)
        if floating[1] != floating[2]:
            raise ConstExprError("constant expression type mismatch", node.offset)
        # The chosen operand keeps its own type (ptxas: `(1 ? -1 : 2U) < 0` is 1).
        k = 1 if values[0] != 0 else 2
        return values[k], kinds[k]
    a, b = values
    if floating[0] != floating[1]:
        raise ConstExprError("constant expression type mismatch", node.offset)
    if floating[0]:
        return _float_binary(op, a, b, node.offset)
    if op in ("<<", ">>"):
        kind = kinds[0]
        count = b & _MASK if kinds[1] == "u64" else b
        if count < 0 or count >= 64:
            shifted = (-1 if a < 0 and op == ">>" else 0)
            return _typed(shifted, kind), kind
        if op == "<<":
            return _typed(a << count, kind), kind
        return _typed((a if kind == "s64" else a & _MASK) >> count, kind), kind
    kind = _common(kinds[0], kinds[1])
    x, y = _typed(a, kind), _typed(b, kind)
    if op in ("==", "!=", "<", ">", "<=", ">="):
        return int(_compare(op, x, y)), "s64"
    if op == "&&":
        return int(x != 0 and y != 0), "s64"
    if op == "||":
        return int(x != 0 or y != 0), "s64"
    if op == "%":
        # On the unsigned 64-bit values, with an unsigned result, as ptxas computes it
        # (`-7 % 4` is 1, `(7 % 4) - 5 < 0` is 0).
        if y == 0:
            raise ConstExprError("division by zero in constant expression", node.offset)
        return (x & _MASK) % (y & _MASK), "u64"
    if op == "/":
        if y == 0:
            raise ConstExprError("division by zero in constant expression", node.offset)
        quotient = abs(x) // abs(y) * (1 if (x < 0) == (y < 0) else -1)
        return _typed(quotient, kind), kind
    result = {"+": x + y, "-": x - y, "*": x * y, "&": x & y, "|": x | y, "^": x ^ y}[op]
    return _typed(result, kind), kind


def _float_binary(op: str, a: float, b: float, offset: int) -> tuple[int | float, str]:
    if op in ("==", "!=", "<", ">", "<=", ">="):
        return int(_compare(op, a, b)), "s64"
    if op == "+":
        return a + b, "f64"
    if op == "-":
        return a - b, "f64"
    if op == "*":
        return a * b, "f64"
    if op == "/":
        if b == 0:
            raise ConstExprError("division by zero in constant expression", offset)
        return a / b, "f64"
    raise ConstExprError(f"operator {op!r} takes integers", offset)


def _compare(op: str, x, y) -> bool:
    return {"==": x == y, "!=": x != y, "<": x < y, ">": x > y, "<=": x <= y,
            ">=": x >= y}[op]


def _common(a: str, b: str) -> str:
    if a == "f64" or b == "f64":
        return "f64"
    return "u64" if "u64" in (a, b) else "s64"
