"""A small demangler for the Itanium C++ ABI (GCC's and Clang's mangling), used when
``c++filt`` is not installed. It reads the shapes torch's and adapters' symbols take:
nested names, constructors and destructors, templates, operators, substitutions,
pointers, references and qualifiers, function and array types, packs. Its output is
``c++filt``'s (``char const*``, ``std::vector<at::Tensor, std::allocator<at::Tensor> >``);
a name it cannot read is returned as given.
"""

from __future__ import annotations

from typing import List, Tuple

__all__ = ["demangle"]

_BUILTIN = {
    "v": "void", "w": "wchar_t", "b": "bool", "c": "char", "a": "signed char", "h": "unsigned char",
    "s": "short", "t": "unsigned short", "i": "int", "j": "unsigned int", "l": "long", "m": "unsigned long",
    "x": "long long", "y": "unsigned long long", "n": "__int128", "o": "unsigned __int128", "f": "float",
    "d": "double", "e": "long double", "g": "__float128", "z": "...",
}  # fmt: skip
_D_BUILTIN = {
    "n": "decltype(nullptr)",
    "s": "char16_t",
    "i": "char32_t",
    "u": "char8_t",
    "a": "auto",
    "c": "decltype(auto)",
}
_ABBREV = {
    "t": "std", "a": "std::allocator", "b": "std::basic_string",
    "s": "std::basic_string<char, std::char_traits<char>, std::allocator<char> >",
    "i": "std::basic_istream<char, std::char_traits<char> >", "o": "std::basic_ostream<char, std::char_traits<char> >",
    "d": "std::basic_iostream<char, std::char_traits<char> >",
}  # fmt: skip
_LITERAL_SUFFIX = {
    "int": "",
    "unsigned int": "u",
    "long": "l",
    "unsigned long": "ul",
    "long long": "ll",
    "unsigned long long": "ull",
}
_OPERATORS = {
    "nw": "new", "na": "new[]", "dl": "delete", "da": "delete[]", "ps": "+", "ng": "-", "ad": "&", "de": "*",
    "co": "~", "pl": "+", "mi": "-", "ml": "*", "dv": "/", "rm": "%", "an": "&", "or": "|", "eo": "^", "aS": "=",
    "pL": "+=", "mI": "-=", "mL": "*=", "dV": "/=", "rM": "%=", "aN": "&=", "oR": "|=", "eO": "^=", "ls": "<<",
    "rs": ">>", "lS": "<<=", "rS": ">>=", "eq": "==", "ne": "!=", "lt": "<", "gt": ">", "le": "<=", "ge": ">=",
    "ss": "<=>", "nt": "!", "aa": "&&", "oo": "||", "pp": "++", "mm": "--", "cm": ",", "pm": "->*", "pt": "->",
    "cl": "()", "ix": "[]",
}  # fmt: skip


class _Fail(Exception):
    pass


