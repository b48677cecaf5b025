"""The fence: rejects syntax outside the adgen subset before lowering.

Each unsupported construct gets one located message saying what to write
instead.  Lowering may then assume the statements and expressions it sees
are of the supported kinds; it still checks names, types and arities.
"""

from __future__ import annotations

import re
import unicodedata

import libcst as cst
from libcst.metadata import PositionProvider

from ..ir.core import Loc
from .diagnostics import AdgenError
from .external import external_decorator, is_external_decorator
from .signatures import is_main_guard

#: node type -> (what it is, what to do instead)
UNSUPPORTED: dict[type, str] = {
    cst.ClassDef: "classes are not supported (write functions of scalars and arrays)",
    cst.Lambda: "lambda is not supported (define a module-level function)",
    cst.Try: "try/except is not supported (adgen modules raise no exceptions; use assert)",
    cst.TryStar: "try/except is not supported (adgen modules raise no exceptions; use assert)",
    cst.Raise: "raise is not supported (use assert)",
    cst.With: "with is not supported (adgen modules have no context managers)",
    cst.Global: "global is not supported (module-level names are constants; pass values as arguments)",
    cst.Nonlocal: "nonlocal is not supported (closures are not part of the subset)",
    cst.Yield: "yield is not supported (generators are not part of the subset; return values instead)",
    cst.Await: "await is not supported (adgen modules are synchronous)",
    cst.Del: "del is not supported (locals end with the function)",
    cst.NamedExpr: "assignment expressions (:=) are not supported (assign in a statement)",
    cst.List: "lists are not supported (use zeros(n) for an array)",
    cst.ListComp: "list comprehensions are not supported (write a for loop over an array)",
    cst.Dict: "dicts are not supported (only scalars and arrays)",
    cst.DictComp: "dict comprehensions are not supported (only scalars and arrays)",
    cst.Set: "sets are not supported (only scalars and arrays)",
    cst.SetComp: "set comprehensions are not supported (only scalars and arrays)",
    cst.GeneratorExp: "generator expressions are not supported (write a for loop)",
    cst.FormattedString: "strings are not supported (only scalars and arrays)",
    cst.ConcatenatedString: "strings are not supported (only scalars and arrays)",
    cst.Slice: "slicing is not supported (index single elements inside a loop)",
    cst.StarredElement: "starred expressions are not supported (write each value or name "
                        "separately)",
    cst.Decorator: "this decorator is not supported (only @custom_vjp(adjoint), "
                   "@custom_jvp(tangent) and @external(...), from adgen)",
    cst.Match: "match is not supported (use if/elif/else)",
    cst.Ellipsis: "... is not supported (use pass)",
    cst.Imaginary: "complex numbers are not supported (use pairs of floats)",
}

DIRECTIVE = re.compile(r"#\s*adgen\s*:")
#: directives on a loop (its header line or the comment line right above it): how the adjoint
#: gets the loop body's values back, by saving them on the tape or by recomputing them, or
#: (checkpoint, on a for loop) by saving the carried values only and computing each iteration
#: again just before reversing it
LOOP_DIRECTIVES = ("store", "recompute", "checkpoint")
#: binomial(k) on a for loop: revolve's checkpointing with at most k snapshots
BINOMIAL = re.compile(r"binomial\(\s*(\d+)\s*\)")
#: the most snapshots binomial(k) may keep (more is never needed: k >= the trip count keeps
#: every iteration's state)
MAX_SNAPSHOTS = 1_000_000
#: on a prange: its adjoint computes each iteration's Jacobian in forward mode and applies
#: its transpose (``ad/mixed.py``)
FORWARD_IN_REVERSE = "forward-in-reverse"
PRANGE_DIRECTIVES = (FORWARD_IN_REVERSE,)


def is_loop_directive(d: str | None) -> bool:
    return d in LOOP_DIRECTIVES or d in PRANGE_DIRECTIVES or \
        d is not None and BINOMIAL.fullmatch(d) is not None


def is_prange(node: cst.For | cst.While) -> bool:
    """Whether the loop is ``for ... in prange(...)``."""
    it = node.iter if isinstance(node, cst.For) else None
    return isinstance(it, cst.Call) and isinstance(it.func, cst.Name) and it.func.value == "prange"


