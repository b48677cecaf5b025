"""Lowering: a fenced LibCST function body to structured SSA IR.

Variables become SSA values through an environment (name -> value).  At an
``if``, each branch lowers with its own copy of the environment and the
names that differ become the ``if``'s results; a loop's carried values are
the names it assigns that were defined before it.  Types are inferred here:
a local keeps the type of its first binding, literals adapt to the typed
operand next to them (``x32 * 2.0`` stays f32), and every mismatch is a
located error with a note at the first binding.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import libcst as cst

from ..ir.builder import Builder
from ..ir.core import (
    Assert, Break, Condition, Continue, For, Function, If, Loc, Op, Region,
    Result, Return, Store, Value, While, Yield,
)
from ..ir.types import BOOL, I64, ArrayType, ScalarType, Type
from ..ir.verifier import endless, falls_through
from ..ir.walk import index_dependent
from .diagnostics import AdgenError, Note
from .expressions import Binding, ExpressionLowering, LoopContext, spelled
from .signatures import result_names
from .fence import loop_directive, statement_directive

class FunctionLowering(ExpressionLowering):
    """A function: its parameters, statements and control flow."""

    # -- function ------------------------------------------------------------------
    def lower(self) -> Function:
        if self.sig.external is not None:
            return self.lower_external()
        params: list[Value] = []
        for p in self.sig.params:
            v = Value(p.type, p.name)
            params.append(v)
            self.env[p.name] = v
            self.bindings[p.name] = Binding(p.type, p.loc)
        region = Region(params)
        self.builder = Builder(region, self.sig.loc)
        self.top_region = region
        self.statements(self.sig.node.body.body)
        if falls_through(region):
            if self.sig.results:
                end = self.sig.node
                raise AdgenError(self._last_line_loc(end),
                                 f"function '{self.sig.name}' can reach its end without returning "
                                 "a value (add a return)")
            # the implicit return at the end of a -> None function has no source line
            self.builder.insert(Return([], [], Loc(self.sig.loc.file, 0, 0)))
        return self.function(region)

    def function(self, region: Region) -> Function:
        results = [Result(n, t) for n, t in zip(result_names(self.sig), self.sig.results,
                                                strict=True)]
        return Function(self.sig.name, region, results, self.sig.loc, primal=self.sig.name,
                        param_names=[p.name for p in self.sig.params],
                        returns_tuple=self.sig.returns_tuple,
                        custom_adjoint=self.sig.custom_adjoint,
                        custom_tangent=self.sig.custom_tangent)

    def lower_external(self) -> Function:
        """An ``@external`` function calls its C function (``frontend/external.py``); its
        Python body is for CPython only."""
        ext = self.sig.external
        assert ext is not None
        params = [Value(p.type, p.name) for p in self.sig.params]
        region = Region(params)
        b = Builder(region, ext.loc)  # the C comment shows the decorator
        results = b.call(ext.name, params, list(self.sig.results))
        b.insert(Return(results, [], ext.loc))
        return self.function(region)

    def _last_line_loc(self, node: cst.FunctionDef) -> Loc:
        stmts = node.body.body
        return self.loc_of(stmts[-1]) if stmts else self.loc_of(node)

    # -- statements -----------------------------------------------------------------
    def statements(self, stmts: Sequence[cst.BaseStatement | cst.BaseSmallStatement]) -> None:
        for i, stmt in enumerate(stmts):
            if not falls_through(self.builder.region):
                return  # unreachable code after return/break/continue
            if isinstance(stmt, cst.SimpleStatementLine):
                directive, comment = statement_directive(stmt)
                self.call_directive, marked = directive, len(self.directed_calls)
                for small in stmt.body:
                    if not falls_through(self.builder.region):
                        return
                    self.small_statement(small, first=(i == 0))
                self.call_directive = ""
                if comment is not None and len(self.directed_calls) == marked:
                    raise self.error(comment, f"'# adgen: {directive}' applies to a call of a "
                                              "function of this module, and this statement has "
                                              "none (put it on the line of such a call)")
            elif isinstance(stmt, cst.If):
                self.if_statement(stmt)
            elif isinstance(stmt, cst.For):
                self.for_statement(stmt)
            elif isinstance(stmt, cst.While):
                self.while_statement(stmt)
            elif isinstance(stmt, cst.BaseSmallStatement):
                self.small_statement(stmt, first=(i == 0))
            elif isinstance(stmt, cst.FunctionDef):
                raise self.error(stmt, "nested functions are not supported (define it at module level)")
            else:
                raise self.error(stmt, f"this statement is not supported ({type(stmt).__name__})")

    def block(self, suite: cst.BaseSuite) -> None:
        if isinstance(suite, cst.IndentedBlock):
            self.statements(suite.body)
        else:
            self.statements(suite.body)  # type: ignore[attr-defined]

    def small_statement(self, node: cst.BaseSmallStatement, first: bool) -> None:
        if isinstance(node, cst.Assign):
            self.assign(node)
        elif isinstance(node, cst.AnnAssign):
            self.ann_assign(node)
        elif isinstance(node, cst.AugAssign):
            self.aug_assign(node)
        elif isinstance(node, cst.Return):
            self.return_statement(node)
        elif isinstance(node, cst.Pass):
            return
        elif isinstance(node, cst.Break):
            loop = self.current_loop(node, "break")
            if loop.parallel:
                raise self.error(node, "break leaves a prange loop, whose iterations are "
                                       "independent (use range, or continue to skip an iteration)")
            self.at(node).insert(Break([self.lookup_env(n) for n in loop.carried], [], self.builder.loc))
        elif isinstance(node, cst.Continue):
            loop = self.current_loop(node, "continue")
            self.at(node).insert(Continue([self.lookup_env(n) for n in loop.carried], [],
                                          self.builder.loc))
        elif isinstance(node, cst.Assert):
            cond = self.to_bool(node.test, self.expr(node.test))
            msg = ""
            if isinstance(node.msg, cst.SimpleString):
                msg = str(node.msg.evaluated_value)
            self.at(node).insert(Assert([cond], [], self.builder.loc, message=msg))
        elif isinstance(node, cst.Expr):
            if isinstance(node.value, cst.SimpleString) and first:
                return  # docstring
            if isinstance(node.value, cst.Call):
                self.call(node.value, allow_none=True, allow_tuple=True)
                return
            raise self.error(node, "this expression statement has no effect (assign its value "
                                   "or remove it)")
        elif isinstance(node, (cst.Import, cst.ImportFrom)):
            raise self.error(node, "imports inside functions are not supported (import at module level)")
        else:
            raise self.error(node, f"this statement is not supported ({type(node).__name__})")

    def current_loop(self, node: cst.CSTNode, what: str) -> LoopContext:
        if not self.loops:
            raise self.error(node, f"'{what}' outside a loop (use it inside a for or while loop)")
        return self.loops[-1]

    def lookup_env(self, name: str) -> Value:
        return self.env[name]

    # -- assignment -----------------------------------------------------------------
    def assign(self, node: cst.Assign) -> None:
        targets = [t.target for t in node.targets]
        if any(isinstance(t, cst.Tuple) for t in targets):
            if len(targets) != 1:
                raise self.error(node, "this tuple assignment is not supported (unpack into one "
                                       "tuple of names: a, b = ...)")
            self.unpack(targets[0], node.value)
            return
        if isinstance(node.value, cst.Call) and self.returns_tuple(node.value):
            raise self.error(node.value, "this call returns a tuple; unpack it "
                                         f"(a, b = {spelled(node.value.func)}(...))")
        value = self.expr(node.value)
        for t in targets:
            self.bind_target(t, value, node.value)

    def unpack(self, target: cst.Tuple, value_node: cst.BaseExpression) -> None:
        elems = [e.value for e in target.elements]
        if isinstance(value_node, cst.Tuple):
            value_nodes = [e.value for e in value_node.elements]
            values = [self.expr(e) for e in value_nodes]
        elif isinstance(value_node, cst.Call):
            values = self.call(value_node, allow_tuple=True)
            value_nodes = [value_node] * len(values)
            if not self.returns_tuple(value_node):
                raise self.error(value_node, "this call does not return a tuple (assign its value "
                                             "to one name)")
        else:
            raise self.error(value_node, "this value cannot be unpacked (unpack a tuple of values "
                                         "or a call returning a tuple)")
        if len(values) != len(elems):
            raise self.error(target, f"cannot unpack {len(values)} values into {len(elems)} names "
                                     "(use one name per value)")
        for t, v, n in zip(elems, values, value_nodes, strict=True):
            self.bind_target(t, v, n)

    def bind_target(self, target: cst.BaseExpression, value: Value,
                    value_node: cst.CSTNode) -> None:
        if isinstance(target, cst.Name):
            self.bind(target, target.value, value)
        elif isinstance(target, cst.Subscript):
            array, indices = self.subscript_parts(target)
            self.store(target, array, indices, value, value_node)
        else:
            raise self.error(target, "assigning to this is not supported (assign to a name or an "
                                     "array element)")

    def check_assignable(self, node: cst.CSTNode, name: str) -> None:
        """Module-level names must not change; a parameter that shadows one is a local."""
        if any(p.name == name for p in self.sig.params):
            return
        if name in self.scope.functions:
            raise self.error(node, f"'{name}' is a function of this module and cannot be assigned "
                                   "(use another name)")
        if name in self.scope.constants:
            raise self.error(node, f"'{name}' is a module constant and cannot be assigned "
                                   "(module-level names must not change)",
                             [Note(self.scope.constants[name].loc, "defined here")])

    def bind(self, node: cst.CSTNode, name: str, value: Value, declared: Type | None = None) -> None:
        self.check_assignable(node, name)
        prev = self.bindings.get(name)
        if isinstance(value.type, ArrayType):
            if prev is not None:
                raise self.error(node, f"array variable '{name}' cannot be rebound "
                                       "(assign elements, or use a new name)",
                                 [Note(prev.loc, f"'{name}' first bound here")])
            self.bindings[name] = Binding(value.type, self.loc_of(node))
            if value.name is None:
                value.name = name
            self.env[name] = value
            self.undefined_why.pop(name, None)
            return
        want = declared or (prev.type if prev is not None else None)
        if want is None:
            if self.is_weak(value):
                value = self.strong(value)
            want = value.type
        elif value.type != want:
            if isinstance(want, ArrayType):
                assert prev is not None
                raise self.error(node, f"array variable '{name}' cannot be rebound to a "
                                       f"{value.type} (use a new name)",
                                 [Note(prev.loc, f"'{name}' first bound here")])
            if self._convertible(value, want):
                if isinstance(want, ScalarType):
                    self.check_literal_fits(node, value, want)
                value = self.at(node).cast(value, want)
            else:
                notes = [Note(prev.loc, f"'{name}' first bound here as {prev.type}")] if prev else []
                hint = " (a local keeps the type of its first binding; use a new name)"
                if want.is_int and isinstance(value.type, ScalarType) and value.type.is_float:
                    hint = f" (initialise it with a float, e.g. {name} = 0.0, or use int(...))"
                raise self.error(node, f"'{name}' has type {want} but is assigned a {value.type}{hint}",
                                 notes)
        if prev is None:
            self.bindings[name] = Binding(want, self.loc_of(node))
        if value.name is None and isinstance(value.owner, Op):
            value.name = name
        self.env[name] = value
        self.undefined_why.pop(name, None)

    def _convertible(self, value: Value, want: ScalarType) -> bool:
        t = value.type
        if not isinstance(t, ScalarType):
            return False
        if want.is_float and t.is_int:
            return True  # Python keeps the int; the numbers agree
        if want.is_float and t.is_float:
            return self.is_weak(value)
        if want.is_int and t.is_int:
            return self.is_weak(value)
        return False

    def strong(self, v: Value) -> Value:
        """A weak literal bound to a name gets its default type."""
        c = self.const_value(v)
        assert c is not None
        nv = self.builder.const(c, v.type)
        return nv

    def ann_assign(self, node: cst.AnnAssign) -> None:
        if not isinstance(node.target, cst.Name):
            raise self.error(node.target, "this annotation is not supported (annotate a local "
                                          "name, e.g. k: int = 0)")
        declared = self.annotations.annotation(node.annotation.annotation)
        name = node.target.value
        prev = self.bindings.get(name)
        if prev is not None and prev.type != declared:
            raise self.error(node.annotation, f"'{name}' is annotated {declared} but was bound as "
                             f"{prev.type} (a local keeps one type; use a new name)",
                             [Note(prev.loc, "first bound here")])
        if node.value is None:
            self.check_assignable(node.target, name)
            self.bindings[name] = Binding(declared, self.loc_of(node.target))
            return
        value = self.expr(node.value)
        if isinstance(declared, ScalarType) and value.type != declared:
            value = self.convert(node.value, value, declared, f"'{name}'")
        self.bind(node.target, name, value, declared)

    def aug_assign(self, node: cst.AugAssign) -> None:
        opname = AUG_OPS.get(type(node.operator))
        if opname is None:
            raise self.error(node.operator, "this augmented assignment operator is not supported "
                                            "(use += -= *= /= //= %= **=)")
        if isinstance(node.target, cst.Name):
            current = self.name_value(node.target)
            rhs = self.expr(node.value)
            result = self.binary(node, opname, current, rhs, right_node=node.value)
            self.bind(node.target, node.target.value, result)
        elif isinstance(node.target, cst.Subscript):
            array, indices = self.subscript_parts(node.target)
            current = self.at(node.target).load(array, indices)
            rhs = self.expr(node.value)
            result = self.binary(node, opname, current, rhs, right_node=node.value)
            self.store(node.target, array, indices, result, node)
        else:
            raise self.error(node.target, "assigning to this is not supported (assign to a name or "
                                          "an array element)")

    def store(self, node: cst.CSTNode, array: Value, indices: list[Value], value: Value,
              value_node: cst.CSTNode) -> None:
        assert isinstance(array.type, ArrayType)
        elem = array.type.elem
        if value.type != elem:
            value = self.convert(value_node, value, elem, "array element")
        self.at(node).store(array, indices, value)

    # -- return -----------------------------------------------------------------------
    def return_statement(self, node: cst.Return) -> None:
        if any(loop.parallel for loop in self.loops):
            raise self.error(node, "return inside a prange loop, whose iterations are independent "
                                   "(use range, or compute a value in the loop and return after it)")
        want = self.sig.results
        value_nodes: list[cst.CSTNode] = []
        if node.value is None or isinstance(node.value, cst.Name) and node.value.value == "None":
            values: list[Value] = []
        elif isinstance(node.value, cst.Tuple):
            value_nodes = [e.value for e in node.value.elements]
            values = [self.expr(e) for e in value_nodes]
        elif isinstance(node.value, cst.Call) and self.returns_tuple(node.value):
            values = self.call(node.value, allow_tuple=True)
            value_nodes = [node.value] * len(values)
        else:
            values, value_nodes = [self.expr(node.value)], [node.value]
        gives_tuple = isinstance(node.value, cst.Tuple) or \
            isinstance(node.value, cst.Call) and self.returns_tuple(node.value)
        if len(values) == len(want) == 1 and gives_tuple != self.sig.returns_tuple:
            assert node.value is not None
            notes = [Note(self.sig.loc, "annotated here")]
            if self.sig.returns_tuple:
                raise self.error(node.value, f"'{self.sig.name}' returns a tuple by its annotation, "
                                             "this return gives one value (write a trailing comma "
                                             "for a tuple of one value, or change the annotation)",
                                 notes)
            raise self.error(node.value, f"'{self.sig.name}' returns one value by its annotation, "
                                         "this return gives a tuple (return the value itself, or "
                                         "change the annotation)", notes)
        if len(values) != len(want):
            raise self.error(node, f"'{self.sig.name}' returns {len(want)} value(s) by its "
                                   f"annotation, this return gives {len(values)} (return "
                                   "what the annotation says, or change the annotation)",
                             [Note(self.sig.loc, "annotated here")])
        values = [self.convert(n, v, t, "return value") if v.type != t else v  # type: ignore[arg-type]
                  for v, t, n in zip(values, want, value_nodes, strict=True)]
        self.at(node).insert(Return(values, [], self.builder.loc))

    # -- if ------------------------------------------------------------------------------
    def never_runs(self, skipped: cst.CSTNode, node: cst.If | cst.While, where: str) -> None:
        """Code that a test known when compiling skips is not lowered: a name it alone
        assigns is undefined after it, and a use says why."""
        for name in assigned_names(skipped):
            if name not in self.env:
                self.undefined_why[name] = (self.loc_of(node), f"it is assigned only in {where} "
                                                               "(its test is known when compiling)")

    def suite(self, suite: cst.BaseSuite | cst.If | cst.Else | None) -> None:
        """A branch of an ``if``: its block, an ``elif`` (an ``if`` of its own), or nothing."""
        if isinstance(suite, cst.If):
            self.if_statement(suite)
        elif isinstance(suite, cst.Else):
            self.block(suite.body)
        elif suite is not None:
            self.block(suite)

    def if_statement(self, node: cst.If) -> None:
        cond = self.to_bool(node.test, self.expr(node.test))
        taken = self.static_test(cond)
        if taken is not None:
            # a constant test (of module constants, say): the branch it skips never runs
            # and is not lowered, as code after a return is not (CPython does not evaluate
            # it: `if SCALE != 0.0: y = x / SCALE` with SCALE = 0.0 is no division by zero)
            self.suite(node.body if taken else node.orelse)
            skipped = node.orelse if taken else node.body
            if skipped is not None:
                self.never_runs(skipped, node, "the branch of this if that never runs")
            return
        b = self.at(node)
        op = If([cond], [], b.loc, regions=[Region(), Region()])
        b.insert(op)
        outer = self.builder.region
        before = dict(self.env)
        assigned = assigned_names(node.body) | (assigned_names(node.orelse) if node.orelse else set())

        ends: list[dict[str, Value] | None] = []
        for region, suite in ((op.regions[0], node.body), (op.regions[1], node.orelse)):
            self.env = dict(before)
            self.builder.region = region
            self.suite(suite)
            ends.append(dict(self.env) if falls_through(region) else None)
        self.builder.region = outer
        live = [e for e in ends if e is not None]
        merged: list[str] = []
        for name in sorted(assigned, key=_order_key(node)):
            if live and all(name in e for e in live):
                if name in before and all(e[name] is before[name] for e in live):
                    continue
                merged.append(name)
        results = [Value(live[0][n].type, n) for n in merged] if live else []
        for r in results:
            if isinstance(r.type, ArrayType):  # bound in one branch (a second binding is an error)
                raise self.error(node, f"array variable '{r.name}' is bound in a branch of this if "
                                       "(bind the array once, before the if)",
                                 [Note(self.bindings[str(r.name)].loc, "bound here")])
        op.results = results
        for r in results:
            r.owner = op
        for region, end in zip(op.regions, ends, strict=True):
            if end is not None:
                region.ops.append(Yield([end[n] for n in merged], [], self.loc_of(node)))
        self.env = dict(before)
        for n, r in zip(merged, results, strict=True):
            self.env[n] = r
        for name in assigned:
            if name not in self.env:
                self.undefined_why[name] = (self.loc_of(node),
                                            "it is assigned in only some branches of this if")

    # -- loops -------------------------------------------------------------------------------
    def carried_names(self, body: cst.CSTNode, exclude: str | None = None) -> list[str]:
        return [n for n in assigned_names_ordered(body)
                if n in self.env and n != exclude and not isinstance(self.env[n].type, ArrayType)]

    def for_statement(self, node: cst.For) -> None:
        if not isinstance(node.target, cst.Name):
            raise self.error(node.target, "the loop variable must be a single name "
                                          "(write for i in range(...))")
        it = node.iter
        if not (isinstance(it, cst.Call) and isinstance(it.func, cst.Name)
                and it.func.value in ("range", "prange")):
            if isinstance(it, cst.Call) and isinstance(it.func, cst.Attribute) and \
                    it.func.attr.value == "prange":
                self.not_through_adgen(it.func)  # adgen.prange(n)
            raise self.error(it, "this loop is not supported (write for i in range(...); for an "
                                 "array, for i in range(len(a)))")
        self.not_a_local(it.func, "a function")
        parallel = it.func.value == "prange"
        if any(a.keyword is not None for a in it.args) or not 1 <= len(it.args) <= 3:
            raise self.error(it, "range takes 1 to 3 positional integer arguments (write "
                                 "range(stop), range(start, stop) or range(start, stop, step))")
        bounds = [self.int_value(a.value, self.expr(a.value), "range argument") for a in it.args]
        b = self.at(node)
        if len(bounds) == 1:
            start, stop, step = b.const(0, I64), bounds[0], b.const(1, I64)
        elif len(bounds) == 2:
            start, stop, step = bounds[0], bounds[1], b.const(1, I64)
        else:
            start, stop, step = bounds
            if self.const_value(step) == 0:
                raise self.error(it.args[2], "range step must not be zero (use a positive or a "
                                             "negative step)")
        var = node.target.value
        self.check_assignable(node.target, var)
        if var in self.env or var in self.bindings and self.bindings[var].type != I64:
            prev = self.bindings[var]
            raise self.error(node.target, f"loop variable '{var}' reuses a variable defined before "
                                          "the loop (use a new name)",
                             [Note(prev.loc, f"'{var}' bound here")])
        carried = self.carried_names(node.body, exclude=var)
        if parallel:
            for n in carried:
                self.check_sum(node, n)
        iv = Value(I64, var)
        args = [Value(self.env[n].type, n) for n in carried]
        body = Region([iv, *args])
        op = For([start, stop, step, *[self.env[n] for n in carried]],
                 [Value(a.type, a.name) for a in args], b.loc, regions=[body],
                 directive=loop_directive(node), parallel=parallel)
        b.insert(op)
        self.bindings.setdefault(var, Binding(I64, self.loc_of(node.target)))
        self.loop_body(node, op, body, carried, {var: iv, **dict(zip(carried, args, strict=True))})
        if parallel:
            self.check_parallel_stores(op)
        self.undefined_why[var] = (self.loc_of(node.target),
                                   "a loop variable is not available after its loop")
        self.env.pop(var, None)

    def check_sum(self, loop: cst.For, name: str) -> None:
        """A variable defined before a prange and assigned in it must be a sum: only
        ``name += e`` or ``name -= e``, and read nowhere else in the loop."""
        prev = self.bindings.get(name)
        notes = [Note(prev.loc, f"'{name}' bound here")] if prev is not None else []
        fix = (f"iterations of a prange are independent: add to a sum with {name} += ..., or "
               "give the iteration's value a new name")
        sums: set[cst.Name] = set()

        class V(cst.CSTVisitor):
            def __init__(self) -> None:
                self.bad: tuple[cst.CSTNode, str] | None = None

            def flag(self, n: cst.CSTNode, what: str) -> None:
                if self.bad is None:
                    self.bad = (n, what)

            def visit_AugAssign(self, n: cst.AugAssign) -> None:
                if isinstance(n.target, cst.Name) and n.target.value == name:
                    if isinstance(n.operator, (cst.AddAssign, cst.SubtractAssign)):
                        sums.add(n.target)
                    else:
                        self.flag(n, f"'{name}' is updated in this prange loop by an operation "
                                     "other than += or -=")

            def visit_Assign(self, n: cst.Assign) -> None:
                for t in n.targets:
                    for e in (t.target.elements if isinstance(t.target, cst.Tuple) else [t.target]):
                        target = e.value if isinstance(e, cst.Element) else e
                        if isinstance(target, cst.Name) and target.value == name:
                            self.flag(n, f"'{name}' is defined before this prange loop and "
                                         "assigned in it")

            def visit_AnnAssign(self, n: cst.AnnAssign) -> None:
                if isinstance(n.target, cst.Name) and n.target.value == name:
                    self.flag(n, f"'{name}' is defined before this prange loop and assigned in it")

            def visit_Attribute(self, n: cst.Attribute) -> bool:
                n.value.visit(self)  # math.exp names no variable exp
                return False

            def visit_Name(self, n: cst.Name) -> None:
                if n.value == name and n not in sums:
                    self.flag(n, f"'{name}' is read in the prange loop that sums it")

        v = V()
        loop.body.visit(v)
        if v.bad is not None:
            where, what = v.bad
            raise self.error(where, f"{what} ({fix})", notes)

    def check_parallel_stores(self, op: For) -> None:
        """Each store in a prange body must be at an index that depends on the loop variable:
        otherwise every iteration writes the same element."""
        varies = index_dependent(op)
        for o in op.walk():
            if isinstance(o, Store) and not any(i in varies for i in o.operands[1:-1]):
                raise AdgenError(o.loc, f"every iteration of this prange writes the same "
                                        f"element of '{o.operands[0].name}' (index it by the "
                                        "loop variable, or use range)")

    def while_statement(self, node: cst.While) -> None:
        carried = self.carried_names(node.body)
        b = self.at(node)
        cond_args = [Value(self.env[n].type, n) for n in carried]
        cond_region = Region(cond_args)
        body_args = [Value(self.env[n].type, n) for n in carried]
        body = Region(body_args)
        op = While([self.env[n] for n in carried], [Value(a.type, a.name) for a in cond_args],
                   b.loc, regions=[cond_region, body], directive=loop_directive(node))
        b.insert(op)
        outer_region, before = self.builder.region, dict(self.env)
        self.builder.region = cond_region
        self.env.update(dict(zip(carried, cond_args, strict=True)))
        cond = self.to_bool(node.test, self.expr(node.test))
        known = self.static_test(cond)
        if known is not None:  # (of constants only: the ops of the test are pure)
            cond_region.ops.clear()
        if known is False:  # ``while DEBUG:``: the body never runs, and is not lowered
            self.builder.region = outer_region
            self.env = before
            outer_region.ops.remove(op)
            self.never_runs(node.body, node, "this loop, which never runs")
            return
        if known:
            # ``while 1:``, a module constant that is true, a local the loop does not change:
            # ``while True:``, which ``endless`` recognises
            cond = self.at(node.test).const(True, BOOL)
        cond_region.ops.append(Condition([cond], [], self.loc_of(node.test)))
        self.builder.region = outer_region
        self.env = before
        self.loop_body(node, op, body, carried, dict(zip(carried, body_args, strict=True)))
        if endless(op) and not any(isinstance(o, Return) for o in op.walk()):
            raise self.error(node, "this loop never ends: its condition is always true and "
                                   "no break or return leaves it (add a break or a return)")

    def loop_body(self, node: cst.For | cst.While, op: For | While, body: Region,
                  carried: list[str], entry: dict[str, Value]) -> None:
        outer_region, before = self.builder.region, dict(self.env)
        self.builder.region = body
        self.env.update(entry)
        self.loops.append(LoopContext(carried, isinstance(op, For) and op.parallel))
        self.block(node.body)
        self.loops.pop()
        if falls_through(body):
            body.ops.append(Yield([self.env[n] for n in carried], [], self.loc_of(node)))
        self.builder.region = outer_region
        inner = self.env
        self.env = before
        for n, r in zip(carried, op.results, strict=True):
            self.env[n] = r
        for name in inner:
            if name not in self.env:
                self.undefined_why[name] = (self.loc_of(node), "it is assigned only inside this loop "
                                            "(assign it before the loop to use it after)")

AUG_OPS: dict[type, str] = {
    cst.AddAssign: "add", cst.SubtractAssign: "sub", cst.MultiplyAssign: "mul",
    cst.DivideAssign: "div", cst.FloorDivideAssign: "floordiv", cst.ModuloAssign: "mod",
    cst.PowerAssign: "pow",
}


def assigned_names_ordered(node: cst.CSTNode | None, declared: bool = False) -> list[str]:
    """Names bound anywhere inside ``node``, in order of first appearance; with
    ``declared``, also those annotated without a value (``x: float``, which makes ``x``
    local to the function in Python)."""
    out: list[str] = []
    if node is None:
        return out

    def add(target: cst.BaseExpression) -> None:
        if isinstance(target, cst.Name):
            if target.value not in out:
                out.append(target.value)
        elif isinstance(target, cst.Tuple):
            for e in target.elements:
                add(e.value)

    class V(cst.CSTVisitor):
        def visit_Assign(self, n: cst.Assign) -> None:
            for t in n.targets:
                add(t.target)

        def visit_AugAssign(self, n: cst.AugAssign) -> None:
            add(n.target)

        def visit_AnnAssign(self, n: cst.AnnAssign) -> None:
            if n.value is not None or declared:
                add(n.target)

        def visit_For(self, n: cst.For) -> None:
            add(n.target)

    node.visit(V())
    return out


def assigned_names(node: cst.CSTNode | None, declared: bool = False) -> set[str]:
    return set(assigned_names_ordered(node, declared))


def _order_key(node: cst.If) -> Callable[[str], int]:
    order = assigned_names_ordered(node)
    return lambda n: order.index(n) if n in order else len(order)


__all__ = ["FunctionLowering", "assigned_names"]