class _Parser:
    def __init__(self, text: str) -> None:
        self.s, self.i = text, 0
        self.subs: List[str] = []
        self.tparams: List[str] = []  # the function's template arguments, which T_ names
        self.last_args: List[str] = []
        self.templated = False  # whether the last nested name ended with template arguments
        self.structor = False  # whether the last name read is a constructor, destructor or conversion

    def peek(self, n: int = 1) -> str:
        return self.s[self.i : self.i + n]

    def take(self, token: str) -> bool:
        if self.s.startswith(token, self.i):
            self.i += len(token)
            return True
        return False

    def need(self, token: str) -> None:
        if not self.take(token):
            raise _Fail

    def number(self) -> int:
        start = self.i
        while self.peek().isdigit():
            self.i += 1
        if start == self.i:
            raise _Fail
        return int(self.s[start : self.i])

    def source_name(self) -> str:
        n = self.number()
        name = self.s[self.i : self.i + n]
        if len(name) != n:
            raise _Fail
        self.i += n
        return "(anonymous namespace)" if name.startswith("_GLOBAL__N") else name

    def substitution(self) -> str:
        self.need("S")
        c = self.peek()
        if c in _ABBREV:
            self.i += 1
            return _ABBREV[c]
        start = self.i
        while self.peek() and self.peek() != "_":
            self.i += 1
        seq = self.s[start : self.i]
        self.need("_")
        index = int(seq, 36) + 1 if seq else 0
        if index >= len(self.subs):
            raise _Fail
        return self.subs[index]

    def template_args(self) -> Tuple[str, List[str]]:
        self.need("I")
        args = []
        while not self.take("E"):
            if self.take("L"):  # a literal: Li3E is 3, Lb1E is true, L_Z...E an entity's address
                if self.take("_Z"):
                    args.append(self.encoding())
                    self.need("E")
                    continue
                kind = self.type()
                start = self.i
                while self.peek() and self.peek() != "E":
                    self.i += 1
                value = self.s[start : self.i].replace("n", "-", 1)
                self.need("E")
                if kind == "bool":
                    args.append("true" if value == "1" else "false")
                elif kind in _LITERAL_SUFFIX:
                    args.append(value + _LITERAL_SUFFIX[kind])
                else:
                    args.append(f"({kind}){value}")
            elif self.take("J"):
                pack = []
                while not self.take("E"):
                    pack.append(self.type())
                args.append(", ".join(pack))
            else:
                args.append(self.type())
        text = "<" + ", ".join(args) + (" >" if args and args[-1].endswith(">") else ">")
        return text, args

    def unqualified(self, scope: str) -> str:
        name = self._unqualified(scope)
        while self.take("B"):  # an ABI tag: getThreadName[abi:cxx11]
            name += f"[abi:{self.source_name()}]"
        return name

    def _unqualified(self, scope: str) -> str:
        c = self.peek()
        self.structor = c in "CD" or self.peek(2) == "cv"  # no return type, even as a template
        if c.isdigit():
            return self.source_name()
        if c == "C" and self.peek(2)[1:] in ("1", "2", "3", "4", "5", "I"):
            self.i += 2
            if self.s[self.i - 1] == "I":  # inheriting constructor
                self.i += 1
                self.type()
            return _last_component(scope)
        if c == "D" and self.peek(2)[1:] in ("0", "1", "2", "4", "5"):
            self.i += 2
            return "~" + _last_component(scope)
        if self.take("cv"):
            return "operator " + self.type()
        if self.take("li"):
            return 'operator"" ' + self.source_name()
        if self.peek(2) in _OPERATORS:
            op = _OPERATORS[self.peek(2)]
            self.i += 2
            return "operator" + (" " if op[0].isalpha() else "") + op
        if self.take("L"):  # an internal-linkage name
            return self.source_name()
        raise _Fail

    def nested(self) -> Tuple[str, str]:
        """(name, trailing qualifiers such as `` const``)."""
        self.need("N")
        quals = ""
        while self.peek() in ("r", "V", "K"):
            quals = {"r": " restrict", "V": " volatile", "K": " const"}[self.peek()] + quals
            self.i += 1
        if self.take("R"):
            quals += " &"
        elif self.take("O"):
            quals += " &&"
        name = ""
        self.templated = False
        while not self.take("E"):
            self.templated = self.peek() == "I"
            if self.take("St"):
                name = "std"
                continue
            if self.peek() == "S":
                name = self.substitution()  # already a candidate: not added again
                continue
            if self.peek() == "I":
                args, self.last_args = self.template_args()
                name += (" " if name.endswith("<") else "") + args
            elif self.peek() == "T":
                name = self.template_param()
            else:
                part = self.unqualified(name)
                name = f"{name}::{part}" if name else part
            if self.peek() != "E":  # the whole name is a candidate only as a type (its caller adds it)
                self.subs.append(name)
        return name, quals

    def template_param(self) -> str:
        self.need("T")
        start = self.i
        while self.peek() and self.peek() != "_":
            self.i += 1
        seq = self.s[start : self.i]
        self.need("_")
        index = int(seq, 36) + 1 if seq else 0
        if index >= len(self.tparams):
            raise _Fail
        return self.tparams[index]

    def name(self) -> Tuple[str, str, bool]:
        """(name, qualifiers, whether it is a template: then the encoding names its return type)."""
        if self.peek() == "N":
            name, quals = self.nested()
            return name, quals, self.templated
        if self.take("Z"):  # a local name: function:: entity
            outer = self.encoding()
            self.need("E")
            if self.take("s"):
                return outer + "::string literal", "", False
            inner, quals, template = self.name()
            return f"{outer}::{inner}", quals, template
        if self.take("St"):
            name = "std::" + self.unqualified("")
        elif self.peek() == "S":
            name = self.substitution()
        else:
            name = self.unqualified("")
        if self.peek() == "I":
            self.subs.append(name)
            args, self.last_args = self.template_args()
            return name + (" " if name.endswith("<") else "") + args, "", True
        return name, "", False

    def function_args(self) -> str:
        args = []
        while self.i < len(self.s) and self.peek() not in ("E", "."):
            args.append(self.type())
        if args == ["void"]:
            args = []
        return "(" + ", ".join(args) + ")"

    def encoding(self) -> str:
        name, quals, template = self.name()
        if template:
            self.tparams = self.last_args
        if self.i >= len(self.s) or self.peek() in ("E", "."):
            return name
        returns = self.type() + " " if template and not self.structor else ""
        return returns + name + self.function_args() + quals

    def type(self) -> str:
        c = self.peek()
        if c in _BUILTIN:
            self.i += 1
            return _BUILTIN[c]
        if c == "D" and self.peek(2)[1:] in _D_BUILTIN:
            self.i += 2
            return _D_BUILTIN[self.s[self.i - 1]]
        if c == "D" and self.peek(2) == "Dp":  # a pack expansion
            self.i += 2
            return self.type()
        if c == "D" and self.peek(3) == "DF1":  # _Float16 and friends: DF16_
            self.i += 2
            bits = self.number()
            self.need("_")
            return f"_Float{bits}"
        if c in "PROKVr":
            self.i += 1
            inner = self.type()
            suffix = {"P": "*", "R": "&", "O": "&&", "K": " const", "V": " volatile", "r": " restrict"}[c]
            out = _attach(inner, suffix)
            self.subs.append(out)
            return out
        if c == "F":
            self.i += 1
            self.take("Y")
            returns = self.type()
            args = self.function_args()
            self.need("E")
            out = f"{returns} {args}"
            self.subs.append(out)
            return out
        if c == "A":
            self.i += 1
            size = str(self.number()) if self.peek().isdigit() else ""
            self.need("_")
            out = f"{self.type()} [{size}]"
            self.subs.append(out)
            return out
        if c == "T":
            out = self.template_param()
            self.subs.append(out)
            if self.peek() == "I":
                args, _ = self.template_args()
                out += args
                self.subs.append(out)
            return out
        if c == "S" and self.peek(2) != "St":
            out = self.substitution()
            if self.peek() == "I":
                args, _ = self.template_args()
                out += args
                self.subs.append(out)
            return out
        name, _quals, _template = self.name()
        self.subs.append(name)
        return name