#: directives on a statement that calls a module function (end of its line or the line above);
#: each is a loop directive too
CALL_DIRECTIVES = ("checkpoint",)


def loop_directive_comments(node: cst.For | cst.While) -> list[cst.Comment]:
    """The comments a loop directive may be written in."""
    out = [line.comment for line in node.leading_lines[-1:] if line.comment is not None]
    header = node.body.header if isinstance(node.body, cst.IndentedBlock) else None
    if header is not None and header.comment is not None:
        out.append(header.comment)
    return out


def directive_of(comment: cst.Comment) -> str | None:
    """``store`` for ``# adgen: store``; None if the comment is not a directive."""
    m = DIRECTIVE.match(comment.value)
    if m is None:
        return None
    return comment.value[m.end():].strip().split("#")[0].strip()


def statement_directive_comments(node: cst.SimpleStatementLine) -> list[cst.Comment]:
    """The comments a call directive may be written in."""
    out = [line.comment for line in node.leading_lines[-1:] if line.comment is not None]
    if node.trailing_whitespace.comment is not None:
        out.append(node.trailing_whitespace.comment)
    return out


def statement_directive(node: cst.SimpleStatementLine) -> tuple[str, cst.Comment | None]:
    """(``checkpoint``, its comment) for a statement with a call directive, else ("", None)."""
    for c in statement_directive_comments(node):
        d = directive_of(c)
        if d in CALL_DIRECTIVES:
            return d, c
    return "", None


def custom_derivative(node: cst.Decorator) -> tuple[str, str] | None:
    """(``custom_vjp``, ``g``) for ``@custom_vjp(g)``, (``custom_jvp``, ``g``) for
    ``@custom_jvp(g)`` (also spelled ``@adgen.custom_vjp(g)``...); None for another
    decorator."""
    d = node.decorator
    if not isinstance(d, cst.Call) or len(d.args) != 1 or d.args[0].keyword is not None \
            or d.args[0].star or not isinstance(d.args[0].value, cst.Name):
        return None
    f = d.func
    kind = f.value if isinstance(f, cst.Name) else \
        f.attr.value if isinstance(f, cst.Attribute) and isinstance(f.value, cst.Name) and \
        f.value.value == "adgen" else None
    if kind in ("custom_vjp", "custom_jvp"):
        return kind, d.args[0].value.value
    return None


def custom_adjoint_name(node: cst.Decorator) -> str | None:
    """``g`` for ``@custom_vjp(g)`` (or ``@adgen.custom_vjp(g)``); None for another decorator."""
    found = custom_derivative(node)
    return found[1] if found is not None and found[0] == "custom_vjp" else None


def loop_directive(node: cst.For | cst.While) -> str:
    """The loop's directive: store, recompute, checkpoint, or binomial(k) with k written
    without spaces."""
    for c in loop_directive_comments(node):
        d = directive_of(c)
        if d is not None and BINOMIAL.fullmatch(d):
            return f"binomial({int(BINOMIAL.fullmatch(d).group(1))})"  # type: ignore[union-attr]
        if d in LOOP_DIRECTIVES or d in PRANGE_DIRECTIVES:
            return d
    return ""


