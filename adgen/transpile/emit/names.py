"""Names that generated C must not use for its own variables and parameters."""

from __future__ import annotations

from ..ir.prims import PRIMS

C_KEYWORDS = {
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum",
    "extern", "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict",
    "return", "short", "signed", "sizeof", "static", "struct", "switch", "typedef", "union",
    "unsigned", "void", "volatile", "while", "bool", "true", "false", "main", "errno", "NULL",
    "free", "calloc", "malloc", "abort", "exit", "int64_t", "int32_t", "size_t", "INFINITY", "NAN",
}
#: the headers are meant to be included from C++ too
CPP_KEYWORDS = {
    "alignas", "alignof", "and", "asm", "catch", "class", "compl", "concept", "constexpr",
    "consteval", "constinit", "decltype", "delete", "explicit", "export", "friend", "mutable",
    "namespace", "new", "noexcept", "not", "nullptr", "operator", "or", "private", "protected",
    "public", "requires", "template", "this", "throw", "try", "typeid", "typename", "using",
    "virtual", "xor", "bitand", "bitor", "not_eq", "and_eq", "or_eq", "xor_eq", "char8_t",
    "char16_t", "char32_t", "wchar_t", "static_assert", "thread_local", "co_await", "co_return",
    "co_yield", "dynamic_cast", "static_cast", "reinterpret_cast", "const_cast",
}
LIBM_NAMES = {f for p in PRIMS.values() if p.c_func for f in p.c_func.values()} | {
    "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "exp", "expm1",
    "log", "log1p", "log2", "log10", "sqrt", "cbrt", "pow", "fabs", "hypot", "erf", "erfc",
    "floor", "ceil", "fmin", "fmax", "round", "trunc", "fmod", "copysign"}


def reserved(name: str, functions: set[str] | frozenset[str] = frozenset(),
             in_header: bool = False) -> bool:
    """Whether ``name`` would clash with C, libm, adgen's runtime or a module function (and, for
    parameter names, which appear in headers included from C++, with C++)."""
    return name in C_KEYWORDS or name in LIBM_NAMES or name.startswith(("adgen_", "ADGEN_")) or \
        name in functions or (in_header and name in CPP_KEYWORDS)


def c_safe(name: str, taken: set[str], functions: set[str] | frozenset[str] = frozenset()) -> str:
    """A parameter name: ``name``, or ``name_`` (``name__``...) when it is reserved or taken;
    records it in ``taken``."""
    out = name
    while reserved(out, functions, in_header=True) or out in taken:
        out += "_"
    taken.add(out)
    return out
