"""A small Itanium C++ ABI demangler, for when neither `c++filt` nor `cu++filt` is on the PATH.

It reads what our builds produce: functions and kernels in (anonymous) namespaces, template
arguments that are types or integer/bool literals, pointers, references, cv-qualifiers,
substitutions and template parameters, ABI tags. Anything else returns None, and the caller
shows the symbol as it is. Output is spelled the way c++filt spells it (`float const*`).
"""

from __future__ import annotations

_BUILTIN = {
    "v": "void", "w": "wchar_t", "b": "bool", "c": "char", "a": "signed char",
    "h": "unsigned char", "s": "short", "t": "unsigned short", "i": "int", "j": "unsigned int",
    "l": "long", "m": "unsigned long", "x": "long long", "y": "unsigned long long",
    "n": "__int128", "o": "unsigned __int128", "f": "float", "d": "double", "e": "long double",
    "g": "__float128", "z": "...",
}
_BUILTIN_D = {"Ds": "char16_t", "Di": "char32_t", "Du": "char8_t", "Dn": "decltype(nullptr)"}
_LITERAL_SUFFIX = {"i": "", "j": "u", "l": "l", "m": "ul", "x": "ll", "y": "ull"}
_TRAITS = "char, std::char_traits<char>"
_STD_SUBST = {"St": "std", "Sa": "std::allocator", "Sb": "std::basic_string",
              "Ss": f"std::basic_string<{_TRAITS}, std::allocator<char> >",
              "Si": f"std::basic_istream<{_TRAITS} >", "So": f"std::basic_ostream<{_TRAITS} >",
              "Sd": f"std::basic_iostream<{_TRAITS} >"}


def _instance(template: str, args: list[str]) -> str:
    """`A<B<int> >`: c++filt keeps a space between closing brackets."""
    inner = ", ".join(args)
    return f"{template}<{inner}{' ' if inner.endswith('>') else ''}>"


class _Unsupported(Exception):
    """Something this demangler does not read; the symbol is shown as it is."""


class _Reader:
    def __init__(self, text: str) -> None:
        self.s = text
        self.i = 0
        self.subs: list[str] = []
        self.template_args: list[str] = []

    def peek(self, n: int = 1) -> str:
        return self.s[self.i:self.i + n]

    def take(self, prefix: str) -> bool:
        if self.s.startswith(prefix, self.i):
            self.i += len(prefix)
            return True
        return False

    def number(self) -> int:
        start = self.i
        while self.i < len(self.s) and self.s[self.i].isdigit():
            self.i += 1
        if start == self.i:
            raise _Unsupported
        return int(self.s[start:self.i])

    def source_name(self) -> str:
        n = self.number()
        name = self.s[self.i:self.i + n]
        if len(name) != n:
            raise _Unsupported
        self.i += n
        name = "(anonymous namespace)" if name.startswith("_GLOBAL__N") else name
        while self.take("B"):  # ABI tag
            name += f"[abi:{self.source_name()}]"
        return name

    def substitution(self) -> str:
        for code, name in _STD_SUBST.items():
            if self.take(code):
                return name
        if not self.take("S"):
            raise _Unsupported
        if self.take("_"):
            index = 0
        else:
            start = self.i
            while self.i < len(self.s) and self.s[self.i] != "_":
                self.i += 1
            index = int(self.s[start:self.i], 36) + 1
            self.i += 1
        if index >= len(self.subs):
            raise _Unsupported
        return self.subs[index]

    def template_param(self) -> str:
        self.i += 1  # T
        index = 0 if self.take("_") else self.number() + 1
        if not self.take("_") and index:
            raise _Unsupported
        if index >= len(self.template_args):
            raise _Unsupported
        return self.template_args[index]

    def literal(self) -> str:
        if self.peek() == "b":
            self.i += 1
            value = self.number()
            self.take("E")
            return "true" if value else "false"
        code = self.peek()
        if code not in _LITERAL_SUFFIX:
            raise _Unsupported
        self.i += 1
        sign = "-" if self.take("n") else ""
        value = self.number()
        if not self.take("E"):
            raise _Unsupported
        return f"{sign}{value}{_LITERAL_SUFFIX[code]}"

    def name(self, is_type: bool) -> tuple[str, bool, str]:
        """(qualified name, whether it ended in template args, trailing qualifier)."""
        if self.take("N"):
            return self.nested_name(is_type)
        known = self.peek() == "S"  # a substitution is in the table already
        name = self.substitution() if known else self.source_name()
        if name == "std" and self.peek().isdigit():  # St3foo: std::foo
            name, known = f"std::{self.source_name()}", False
        if self.peek() == "I":
            if not known:
                self.subs.append(name)
            name = _instance(name, self.arguments(own=not is_type))
            known = False
        if is_type and not known:
            self.subs.append(name)
        return name, name.endswith(">"), ""

    def nested_name(self, is_type: bool) -> tuple[str, bool, str]:
        qualifier = " const" if self.take("K") else ""
        parts: list[str] = []
        known = False  # the prefix so far came straight from a substitution
        while not self.take("E"):
            if parts and not known:
                self.subs.append("::".join(parts))
            known = False
            if self.peek() == "S":
                parts.append(self.substitution())
                known = len(parts) == 1
            elif self.peek() == "I" and parts:
                parts[-1] = _instance(parts[-1], self.arguments(own=not is_type))
            else:
                parts.append(self.source_name())
        if not parts:
            raise _Unsupported
        if is_type:
            self.subs.append("::".join(parts))
        return "::".join(parts), parts[-1].endswith(">"), qualifier

    def arguments(self, own: bool) -> list[str]:
        """Template arguments after `I`; `own`: the function's own, which T_ refers to."""
        self.i += 1
        args: list[str] = []
        while not self.take("E"):
            args.append(self.literal() if self.take("L") else self.type())
        if own:
            self.template_args = args
        return args

    def type(self) -> str:
        c, two = self.peek(), self.peek(2)
        if c in _BUILTIN:
            self.i += 1
            return _BUILTIN[c]
        if two in _BUILTIN_D:
            self.i += 2
            return _BUILTIN_D[two]
        modifiers = {"P": "*", "R": "&", "O": "&&", "K": " const", "V": " volatile"}
        if c in modifiers:
            self.i += 1
            result = f"{self.type()}{modifiers[c]}"
        elif c == "T":
            result = self.template_param()
        elif c.isdigit() or c in "NS":
            return self.name(is_type=True)[0]
        else:
            raise _Unsupported
        self.subs.append(result)
        return result


def itanium_demangle(symbol: str) -> str | None:
    """`_Z9attn_likeILi128EEvPKfPfi` -> `void attn_like<128>(float const*, float*, int)`;
    None for what this reader does not cover."""
    if not symbol.startswith("_Z"):
        return None
    r = _Reader(symbol[2:])
    try:
        name, templated, qualifier = r.name(is_type=False)
        if r.i == len(r.s):
            return name
        returns = f"{r.type()} " if templated else ""
        params: list[str] = []
        while r.i < len(r.s):
            params.append(r.type())
    except (_Unsupported, ValueError, IndexError):
        return None
    if params == ["void"]:
        params = []
    return f"{returns}{name}({', '.join(params)}){qualifier}"
