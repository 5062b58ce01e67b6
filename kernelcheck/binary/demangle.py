"""Itanium C++ ABI demangling of CUDA kernel names, as binutils ``c++filt`` prints them.

Two implementations, the first that is available is used:

1. libstdc++'s ``abi::__cxa_demangle`` through ctypes (``libstdc++.so.6`` is present
   wherever z3 and numpy run, both link it). It is the GNU demangler itself, the same
   ``cp-demangle.c`` that ``c++filt`` uses, so it is exact on every name, numba's ABI tags
   (``[abi:v2]``) and CUTLASS's templates included.
2. This module's own reader of the part of the Itanium C++ ABI mangling grammar
   (https://itanium-cxx-abi.github.io/cxx-abi/abi.html#mangling) that kernel names use:
   namespaces and nested names, templates with type and literal arguments, template
   parameters, substitutions, ``std::`` abbreviations, cv-qualifiers, pointers and
   references, function pointers, arrays, local names and lambdas, unnamed types and pack
   expansions. It is the fallback where libstdc++ cannot be loaded.

Neither cuda-bindings nor the CUDA pip wheels give a usable demangler: the
``nvidia-cuda-cuxxfilt`` wheel ships only the ``nv_decode.h`` header, without the
``libcufilt`` library, and kernelcheck must not depend on binutils being installed. Both
implementations are compared name by name with ``c++filt`` on every fixture kernel name and
on a sample of 300 libtorch kernel names (tests/binary/test_demangle.py).

:func:`demangle` never raises: a name it cannot read (or that is not mangled, such as an
``extern "C"`` kernel) comes back unchanged.
"""

from __future__ import annotations

__all__ = ["demangle", "demangle_python", "system_demangler"]

_BUILTIN = {
    "v": "void",
    "w": "wchar_t",
    "b": "bool",
    "c": "char",
    "a": "signed char",
    "h": "unsigned char",
    "s": "short",
    "t": "unsigned short",
    "i": "int",
    "j": "unsigned int",
    "l": "long",
    "m": "unsigned long",
    "x": "long long",
    "y": "unsigned long long",
    "n": "__int128",
    "o": "unsigned __int128",
    "f": "float",
    "d": "double",
    "e": "long double",
    "g": "__float128",
    "z": "...",
}
_BUILTIN_D = {
    "Dd": "decimal64",
    "De": "decimal128",
    "Df": "decimal32",
    "Dh": "half",
    "Di": "char32_t",
    "Ds": "char16_t",
    "Du": "char8_t",
    "Da": "auto",
    "Dn": "decltype(nullptr)",
}
_STD_ABBREV = {
    "St": "std",
    "Sa": "std::allocator",
    "Sb": "std::basic_string",
    "Ss": "std::string",
    "Si": "std::istream",
    "So": "std::ostream",
    "Sd": "std::iostream",
}
_LITERAL_SUFFIX = {"j": "u", "l": "l", "m": "ul", "x": "ll", "y": "ull", "i": ""}


class _Fail(Exception):
    pass


class _Function:
    """A function type, kept apart so that pointers to it print as ``ret (*)(args)``."""

    __slots__ = ("ret", "args")

    def __init__(self, ret: str, args: str) -> None:
        self.ret, self.args = ret, args

    def declare(self, declarator: str) -> str:
        return f"{self.ret} ({declarator})({self.args})"

    def __str__(self) -> str:
        return f"{self.ret} ({self.args})"


class _Array:
    """An array type, kept apart so that references to it print as ``int (&) [10]``."""

    __slots__ = ("element", "size")

    def __init__(self, element: str, size: str) -> None:
        self.element, self.size = element, size

    def declare(self, declarator: str) -> str:
        return f"{self.element} ({declarator}) [{self.size}]"

    def __str__(self) -> str:
        return f"{self.element} [{self.size}]"