class Fence(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, path: str) -> None:
        super().__init__()
        self.path = path
        self.allowed_strings: set[cst.BaseExpression] = set()
        self.loop_comment_ids: set[cst.Comment] = set()
        self.depth = 0
        #: bodies of functions with @external
        self.external_bodies: set[cst.BaseSuite] = set()

    def loc(self, node: cst.CSTNode) -> Loc:
        pos = self.get_metadata(PositionProvider, node).start
        return Loc(self.path, pos.line, pos.column + 1)

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, cst.Decorator) and (custom_derivative(node) is not None or
                                                is_external_decorator(node)):
            return False  # read by ScopeReader.function
        if node in self.external_bodies:
            return False  # the CPython meaning of an external C function: never compiled
        message = UNSUPPORTED.get(type(node))
        if message is not None:
            raise AdgenError(self.loc(node), message)
        return super().on_visit(node)

    def _allow_docstring(self, body: cst.BaseSuite | cst.Module) -> None:
        stmts = body.body
        if stmts and isinstance(stmts[0], cst.SimpleStatementLine):
            first = stmts[0].body[0]
            if isinstance(first, cst.Expr) and isinstance(first.value, cst.SimpleString):
                self.allowed_strings.add(first.value)

    def visit_Module(self, node: cst.Module) -> None:
        self._allow_docstring(node)

    def visit_Name(self, node: cst.Name) -> None:
        name = node.value
        if not name.isascii() and unicodedata.normalize("NFKC", name) != name:
            normal = unicodedata.normalize("NFKC", name)
            raise AdgenError(self.loc(node), f"Python reads the name '{name}' as '{normal}' "
                                             f"(write it as '{normal}')")

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        name = node.name.value
        if not name.isascii():
            raise AdgenError(self.loc(node.name), f"the function name '{name}' is not ASCII (it "
                                                  "names the generated C functions: use ASCII "
                                                  "letters, digits and _)")
        if self.depth > 0:
            raise AdgenError(self.loc(node),
                             "nested functions are not supported (define it at module level)")
        if node.asynchronous is not None:
            raise AdgenError(self.loc(node), "async functions are not supported (write a plain "
                                             "def)")
        self.depth += 1
        self._allow_docstring(node.body)
        if external_decorator(node) is not None:
            self.external_bodies.add(node.body)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.depth -= 1

    def visit_Assert(self, node: cst.Assert) -> None:
        if node.msg is not None:
            self.allowed_strings.add(node.msg)

    def visit_Annotation(self, node: cst.Annotation) -> None:
        if isinstance(node.annotation, (cst.SimpleString, cst.ConcatenatedString)):
            raise AdgenError(self.loc(node.annotation),
                             "type annotations in quotes are not supported (write the type "
                             "itself: x: float, not x: \"float\")")

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        if node not in self.allowed_strings:
            raise AdgenError(self.loc(node), "strings are not supported (only scalars and arrays)")

    def visit_If(self, node: cst.If) -> bool:
        # `if __name__ == "__main__":` at module level runs only in CPython
        return not (self.depth == 0 and is_main_guard(node))

    def loop_comments(self, node: cst.For | cst.While) -> None:
        given = [(c, d) for c in loop_directive_comments(node)
                 for d in [directive_of(c)] if is_loop_directive(d)]
        if len({d for _, d in given}) > 1:
            (_, first), (c, second) = given[0], given[-1]
            raise AdgenError(self.loc(c), f"this loop has two directives, '# adgen: {first}' "
                                          f"and '# adgen: {second}' (keep one)")
        for c in loop_directive_comments(node):
            d = directive_of(c)
            if d == "checkpoint" and isinstance(node, cst.While):
                raise AdgenError(self.loc(c), "'# adgen: checkpoint' on a while loop is not "
                                              "supported yet (it applies to a for loop, or to a "
                                              "statement that calls a module function)")
            binomial = BINOMIAL.fullmatch(d) if d is not None else None
            if (d == "checkpoint" or binomial is not None) and isinstance(node, cst.For) and \
                    _leaves_early(node.body):
                raise AdgenError(self.loc(c), f"'# adgen: {d}' on a loop that can end early "
                                              "(a break or a return in it) is not supported yet "
                                              f"(remove '# adgen: {d}', or let the loop run "
                                              "its range)")
            if binomial is not None and isinstance(node, cst.While):
                raise AdgenError(self.loc(c), f"'# adgen: {d}' on a while loop is not supported "
                                              "(binomial checkpointing needs the trip count: use "
                                              "a for loop)")
            if d in PRANGE_DIRECTIVES and not is_prange(node):
                raise AdgenError(self.loc(c), f"'# adgen: {d}' applies to a prange, whose "
                                              "iterations are independent (write for i in "
                                              "prange(...), or remove the directive)")
            if binomial is not None and int(binomial.group(1)) < 1:
                raise AdgenError(self.loc(c), f"'# adgen: {d}' keeps no snapshot (write "
                                              "binomial(k) with k >= 1)")
            if binomial is not None and int(binomial.group(1)) > MAX_SNAPSHOTS:
                raise AdgenError(self.loc(c), f"'# adgen: {d}' keeps too many snapshots (write "
                                              f"binomial(k) with k <= {MAX_SNAPSHOTS:,}; k >= the "
                                              "trip count keeps every iteration's state)")
            if is_loop_directive(d):
                self.loop_comment_ids.add(c)

    def visit_For(self, node: cst.For) -> None:
        self.loop_comments(node)
        if node.orelse is not None:
            raise AdgenError(self.loc(node.orelse), "for/else is not supported (use a flag variable)")
        if node.asynchronous is not None:
            raise AdgenError(self.loc(node), "async for is not supported (write for i in "
                                             "range(...))")

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        for c in statement_directive_comments(node):
            if directive_of(c) in CALL_DIRECTIVES:
                self.loop_comment_ids.add(c)

    def visit_While(self, node: cst.While) -> None:
        self.loop_comments(node)
        if node.orelse is not None:
            raise AdgenError(self.loc(node.orelse), "while/else is not supported (use a flag variable)")

    def visit_Comment(self, node: cst.Comment) -> None:
        d = directive_of(node)
        if d is None or node in self.loop_comment_ids:
            return
        if d is not None and BINOMIAL.fullmatch(d):
            raise AdgenError(self.loc(node), f"'# adgen: {d}' applies to a for loop (write it at "
                                             "the end of the for line or on the line above it)")
        if d in LOOP_DIRECTIVES and d in CALL_DIRECTIVES:
            raise AdgenError(self.loc(node), f"'# adgen: {d}' applies to a for loop or to an "
                                             "assignment or expression statement that calls a "
                                             "module function, not to this statement (write it "
                                             "at the end of that line or on the line above it)")
        if d in LOOP_DIRECTIVES:
            raise AdgenError(self.loc(node), f"'# adgen: {d}' applies to a loop (write it at the "
                                             "end of the for/while line or on the line above it)")
        if d in PRANGE_DIRECTIVES:
            raise AdgenError(self.loc(node), f"'# adgen: {d}' applies to a prange (write it at "
                                             "the end of the for line or on the line above it)")
        raise AdgenError(self.loc(node), f"the directive '# adgen: {d}' is not supported yet "
                                         f"(supported: {', '.join(LOOP_DIRECTIVES)} on a loop, "
                                         f"binomial(k) on a for loop, "
                                         f"{', '.join(PRANGE_DIRECTIVES)} on a prange; "
                                         f"{', '.join(CALL_DIRECTIVES)} on a call)")

    def visit_Param(self, node: cst.Param) -> None:
        if node.default is not None:
            raise AdgenError(self.loc(node.default),
                             "default parameter values are not supported (pass every argument)")

    def visit_Parameters(self, node: cst.Parameters) -> None:
        if isinstance(node.star_arg, cst.Param):
            raise AdgenError(self.loc(node.star_arg), "*args is not supported (name each parameter)")
        if node.star_kwarg is not None:
            raise AdgenError(self.loc(node.star_kwarg), "**kwargs is not supported (name each parameter)")
        if isinstance(node.star_arg, cst.ParamStar):
            raise AdgenError(self.loc(node.star_arg), "keyword-only parameters are not supported "
                                                      "(write plain parameters, without *)")
        if isinstance(node.posonly_ind, cst.ParamSlash):
            raise AdgenError(self.loc(node.posonly_ind), "positional-only parameters are not "
                                                         "supported (write plain parameters, "
                                                         "without /)")
        if node.kwonly_params or node.posonly_params:
            bad = (node.kwonly_params or node.posonly_params)[0]
            raise AdgenError(self.loc(bad),
                             "keyword-only and positional-only parameters are not supported "
                             "(write plain parameters, without / or *)")


def _leaves_early(body: cst.CSTNode) -> bool:
    """Whether a loop with ``body`` can end before its range does: a ``return`` in it, or a
    ``break`` of its own (not of a loop inside it)."""
    found = False

    class Leaves(cst.CSTVisitor):
        def visit_Return(self, node: cst.Return) -> None:
            nonlocal found
            found = True

        def visit_Break(self, node: cst.Break) -> None:
            nonlocal found
            found = True

        def visit_For(self, node: cst.For) -> bool:  # a break there ends that loop
            node.body.visit(ReturnsOnly())
            return False

        def visit_While(self, node: cst.While) -> bool:
            node.body.visit(ReturnsOnly())
            return False

    class ReturnsOnly(cst.CSTVisitor):
        def visit_Return(self, node: cst.Return) -> None:
            nonlocal found
            found = True

    body.visit(Leaves())
    return found
