"""Textual form of the IR, for ``adgen --dump-ir`` and for tests.

    func @pow_loop(%x: f64, %n: i64) -> f64 {
      %r = const 1.0 : f64
      %r.1, %k = while(%r.2 = %r, %k.1 = %c0) cond {
        ...
"""

from __future__ import annotations

from .core import (
    Call, Const, Dim, For, Function, If, Module, Op, Pop, Prim, Region, Value, While,
)


class Printer:
    def __init__(self) -> None:
        self.names: dict[Value, str] = {}
        self.used: set[str] = set()
        self.lines: list[str] = []

    def name(self, v: Value) -> str:
        key = v
        if key not in self.names:
            base = v.name or str(len(self.names))
            cand = base
            k = 1
            while cand in self.used:
                cand = f"{base}.{k}"
                k += 1
            self.used.add(cand)
            self.names[key] = cand
        return "%" + self.names[key]

    def vals(self, vs: list[Value]) -> str:
        return ", ".join(self.name(v) for v in vs)

    def function(self, fn: Function) -> str:
        params = ", ".join(f"{self.name(a)}: {a.type}" for a in fn.params)
        results = ", ".join(f"{r.name}: {r.type}" for r in fn.results)
        if fn.external is not None:  # a C function the user gives: a declaration
            self.lines.append(f"extern func @{fn.name}({params}) -> ({results})  // {fn.mode}, "
                              f"{fn.external.source}")
            return "\n".join(self.lines)
        self.lines.append(f"func @{fn.name}({params}) -> ({results}) {{  // {fn.mode}")
        self.region_ops(fn.body, 1)
        self.lines.append("}")
        return "\n".join(self.lines)

    def region_ops(self, region: Region, depth: int) -> None:
        for op in region.ops:
            self.op(op, depth)

    def op(self, op: Op, depth: int) -> None:
        pad = "  " * depth
        lhs = f"{self.vals(op.results)} = " if op.results else ""
        loc = f"  // line {op.loc.line}" if op.loc.line else ""
        types = ", ".join(str(r.type) for r in op.results)
        if isinstance(op, Const):
            self.lines.append(f"{pad}{lhs}const {op.value!r} : {types}{loc}")
        elif isinstance(op, Prim):
            self.lines.append(f"{pad}{lhs}{op.prim} {self.vals(op.operands)} : {types}{loc}")
        elif isinstance(op, Dim):
            self.lines.append(f"{pad}{lhs}dim {self.vals(op.operands)}, {op.axis}{loc}")
        elif isinstance(op, Call):
            directive = f" {op.directive}" if op.directive else ""
            self.lines.append(f"{pad}{lhs}call @{op.callee}({self.vals(op.operands)}){directive} : "
                              f"{types}{loc}")
        elif isinstance(op, If):
            self.lines.append(f"{pad}{lhs}if {self.vals(op.operands)} {{{loc}")
            self.region_ops(op.regions[0], depth + 1)
            self.lines.append(f"{pad}}} else {{")
            self.region_ops(op.regions[1], depth + 1)
            self.lines.append(f"{pad}}}")
        elif isinstance(op, For):
            body = op.body
            iv, carried = body.args[0], body.args[1:]
            start, stop, step = op.operands[:3]
            inits = ", ".join(f"{self.name(a)} = {self.name(i)}"
                              for a, i in zip(carried, op.inits, strict=True))
            self.lines.append(
                f"{pad}{lhs}{'prange' if op.parallel else 'for'} {self.name(iv)} = {self.name(start)} to {self.name(stop)} "
                f"step {self.name(step)} iter({inits})"
                f"{' iteration_tape' if op.iteration_tape else ''} {{{loc}")
            self.region_ops(body, depth + 1)
            self.lines.append(f"{pad}}}")
        elif isinstance(op, While):
            cond, body = op.regions
            inits = ", ".join(f"{self.name(a)} = {self.name(i)}"
                              for a, i in zip(cond.args, op.inits, strict=True))
            self.lines.append(f"{pad}{lhs}while({inits}) cond {{{loc}")
            self.region_ops(cond, depth + 1)
            self.lines.append(f"{pad}}} do({self.vals(body.args)}) {{")
            self.region_ops(body, depth + 1)
            self.lines.append(f"{pad}}}")
        elif isinstance(op, Pop):
            self.lines.append(f"{pad}{lhs}pop : {types}{loc}")
        else:
            self.lines.append(f"{pad}{lhs}{op.mnemonic} {self.vals(op.operands)}{loc}")


def print_function(fn: Function) -> str:
    return Printer().function(fn)


def print_module(module: Module) -> str:
    return "\n\n".join(print_function(fn) for fn in module.functions) + "\n"