class _Demangler:
    def __init__(self, text: str) -> None:
        self.s = text
        self.i = 0
        self.subs: list[object] = []
        self.template_args: list[object] = []

    # -- reading helpers -------------------------------------------------------------
    def peek(self, n: int = 1) -> str:
        return self.s[self.i : self.i + n]

    def take(self, token: str) -> bool:
        if self.s.startswith(token, self.i):
            self.i += len(token)
            return True
        return False

    def expect(self, token: str) -> None:
        if not self.take(token):
            raise _Fail(f"expected {token!r} at {self.i}")

    def number(self) -> int:
        start = self.i
        while self.i < len(self.s) and self.s[self.i].isdigit():
            self.i += 1
        if start == self.i:
            raise _Fail("expected a number")
        return int(self.s[start : self.i])

    def seq_id(self, terminator: str = "_") -> int:
        """``_`` is 0, ``<base36>_`` is value + 1."""
        if self.take(terminator):
            return 0
        start = self.i
        while self.i < len(self.s) and (self.s[self.i].isdigit() or self.s[self.i].isupper()):
            self.i += 1
        value = int(self.s[start : self.i], 36) if self.i > start else None
        if value is None:
            raise _Fail("expected a sequence id")
        self.expect(terminator)
        return value + 1

    # -- grammar ---------------------------------------------------------------------
    def encoding(self, top: bool) -> str:
        name, is_template = self.name()
        if self.i >= len(self.s) or self.peek() == "E":
            return name
        ret = ""
        if is_template:
            ret = self.render(self.type()) + " "
        params = self.parameters()
        return f"{ret}{name}({params})"

    def parameters(self) -> str:
        types = []
        while self.i < len(self.s) and self.peek() not in ("E", "."):
            text = self.render(self.type())
            if text:  # a pack expansion of an empty pack (Dp of JE) is no parameter
                types.append(text)
        if types == ["void"]:
            types = []
        return ", ".join(types)

    def name(self) -> tuple[str, bool]:
        if self.take("N"):
            return self.nested_name()
        if self.take("Z"):
            return self.local_name()
        if self.peek(2) in _STD_ABBREV or self.peek() == "S":
            base = self.substitution()
            if self.peek() == "I":
                self.subs.append(base)
                self.template_args = []
                return str(base) + self.template_arguments(record=True), True
            return str(base), False
        base = self.unqualified_name()
        if self.peek() == "I":
            self.subs.append(base)
            return base + self.template_arguments(record=True), True
        return base, False

    def local_name(self) -> tuple[str, bool]:
        saved = self.template_args
        outer = self.encoding(top=False)
        self.template_args = saved
        self.expect("E")
        if self.take("s"):
            entity = "string literal"
        else:
            entity, is_template = self.name()
            if is_template:
                return f"{outer}::{entity}", True
        if self.take("_"):
            if self.take("_"):
                self.number()
                self.expect("_")
            else:
                self.number() if self.peek().isdigit() else None
        return f"{outer}::{entity}", False

    def nested_name(self) -> tuple[str, bool]:
        qualifiers = ""
        while self.peek() in ("r", "V", "K"):
            qualifiers += {"r": " restrict", "V": " volatile", "K": " const"}[self.s[self.i]]
            self.i += 1
        self.take("R") or self.take("O")
        parts = ""
        is_template = False
        while not self.take("E"):
            is_template = False
            if self.peek() == "S" and self.peek(2) != "St" or self.peek(2) in _STD_ABBREV:
                if self.take("St"):
                    part = "std"
                else:
                    part = str(self.substitution())
                parts = part if not parts else f"{parts}::{part}"
                continue
            if self.peek() == "I":
                if not parts:
                    raise _Fail("template arguments without a name")
                parts += self.template_arguments(record=True)
                is_template = True
            elif self.peek() == "T":
                parts = str(self.template_param())
            else:
                component = self.unqualified_name()
                parts = component if not parts else f"{parts}::{component}"
            if self.peek() != "E":
                self.subs.append(parts)
            if self.i >= len(self.s):
                raise _Fail("unterminated nested name")
        return parts + qualifiers, is_template

    def unqualified_name(self) -> str:
        c = self.peek()
        if c.isdigit():
            length = self.number()
            if self.i + length > len(self.s):
                raise _Fail("source name past the end")
            text = self.s[self.i : self.i + length]
            self.i += length
            name = "(anonymous namespace)" if text.startswith("_GLOBAL__N") else text
            # ABI tags (<abi-tag> ::= B <source-name>), as numba writes them: name[abi:v2].
            while self.peek() == "B" and self.peek(2)[1:].isdigit():
                self.i += 1
                length = self.number()
                if self.i + length > len(self.s):
                    raise _Fail("ABI tag past the end")
                name += f"[abi:{self.s[self.i : self.i + length]}]"
                self.i += length
            return name
        if self.take("Ut"):
            number = self.seq_id() + 1
            return f"{{unnamed type#{number}}}"
        if self.take("Ul"):
            saved = self.template_args
            params = self.parameters()
            self.template_args = saved
            self.expect("E")
            number = self.seq_id() + 1
            return f"{{lambda({params})#{number}}}"
        if c in ("C", "D") and self.peek(2)[1:].isdigit():
            self.i += 2
            return "{ctor}" if c == "C" else "{dtor}"
        raise _Fail(f"unsupported name at {self.i}")

    def substitution(self) -> object:
        two = self.peek(2)
        if two in _STD_ABBREV:
            self.i += 2
            if two == "St":
                return "std::" + self.unqualified_name()
            return _STD_ABBREV[two]
        self.expect("S")
        index = self.seq_id()
        if index >= len(self.subs):
            raise _Fail("substitution out of range")
        return self.subs[index]

    def template_param(self) -> object:
        self.expect("T")
        index = self.seq_id()
        if index >= len(self.template_args):
            raise _Fail("template parameter out of range")
        return self.template_args[index]

    def template_arguments(self, record: bool) -> str:
        self.expect("I")
        args: list[object] = []
        while not self.take("E"):
            if self.i >= len(self.s):
                raise _Fail("unterminated template arguments")
            args.append(self.template_argument())
        if record:
            self.template_args = args
        # An empty pack (``JE``) contributes no argument, as c++filt prints it.
        text = ", ".join(t for t in (self.render(a) for a in args) if t)
        return f"<{text}>" if not text.endswith(">") else f"<{text} >"

    def template_argument(self) -> object:
        if self.take("L"):
            if self.take("_Z"):
                value = self.encoding(top=False)
                self.expect("E")
                return value
            kind = self.peek()
            if kind in _BUILTIN:
                self.i += 1
                type_text = _BUILTIN[kind]
            else:
                # An enumerator or other non-builtin type (``LN3cub9SortOrderE1E``): the
                # type is a full <type>, rendered as a cast, as c++filt does.
                type_text = self.render(self.type())
                kind = ""
            negative = self.take("n")
            start = self.i
            while self.i < len(self.s) and self.s[self.i] != "E":
                self.i += 1
            digits = ("-" if negative else "") + self.s[start : self.i]
            self.expect("E")
            if kind == "b":
                return "true" if digits == "1" else "false"
            if kind in _LITERAL_SUFFIX:
                return digits + _LITERAL_SUFFIX[kind]
            return f"({type_text}){digits}"
        if self.take("J"):
            items = []
            while not self.take("E"):
                if self.i >= len(self.s):
                    raise _Fail("unterminated pack")
                items.append(self.render(self.template_argument()))
            return ", ".join(items)
        return self.type()

    def type(self) -> object:
        c = self.peek()
        if not c:
            raise _Fail("expected a type")
        if c in _BUILTIN:
            self.i += 1
            return _BUILTIN[c]
        two = self.peek(2)
        if two in _BUILTIN_D:
            self.i += 2
            return _BUILTIN_D[two]
        if two == "Dp":
            self.i += 2
            result = self.type()
            self.subs.append(result)
            return result
        if c in "rVK":
            qualifiers = []
            while self.peek() in ("r", "V", "K") and self.peek():
                qualifiers.append({"r": "restrict", "V": "volatile", "K": "const"}[self.peek()])
                self.i += 1
            inner = self.type()
            result = self.render(inner) + " " + " ".join(reversed(qualifiers))
            self.subs.append(result)
            return result
        if c in "PRO":
            self.i += 1
            inner = self.type()
            mark = {"P": "*", "R": "&", "O": "&&"}[c]
            result = (
                inner.declare(mark)
                if isinstance(inner, (_Function, _Array))
                else self.render(inner) + mark
            )
            self.subs.append(result)
            return result
        if c == "F":
            self.i += 1
            self.take("Y")
            ret = self.render(self.type())
            result = _Function(ret, self.parameters())
            self.take("R") or self.take("O")
            self.expect("E")
            self.subs.append(result)
            return result
        if c == "A":
            self.i += 1
            size = str(self.number()) if self.peek().isdigit() else ""
            self.expect("_")
            result = _Array(self.render(self.type()), size)
            self.subs.append(result)
            return result
        if c == "T":
            result = self.template_param()
            self.subs.append(result)
            if self.peek() == "I":
                result = self.render(result) + self.template_arguments(record=False)
                self.subs.append(result)
            return result
        if c == "S" and two not in _STD_ABBREV:
            result = self.substitution()
            if self.peek() == "I":
                result = self.render(result) + self.template_arguments(record=False)
                self.subs.append(result)
            return result
        if c == "N" or two in _STD_ABBREV:
            saved = self.template_args
            if self.take("N"):
                result, _ = self.nested_name()
            else:
                result = self.substitution()
                if self.peek() == "I":
                    self.subs.append(result)
                    result = self.render(result) + self.template_arguments(record=False)
            self.template_args = saved
            self.subs.append(result)
            return result
        if c == "Z":
            self.i += 1
            result, _ = self.local_name()
            self.subs.append(result)
            return result
        if c.isdigit() or c == "U":
            name = self.unqualified_name()
            self.subs.append(name)
            if self.peek() == "I":
                saved = self.template_args
                name = name + self.template_arguments(record=False)
                self.template_args = saved
                self.subs.append(name)
            return name
        raise _Fail(f"unsupported type {c!r} at {self.i}")

    @staticmethod
    def render(value: object) -> str:
        return str(value)