def _last_component(scope: str) -> str:
    """``basic_string`` of ``std::__cxx11::basic_string<char, std::char_traits<char> >``: a
    constructor's name, its class's last component without template arguments."""
    depth, start, end = 0, 0, len(scope)
    for i, c in enumerate(scope):
        if c == "<":
            if depth == 0:
                end = i
            depth += 1
        elif c == ">":
            depth -= 1
        elif c == ":" and depth == 0 and scope.startswith("::", i):
            start, end = i + 2, len(scope)
    return scope[start:end]


_SPECIAL = {"TV": "vtable for ", "TT": "VTT for ", "TI": "typeinfo for ", "TS": "typeinfo name for "}


def _attach(inner: str, suffix: str) -> str:
    """``char const`` + ``*`` -> ``char const*``; a function type's pointer goes inside: ``void (*)(int)``."""
    if inner.endswith(")") and " (" in inner and suffix in ("*", "&", "&&"):
        head, _, args = inner.partition(" (")
        return f"{head} ({suffix})({args}"
    return inner + suffix


def demangle(name: str) -> str:
    """The readable form of the mangled ``name``, or ``name`` itself when it is not one this
    reads. A version suffix (``@GLIBCXX_3.4``, as ``nm`` prints) is kept as it is."""
    base, at, version = name.partition("@")
    if not base.startswith("_Z"):
        return name
    parser = _Parser(base)
    parser.i = 2
    try:
        special = _SPECIAL.get(parser.peek(2))
        if special is not None:
            parser.i += 2
            out = special + parser.type()
        elif parser.take("GV"):
            out = "guard variable for " + parser.name()[0]
        else:
            out = parser.encoding()
        if parser.i < len(base) and not base.startswith(".", parser.i):
            return name
    except (_Fail, ValueError, IndexError, RecursionError):
        return name
    return out + at + version if out else name
