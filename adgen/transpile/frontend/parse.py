"""Entry point of the frontend: source text -> fenced CST -> IR module."""

from __future__ import annotations

import os
import sys
import warnings

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from ..ir.core import Call, Function, Loc, Module, Nested, Value
from ..ir.types import ArrayType
from .diagnostics import AdgenError, Diagnostics, Note, source_lines
from .external import link_externals
from .fence import Fence
from .lower import FunctionLowering
from .signatures import Options, ScopeReader


def parse_module(path: str, source: str, options: Options | None = None,
                 diags: Diagnostics | None = None) -> Module:
    options = options or Options()
    diags = diags or Diagnostics()
    display = path  # diagnostics name the file as the user gave it
    source = source.removeprefix("\ufeff")  # a UTF-8 byte order mark, as CPython skips it
    check_python_syntax(display, source)
    try:
        tree = cst.parse_module(source)
    except cst.ParserSyntaxError as exc:
        raise AdgenError(Loc(display, exc.raw_line, exc.raw_column + 1),
                         f"invalid syntax: {exc.message} (an adgen module must be valid "
                         "Python)") from None
    try:
        functions, nested = lower_module(display, tree, options, diags)
    except RecursionError:  # LibCST's visitors and lowering recurse over nested expressions
        raise too_deep(display, source) from None
    name = os.path.splitext(os.path.basename(path))[0]
    return Module(name, path, functions, source_lines(source), nested)


def check_call_overlap(module: Module, user: list[str]) -> None:
    """Reject a call that passes one array for two array parameters of which the callee
    writes one (DESIGN.md section 1: arrays must not overlap when one is written).  The C of
    the callee takes distinct arrays for distinct parameters (its loops may run in SIMD
    lanes), which CPython's element-by-element order would not match.  ``user``: the
    functions of the source; run once the derivatives of nested transforms (``grad(f)``)
    are functions of the module too, so that what they write is known, but not on their
    calls (a ``_bwd`` may take an adjoint array in place of a primal one it never reads)."""
    from ..analysis.activity import written_params

    written = {name: written_params(module.function(name), module) for name in user}
    for name in user:
        for op in module.function(name).walk():
            if not isinstance(op, Call) or op.callee not in written:
                continue
            callee = module.function(op.callee)
            first: dict[Value, int] = {}
            for k, a in enumerate(op.operands):
                if not isinstance(a.type, ArrayType):
                    continue
                j = first.setdefault(a, k)
                if j != k and (j in written[callee.name] or k in written[callee.name]):
                    w = callee.param_names[k if k in written[callee.name] else j]
                    raise AdgenError(
                        op.loc, f"the array '{a.name}' is passed to '{callee.name}' as both "
                        f"'{callee.param_names[j]}' and '{callee.param_names[k]}', and "
                        f"'{callee.name}' writes '{w}' (arrays passed to a function must not "
                        "overlap when one of them is written: pass a copy)",
                        [Note(callee.loc, f"'{callee.name}' defined here")])


TOO_DEEP = "this module is nested too deeply (split long expressions into several statements)"


def too_deep(display: str, source: str) -> AdgenError:
    """The error of a module too deeply nested for the parser or the passes (they recurse
    over expressions), at the start of its longest statement (in tokens): the likely culprit,
    found without recursing."""
    import io
    import tokenize

    best, best_loc, count, start = 0, Loc(display, 1, 1), 0, None
    skip = (tokenize.NL, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT)
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source.removeprefix("\ufeff")).readline):
            if tok.type in skip:
                continue
            if tok.type in (tokenize.NEWLINE, tokenize.ENDMARKER):
                if start is not None and count > best:
                    best, best_loc = count, Loc(display, start[0], start[1] + 1)
                count, start = 0, None
                continue
            if start is None:
                start = tok.start
            count += 1
    except (tokenize.TokenError, SyntaxError):
        pass
    return AdgenError(best_loc, TOO_DEEP)


def lower_module(display: str, tree: cst.Module, options: Options,
                 diags: Diagnostics) -> tuple[list[Function], dict[str, Nested]]:
    wrapper = MetadataWrapper(tree, unsafe_skip_copy=True)
    positions = wrapper.resolve(PositionProvider)

    def loc_of(node: cst.CSTNode) -> Loc:
        pos = positions[node].start
        return Loc(display, pos.line, pos.column + 1)

    wrapper.visit(Fence(display))
    reader = ScopeReader(display, loc_of, options)
    scope = reader.read(tree)
    functions = [FunctionLowering(sig, reader, loc_of, diags).lower()
                 for sig in scope.functions.values()]
    functions = link_externals(functions, list(scope.functions.values()))  # @external
    return functions, scope.nested


def check_python_syntax(display: str, source: str) -> None:
    """Reject what CPython rejects, located and worded as CPython does.

    An adgen module is valid Python (DESIGN.md section 1).  CPython's compiler
    gives better syntax messages and positions than LibCST's parser, and also
    catches errors a parser does not (``break`` outside a loop and the like).  It runs
    under CPython's default recursion limit (transpiling raises it, see
    ``pipeline.RECURSION_LIMIT``), which bounds how deep an expression CPython compiles.
    """
    limit = sys.getrecursionlimit()
    try:
        sys.setrecursionlimit(min(limit, CPYTHON_RECURSION_LIMIT))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(source, display, "exec", dont_inherit=True)
    except SyntaxError as exc:  # includes IndentationError and TabError
        line, col = (exc.lineno, exc.offset or 1) if exc.lineno else _null_byte(source)
        raise AdgenError(Loc(display, line, max(col, 1)),
                         f"invalid syntax: {exc.msg} (an adgen module must be valid Python)"
                         ) from None
    except ValueError as exc:  # e.g. null bytes (a SyntaxError from Python 3.12)
        raise AdgenError(Loc(display, *_null_byte(source)),
                         f"invalid syntax: {exc} (an adgen module must be valid Python)") from None
    except (RecursionError, MemoryError):  # CPython's compiler gives up on deep nesting
        raise too_deep(display, source) from None
    finally:
        sys.setrecursionlimit(limit)


def _null_byte(source: str) -> tuple[int, int]:
    """The line and column of the first null byte of ``source`` (CPython names none), else
    the first line's first column."""
    if "\0" not in source:
        return 1, 1
    before = source[:source.index("\0")]
    return before.count("\n") + 1, len(before) - (before.rfind("\n") + 1) + 1


#: sys.getrecursionlimit() in a CPython that has not changed it
CPYTHON_RECURSION_LIMIT = 1000