def demangle_python(name: str) -> str:
    """Demangle with this module's own reader (the fallback of :func:`demangle`).

    Examples
    --------
    >>> demangle_python("_ZN2ns5scaleIfEEvPT_S1_j")
    'void ns::scale<float>(float*, float, unsigned int)'
    """
    if not name.startswith("_Z"):
        return name
    parser = _Demangler(name)
    parser.i = 2
    try:
        result = parser.encoding(top=True)
    except (_Fail, RecursionError, ValueError, IndexError):
        return name
    if parser.i != len(name) and not name.startswith(".", parser.i):
        return name
    return result


_CXA = None


def system_demangler():
    """libstdc++'s ``__cxa_demangle`` as a Python function, or ``None`` where it cannot be
    loaded (the result is cached)."""
    global _CXA
    if _CXA is None:
        _CXA = _load_cxa() or False
    return _CXA or None


def _load_cxa():
    import ctypes
    import ctypes.util

    try:
        library = ctypes.CDLL(ctypes.util.find_library("stdc++") or "libstdc++.so.6")
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        function = library.__cxa_demangle
    except (OSError, AttributeError):
        return None
    function.restype = ctypes.c_void_p
    function.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_void_p,
                         ctypes.POINTER(ctypes.c_int)]
    free = libc.free
    free.argtypes = [ctypes.c_void_p]
    free.restype = None

    def cxa(name: str) -> str | None:
        status = ctypes.c_int(0)
        try:
            raw = name.encode("ascii")
        except UnicodeEncodeError:
            return None
        pointer = function(raw, None, None, ctypes.byref(status))
        if not pointer:
            return None
        try:
            return ctypes.string_at(pointer).decode("utf-8", "replace")
        finally:
            free(pointer)

    return cxa


def demangle(name: str) -> str:
    """Demangle an Itanium C++ ABI name as ``c++filt`` does; other names come back unchanged.

    Parameters
    ----------
    name : str
        A symbol name, e.g. a kernel's ELF symbol.

    Returns
    -------
    str
        The demangled signature, or `name` itself when it is not a mangled name.

    Examples
    --------
    >>> demangle("_ZN2ns5scaleIfEEvPT_S1_j")
    'void ns::scale<float>(float*, float, unsigned int)'
    >>> demangle("saxpy")
    'saxpy'
    """
    if not name.startswith("_Z"):
        return name
    cxa = system_demangler()
    if cxa is not None:
        result = cxa(name)
        return name if result is None else result
    return demangle_python(name)
