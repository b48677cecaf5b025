"""External C functions: ``@external("f.c", name="f_c", tangent="f_c_d", adjoint="f_c_b")``.

A module function with this decorator stands for C functions the user writes.  Its Python
body is what it means in CPython (``adgen --check`` compares the C functions with it); adgen
neither fences, lowers nor differentiates that body.  Instead the function becomes a wrapper
that calls a *declaration*: an IR function named ``f_c``, with ``external`` set and an empty
body::

    @external("softplus.c", name="softplus_c", tangent="softplus_c_d")
    def softplus(x: f64) -> f64: ...

    func @softplus(%x: f64) -> (return: f64) {
      %0 = call @softplus_c(%x) : f64
      return %0
    }
    extern func @softplus_c(%x: f64) -> (return: f64)  // softplus.c

The rest of the pipeline treats the declaration as a black box (activity analysis: every
float result depends on every float parameter), and the AD transforms turn it into the
declarations of ``tangent`` and ``adjoint`` (``ad/forward.py``, ``ad/reverse.py``), whose
C signatures are the ones adgen gives ``f_d`` and ``f_b`` when every float parameter and
result is differentiated.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import libcst as cst

from ..emit.names import DERIVATIVE_SUFFIXES, SPLIT_SUFFIXES, function_name_problem
from ..ir.core import Call, External, Function, Region, Result, Value
from ..ir.types import ArrayType
from .diagnostics import AdgenError, Note

if TYPE_CHECKING:
    from .signatures import ScopeReader, Signature

KEYWORDS = ("name", "tangent", "adjoint")
USAGE = '@external("file.c", name="f_c", tangent="f_c_d", adjoint="f_c_b")'


def is_external_decorator(node: cst.Decorator) -> bool:
    """``@external(...)`` or ``@adgen.external(...)``."""
    d = node.decorator
    if not isinstance(d, cst.Call):
        return False
    f = d.func
    return isinstance(f, cst.Name) and f.value == "external" or \
        isinstance(f, cst.Attribute) and f.attr.value == "external" and \
        isinstance(f.value, cst.Name) and f.value.value == "adgen"


def external_decorator(node: cst.FunctionDef) -> cst.Decorator | None:
    for dec in node.decorators:
        if is_external_decorator(dec):
            return dec
    return None


def read_external(reader: ScopeReader, sig: Signature, dec: cst.Decorator) -> External:
    """Check ``@external(...)`` on ``sig`` and what it names; the located errors say what to
    write instead."""
    call = dec.decorator
    assert isinstance(call, cst.Call)
    reader.require_decorator_import(call, "external")
    if len(sig.node.decorators) > 1:
        other = next(d for d in sig.node.decorators if d is not dec)
        raise reader.error(other, f"'{sig.name}' is an external C function and has another "
                                  "decorator (an external function's derivatives are the C "
                                  "functions its @external names: give them there)")
    positional = [a for a in call.args if a.keyword is None]
    if len(positional) != 1 or positional[0].star:
        raise reader.error(call, f"@external takes the C file as its one positional argument "
                                 f"(write {USAGE})")
    source = _string(reader, positional[0].value, "the C file")
    names: dict[str, str] = {}
    for arg in call.args:
        if arg.keyword is None:
            continue
        key = arg.keyword.value
        if key not in KEYWORDS:
            raise reader.error(arg.keyword, f"@external has no argument '{key}' (it takes the C "
                                            f"file and name=, tangent=, adjoint=: {USAGE})")
        names[key] = _identifier(reader, arg.value, key)
    if "name" not in names:
        raise reader.error(call, "@external needs the name of the C function (write "
                                 f"{USAGE}; the name must differ from '{sig.name}', which is "
                                 "the generated function that calls it)")
    path = os.path.normpath(os.path.join(os.path.dirname(reader.path), source))
    if not os.path.isfile(path):
        raise reader.error(positional[0].value, f"cannot find the C file '{source}' (looked for "
                                                f"{os.path.abspath(path)}; the path is relative to "
                                                "the module's directory)")
    ext = External(sig.name, reader.loc_of(dec), source, path, names["name"],
                   names.get("tangent", ""), names.get("adjoint", ""))
    _check_names(reader, sig, call, ext)
    _check_signature(reader, sig)
    return ext


def _string(reader: ScopeReader, node: cst.BaseExpression, what: str) -> str:
    value = node.evaluated_value if isinstance(node, cst.SimpleString) else None
    if not isinstance(value, str) or not value:
        raise reader.error(node, f"{what} must be a string literal (write {USAGE})")
    return value


def _identifier(reader: ScopeReader, node: cst.BaseExpression, key: str) -> str:
    value = _string(reader, node, f"{key}=")
    if not (value.isidentifier() and value.isascii()):
        raise reader.error(node, f"'{value}' is not a C identifier (name the C function with "
                                 "letters, digits and _)")
    return value


def _check_names(reader: ScopeReader, sig: Signature, call: cst.Call, ext: External) -> None:
    """The C names must be usable and must not be a name adgen generates."""
    functions = set(reader.scope.functions) | reader._later_functions
    nodes = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
    seen: dict[str, str] = {}
    #: what the adjoint transform names the halves it makes of the C function's adjoint
    halves = {ext.name + s for s in SPLIT_SUFFIXES}
    for key in KEYWORDS:
        name = getattr(ext, key)
        if not name:
            continue
        node = nodes[key]
        problem = function_name_problem(name, functions, reader.module_name)
        if name in functions:
            problem = f"'{name}' is a function of this module" + \
                (" (the generated function that calls it)" if name == sig.name else "")
        elif name in seen:
            problem = f"it is also given as {seen[name]}="
        if problem is None and name in halves:
            problem = f"adgen names the halves of the adjoint of {ext.name} {ext.name}_fwd and " \
                      f"{ext.name}_bwd"
        for other in reader.scope.functions.values():
            if other.external is None:
                continue
            theirs = (other.external.name, other.external.tangent, other.external.adjoint)
            if name in theirs:
                raise AdgenError(reader.loc_of(node), f"the C function '{name}' is already the "
                                 f"external of '{other.name}' (give each external function its "
                                 "own C functions)", [Note(other.external.loc,
                                                           f"'{other.name}' declared here")])
            # the halves adgen makes of an adjoint, named after the external's C function
            clash = None  # (not problem: that is this name's own, raised below)
            if name in {other.external.name + s for s in SPLIT_SUFFIXES}:
                clash = f"adgen names the halves of the adjoint of {other.external.name} (the " \
                        f"external of '{other.name}') {other.external.name}_fwd and " \
                        f"{other.external.name}_bwd"
            elif key == "name" and halves & set(theirs):
                clash = f"adgen names the halves of its adjoint {name}_fwd and {name}_bwd, " \
                        f"and '{min(halves & set(theirs))}' is a C function of '{other.name}'"
            if clash is not None:
                raise AdgenError(reader.loc_of(node), f"the C function name '{name}' cannot be "
                                 f"used: {clash} (choose another name)",
                                 [Note(other.external.loc, f"'{other.name}' declared here")])
        if problem is not None:
            raise reader.error(node, f"the C function name '{name}' cannot be used: {problem} "
                                     "(choose another name)")
        seen[name] = key
    for f in functions:
        for s in DERIVATIVE_SUFFIXES:
            if f.endswith(s) and f[: -len(s)] == ext.name:  # f_c_d, f_c_fwd...
                raise reader.error(nodes["name"], f"the C function name '{ext.name}' cannot be "
                                                  f"used: the module function '{f}' has the name "
                                                  "of one of its derivatives (choose another "
                                                  "name)")


def _check_signature(reader: ScopeReader, sig: Signature) -> None:
    """Results: one scalar or a tuple of scalars (an external is called for its value).
    Arrays: read only (``const`` in C); the CPython body must not write them either."""
    if not sig.results:
        returns = sig.node.returns
        raise reader.error(returns.annotation if returns is not None else sig.node.name,
                           f"the external function '{sig.name}' returns nothing (an external C "
                           "function must return a float, an int or a tuple of them; arrays "
                           "it would write are not supported)")
    arrays = {p.name for p in sig.params if isinstance(p.type, ArrayType)}
    if not arrays:
        return
    finder = _ArrayWrites(arrays)
    sig.node.body.visit(finder)
    if finder.found is not None:
        target, name = finder.found
        raise reader.error(target, f"the external function '{sig.name}' writes its array "
                                   f"parameter '{name}' (external C functions only read their "
                                   "arrays, passed as const pointers; write the array in a "
                                   "module function, or return the values)")


class _ArrayWrites(cst.CSTVisitor):
    """The first ``a[i] = ...`` / ``a[i] += ...`` of a parameter array ``a``."""

    def __init__(self, arrays: set[str]) -> None:
        super().__init__()
        self.arrays = arrays
        self.found: tuple[cst.CSTNode, str] | None = None

    def target(self, node: cst.BaseExpression) -> None:
        if self.found is not None:
            return
        if isinstance(node, (cst.Tuple, cst.List)):
            for e in node.elements:
                self.target(e.value)
        elif isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name) and \
                node.value.value in self.arrays:
            self.found = (node, node.value.value)

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            self.target(t.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self.target(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self.target(node.target)


def declaration(sig: Signature) -> Function:
    """The IR declaration of ``sig``'s external C function: its parameters and results, no
    body."""
    from .signatures import result_names
    ext = sig.external
    assert ext is not None
    params = [Value(p.type, p.name) for p in sig.params]
    results = [Result(n, t) for n, t in zip(result_names(sig), sig.results, strict=True)]
    return Function(ext.name, Region(params), results, ext.loc, primal=ext.name,
                    param_names=[p.name for p in sig.params], returns_tuple=sig.returns_tuple,
                    external=ext)


def link_externals(functions: list[Function], signatures: list[Signature]) -> list[Function]:
    """``functions`` and the declarations of the ``@external`` C functions, with every call of
    an external function calling its C function directly: the wrapper is the entry point of
    Python and C callers, not a layer inside generated code (the adjoint of a caller then
    sees the C adjoint read the caller's own arrays)."""
    c_name = {sig.name: sig.external.name for sig in signatures if sig.external is not None}
    for fn in functions:
        for op in fn.walk():
            if isinstance(op, Call) and op.callee in c_name:
                op.callee = c_name[op.callee]
    return functions + [declaration(sig) for sig in signatures if sig.external is not None]


def missing(fn: Function, mode: str) -> AdgenError | None:
    """The located error for a declaration whose derivative ``mode`` needs and cannot have."""
    ext = fn.external
    assert ext is not None
    what = f"the external function '{ext.function}' (C function {ext.name} in {ext.source})"
    if mode in ("vector-forward", "vector-reverse", "hvp", "vector-hvp"):
        return AdgenError(ext.loc, f"{mode} mode is not supported for {what} (external C "
                                   "functions have a scalar tangent and adjoint: use the modes "
                                   "forward and reverse, or write the function in Python)")
    key = "tangent" if mode == "forward" else "adjoint"
    if getattr(ext, key):
        return None
    suggested = ext.name + ("_d" if key == "tangent" else "_b")
    return AdgenError(ext.loc, f"{mode} mode needs the {key} of {what}, and @external names "
                               f"none (add {key}=\"{suggested}\" and define that C function in "
                               f"{ext.source})")
