"""Names that generated C must not use for its own variables and parameters."""

from __future__ import annotations

import re
import unicodedata

from ..ir.prims import PRIMS
from .c_library import (
    FUNCTIONS, GNU_FUNCTIONS, MACROS, PYTHON_H_FUNCTIONS, PYTHON_H_MACROS, PYTHON_H_TYPES, TYPES,
)

C_KEYWORDS = {
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum",
    "extern", "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict",
    "return", "short", "signed", "sizeof", "static", "struct", "switch", "typedef", "union",
    "unsigned", "void", "volatile", "while", "bool", "true", "false",
    # C23, and keywords of gcc's default GNU dialect
    "alignas", "alignof", "constexpr", "nullptr", "static_assert", "thread_local", "typeof",
    "typeof_unqual", "asm",
}
#: names C reserves for the implementation: _Bool, _Alignas, __attribute__, __restrict...
C_RESERVED_PATTERN = re.compile(r"__\w*|_[A-Z]\w*")
#: names of the C program and library that generated code uses itself
C_LIBRARY_NAMES = {"main", "errno", "NULL", "free", "calloc", "malloc", "abort", "exit", "int64_t",
                   "int32_t", "size_t", "INFINITY", "NAN"}
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
#: names the cffi wrapper of a function uses for its own locals and parameters
BINDING_NAMES = {"result", "pyresult", "self", "args", "datasize", "large_args_free"}
BINDING_PATTERN = re.compile(r"(x|arg)\d+")
#: the halves the adjoint transform makes of a function (of an external's C function too) for
#: the adjoints of its callers: f_fwd runs in their forward sweep, f_bwd in their reverse
SPLIT_SUFFIXES = FWD, BWD = ("_fwd", "_bwd")
#: suffixes of generated functions: f_d, f_dv, f_b, f_bv, f_b_d, f_b_dv and the split halves
DERIVATIVE_SUFFIXES = ("_d", "_dv", "_b", "_bv", "_b_d", "_b_dv", "_fwd", "_bwd", "_fwd_d",
                       "_bwd_d", "_fwd_dv", "_bwd_dv")
LIBM_NAMES = {f for p in PRIMS.values() if p.c_func for f in p.c_func.values()} | {
    "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "exp", "expm1",
    "log", "log1p", "log2", "log10", "sqrt", "cbrt", "pow", "fabs", "hypot", "erf", "erfc",
    "floor", "ceil", "fmin", "fmax", "round", "trunc", "fmod", "copysign"}


def reserved(name: str, functions: set[str] | frozenset[str] = frozenset()) -> bool:
    """Whether ``name`` would clash with C, libm, adgen's runtime or a module function, or
    with C++ (headers are included from C++, and nvcc compiles the CUDA target as C++)."""
    return name in C_KEYWORDS or C_RESERVED_PATTERN.fullmatch(name) is not None or \
        name in C_LIBRARY_NAMES or name in LIBM_NAMES or name in MACROS or name in TYPES or \
        name in PYTHON_H_MACROS or name in PYTHON_H_TYPES or \
        name.startswith(("adgen_", "ADGEN_")) or name in functions or name in CPP_KEYWORDS


#: the suffixes of the adjoint files, each with a tape counter ``NAME_b_tape_bytes``
TAPE_COUNTER_SUFFIXES = ("_b", "_bv", "_b_d", "_b_dv")


def function_name_problem(name: str, functions: set[str] | frozenset[str],
                          module: str = "") -> str | None:
    """Why a module function cannot be called ``name`` in C, or None (``module``: the
    module's name).  Function names are the generated API (``f``, ``f_d``), so they are never
    renamed behind the user's back."""
    if name in C_KEYWORDS or name in CPP_KEYWORDS:
        return f"'{name}' is a keyword in C or C++"
    if C_RESERVED_PATTERN.fullmatch(name):
        return f"C reserves names like '{name}' (starting with __, or _ and a capital letter)"
    if name in LIBM_NAMES:
        return f"'{name}' is a function of the C math library"
    if name == "main":
        return "'main' is the entry point of a C program"
    if name in C_LIBRARY_NAMES or name in MACROS or name in TYPES or name in FUNCTIONS or \
            name in GNU_FUNCTIONS:
        return f"'{name}' is defined by the C library headers the generated code includes"
    if name in PYTHON_H_FUNCTIONS or name in PYTHON_H_MACROS or name in PYTHON_H_TYPES:
        return f"'{name}' is defined by the C library headers the Python binding includes " \
               "(Python.h)"
    if module and name in {f"{module}{s}_tape_bytes" for s in TAPE_COUNTER_SUFFIXES}:
        return f"'{name}' is the function of {name[:-len('_tape_bytes')]}.c that tells the " \
               "bytes of the last adjoint's tape"
    if name == "tape":  # (a local of every function that keeps one, and a parameter)
        return "'tape' names the tape of the generated adjoints"
    if name.startswith(("adgen_", "ADGEN_", "_cffi")):
        return "names starting with adgen_ are adgen's own"
    if name in BINDING_NAMES or BINDING_PATTERN.fullmatch(name):
        return f"'{name}' is used by the generated Python binding"
    for suffix in DERIVATIVE_SUFFIXES:
        if name.endswith(suffix) and name[: -len(suffix)] in functions:
            return f"it is the name of a derivative of '{name[: -len(suffix)]}'"
    return None


def ascii_name(name: str) -> str:
    """``name`` spelled in the characters of C names: each other character by its name
    when it is a letter (``α`` -> ``alpha``, ``Σ`` -> ``Sigma``, ``é`` -> ``e``), else by its
    code point (``u00b2``)."""
    if name.isascii():
        return name
    out: list[str] = []
    for ch in name:
        words = unicodedata.name(ch, "").split()
        if ch.isascii():
            out.append(ch)
        elif "LETTER" in words and words[-1] != "LETTER":
            rest = words[words.index("LETTER") + 1:]
            rest = rest[:rest.index("WITH")] if "WITH" in rest else rest
            spelled = "".join(w.lower() for w in rest if w.isascii() and w.isalnum())
            if not spelled:
                spelled = f"u{ord(ch):04x}"
            out.append(spelled.capitalize() if "CAPITAL" in words else spelled)
        else:
            out.append(f"u{ord(ch):04x}")
    text = "".join(out)
    return text if text[:1].isalpha() or text[:1] == "_" else "v_" + text


def c_base(name: str) -> str:
    """What C names made from ``name`` start from: ``name`` in ASCII (``ascii_name``), after
    ``v_`` where it begins as adgen's names or C's reserved ones do (no suffix makes a
    reserved prefix safe)."""
    out = ascii_name(name)
    if out.startswith(("adgen_", "ADGEN_")) or C_RESERVED_PATTERN.fullmatch(out):
        out = "v_" + out
    return out


def c_safe(name: str, taken: set[str], functions: set[str] | frozenset[str] = frozenset()) -> str:
    """A parameter name: ``c_base(name)``, or that followed by ``_`` (``__``...) when it is
    reserved or taken; records it in ``taken``."""
    out = c_base(name)
    while reserved(out, functions) or out in taken:
        out += "_"
    taken.add(out)
    return out
