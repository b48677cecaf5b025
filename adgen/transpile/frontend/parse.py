"""Entry point of the frontend: source text -> fenced CST -> IR module."""

from __future__ import annotations

import os

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from ..ir.core import Loc, Module
from .diagnostics import AdgenError, Diagnostics
from .fence import Fence
from .lower import FunctionLowering
from .signatures import Options, ScopeReader


def parse_module(path: str, source: str, options: Options | None = None,
                 diags: Diagnostics | None = None) -> Module:
    options = options or Options()
    diags = diags or Diagnostics()
    display = os.path.basename(path) if not os.path.isabs(path) else path
    display = path
    try:
        tree = cst.parse_module(source)
    except cst.ParserSyntaxError as exc:
        raise AdgenError(Loc(display, exc.raw_line, exc.raw_column + 1),
                         f"invalid syntax: {exc.message}") from None
    wrapper = MetadataWrapper(tree, unsafe_skip_copy=True)
    positions = wrapper.resolve(PositionProvider)

    def loc_of(node: cst.CSTNode) -> Loc:
        pos = positions[node].start
        return Loc(display, pos.line, pos.column + 1)

    wrapper.visit(Fence(display))
    reader = ScopeReader(display, loc_of, options)
    scope = reader.read(tree)
    name = os.path.splitext(os.path.basename(path))[0]
    functions = [FunctionLowering(sig, reader, loc_of, diags).lower()
                 for sig in scope.functions.values()]
    return Module(name, path, functions, source.splitlines())
