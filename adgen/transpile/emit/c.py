"""IR -> C statements, one small method per op.

Out of SSA: a value becomes a C expression inlined into its single user
when nothing with an effect lies between them, and a C variable otherwise.
Variables are named after the source variable the value came from and
reused by later values of the same name once the old value is dead, so the
code reads like the source (``s = s + ...`` in a loop, ``y = 2.0 * y`` in a
branch).  A loop's carried value, its block argument and its result share
one variable; terminators become parallel moves into those variables.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..ir.core import (
    Assert, Break, Call, Cast, Condition, Const, Continue, Dim, For, Function, If, Load, Module,
    Op, Prim, Region, Return, Store, Value, While, Yield, Zeros,
)
from ..ir.prims import PRIMS
from ..ir.types import ArrayType, ScalarType, Type, VecType, elem_of
from .names import reserved
from .signature import CSignature

# precedence of C operators (higher binds tighter)
PREC = {"?:": 3, "||": 4, "&&": 5, "==": 9, "!=": 9, "<": 10, "<=": 10, ">": 10, ">=": 10,
        "+": 12, "-": 12, "*": 13, "/": 13}
UNARY_PREC = 14
ATOM = 100
#: operators whose operands gcc wants parenthesised for clarity (-Wparentheses)
LOGICAL = {"&&", "||", "==", "!=", "<", "<=", ">", ">="}


@dataclass
class Var:
    """One C variable, shared by the values whose live ranges do not overlap."""

    name: str
    ctype: str
    vector: bool
    hint: str
    decl_region: Region | None
    end: int = -1
    declared: bool = False
    values: list[Value] = field(default_factory=list)


@dataclass
class EmitOptions:
    bounds_checks: bool = False
    source_name: str = "module.py"


@dataclass
class _Expr:
    text: str
    prec: int


@dataclass
class _Layout:
    pos: dict[int, int] = field(default_factory=dict)
    end: dict[int, int] = field(default_factory=dict)
    region_of: dict[int, Region] = field(default_factory=dict)
    parent_of: dict[int, Op] = field(default_factory=dict)
    loops_of: dict[int, list[Op]] = field(default_factory=dict)  # enclosing loops per op
    index: dict[int, int] = field(default_factory=dict)  # position of an op in its region


def c_float(value: float, t: ScalarType) -> str:
    if value != value:
        return "NAN"
    if value in (float("inf"), float("-inf")):
        return "INFINITY" if value > 0 else "-INFINITY"
    text = repr(float(value))
    if "e" not in text and "." not in text:
        text += ".0"
    return text + ("f" if t.name == "f32" else "")


def c_const(value: float | int | bool, t: Type) -> str:
    et = elem_of(t)
    if et.is_bool:
        return "true" if value else "false"
    if et.is_int:
        v = int(value)
        if v == -(2**63):
            return "INT64_MIN"
        if not -(2**31) <= v < 2**31:
            return f"INT64_C({v})"
        return str(v)
    return c_float(float(value), et)


class FunctionEmitter:
    def __init__(self, fn: Function, sig: CSignature, sigs: dict[str, CSignature],
                 module: Module, options: EmitOptions) -> None:
        self.fn = fn
        self.sig = sig
        self.sigs = sigs
        self.module = module
        self.options = options
        self.lines: list[str] = []
        self.layout = _Layout()
        self.uses: dict[int, list[Op]] = {}
        self.inlined: set[int] = set()
        self.var_of: dict[int, Var] = {}
        self.vars: list[Var] = []
        self.names: set[str] = set()
        self.shapes: dict[int, list[str]] = {}
        self.zeros: list[tuple[int, str]] = []  # (position, C name) of local arrays
        self.dir = "k"
        self.nbdirs: str | None = None
        self.last_line = 0
        self.region_parent: dict[int, Op] = {}
        self.last_use_cache: dict[int, int] = {}
        self.iv_names: set[str] = set()
        self.active_ivs: list[str] = []

    # -- analysis -------------------------------------------------------------------
    def number(self) -> None:
        counter = 0
        lay = self.layout

        def region(r: Region, parent: Op | None, loops: list[Op]) -> None:
            nonlocal counter
            for k, op in enumerate(r.ops):
                counter += 1
                lay.index[id(op)] = k
                lay.pos[id(op)] = counter
                lay.region_of[id(op)] = r
                lay.loops_of[id(op)] = loops
                if parent is not None:
                    lay.parent_of[id(op)] = parent
                for v in op.operands:
                    self.uses.setdefault(id(v), []).append(op)
                inner = loops + [op] if isinstance(op, (For, While)) else loops
                for sub in op.regions:
                    self.region_parent[id(sub)] = op
                    region(sub, op, inner)
                lay.end[id(op)] = counter

        region(self.fn.body, None, [])

    def def_pos(self, v: Value) -> int:
        owner = v.owner
        if isinstance(owner, Op):
            return self.layout.pos[id(owner)]
        parent = self._region_parent(owner)
        return self.layout.pos[id(parent)] if parent is not None else 0

    def _region_parent(self, region: object) -> Op | None:
        return self.region_parent.get(id(region))

    def def_loops(self, v: Value) -> list[Op]:
        owner = v.owner
        if isinstance(owner, Op):
            return self.layout.loops_of[id(owner)]
        parent = self._region_parent(owner)
        if parent is None:
            return []
        return self.layout.loops_of[id(parent)] + ([parent] if isinstance(parent, (For, While)) else [])

    def decide_inlining(self) -> None:
        def region(r: Region) -> None:
            for op in reversed(r.ops):
                for sub in op.regions:
                    region(sub)
                if isinstance(op, (Const, Dim)) or self.can_inline(op, r):
                    self.inlined.add(id(op.results[0]))

        region(self.fn.body)

    def can_inline(self, op: Op, r: Region) -> bool:
        """Whether ``op``'s value can be written inside the expression of its one user.

        Pure arithmetic can move past other statements: the variables it reads stay
        allocated to their values until its user (``last_use`` counts the user's
        statement).  A load cannot move past anything that may write memory.
        """
        if not isinstance(op, (Prim, Cast, Load)):
            return False
        v = op.results[0]
        users = self.uses.get(id(v), [])
        if len(users) != 1 or users[0].operands.count(v) != 1:
            return False
        user = users[0]
        if self.layout.region_of.get(id(user)) is not r:
            return False
        if isinstance(user, (While, Zeros)):
            return False
        if isinstance(user, For):
            return v in user.operands[:3] and _cheap_bound(v)
        if isinstance(user, Call) and isinstance(v.type, VecType):
            return False
        if not isinstance(v.type, VecType) and isinstance(op, (Prim, Cast)) and \
                _is_vector_statement(user):
            return False
        if isinstance(op, Load):
            ops = r.ops
            first, last = self.layout.index[id(op)], self.layout.index[id(user)]
            for mid in ops[first + 1:last]:
                if _may_write(mid, op.operands[0]):
                    return False
        return True

    def last_use(self, v: Value) -> int:
        """Position after which ``v`` is dead (uses in later iterations of a loop count)."""
        cached = self.last_use_cache.get(id(v))
        if cached is None:
            cached = self.last_use_cache[id(v)] = self._last_use(v)
        return cached

    def _last_use(self, v: Value) -> int:
        end = self.def_pos(v)
        def_loops = self.def_loops(v)
        for user in self.uses.get(id(v), []):
            if isinstance(user, Zeros):
                return 1 << 30  # extents of a local array are read by every index
            p = self.statement_pos(user)
            stmt = self.statement_of(user)
            if isinstance(stmt, For) and self.in_bounds(user, v, stmt):
                p = self.layout.end[id(stmt)]  # bounds are re-read at every iteration
            for loop in self.layout.loops_of[id(stmt)]:
                if not any(loop is d for d in def_loops):
                    p = max(p, self.layout.end[id(loop)])
                    break
            end = max(end, p)
        return end

    def statement_of(self, op: Op) -> Op:
        """The op whose statement contains ``op`` (itself unless ``op`` is inlined)."""
        while op.results and id(op.results[0]) in self.inlined:
            users = self.uses.get(id(op.results[0]), [])
            if not users:
                break
            op = users[0]
        return op

    def in_bounds(self, user: Op, v: Value, loop: For) -> bool:
        """Whether ``v`` is read (maybe through inlined ops) by the bounds of ``loop``."""
        op, val = user, v
        while op is not loop:
            val = op.results[0]
            op = self.uses[id(val)][0]
        return any(o is val for o in loop.operands[:3])

    def statement_pos(self, op: Op) -> int:
        return self.layout.pos[id(self.statement_of(op))]

    # -- naming ------------------------------------------------------------------------
    def fresh_name(self, hint: str) -> str:
        base = hint if hint.isidentifier() else "tmp"
        if reserved(base, set(self.sigs)) or base in PRIMS:
            base = base + "_"
        name, k = base, 1
        while name in self.names or name in self.iv_names:
            name = f"{base}_{k}"
            k += 1
        self.names.add(name)
        return name

    def loop_index_name(self, hint: str) -> str:
        """Loop indices are scoped to their loop: siblings may share a name."""
        name, k = hint, 1
        while name in self.names or name in self.active_ivs or reserved(name, set(self.sigs)):
            name = f"{hint}_{k}"
            k += 1
        self.iv_names.add(name)
        return name

    def hint(self, v: Value) -> str:
        if v.name:
            return v.name
        op = v.owner
        if isinstance(op, Load):
            arr = op.operands[0]
            idx = op.operands[1:]
            if arr.name and all(i.name for i in idx):
                return "_".join([arr.name, *[i.name for i in idx]])  # type: ignore[list-item]
        return "tmp"

    def bind(self, v: Value, var: Var) -> None:
        self.var_of[id(v)] = var
        var.values.append(v)

    def ctype(self, t: Type) -> str:
        return elem_of(t).c_name

    def allocate(self) -> None:
        # parameters and their shapes
        for p in self.sig.params:
            self.names.add(p.name)
        cname = {p.source[1]: p.name for p in self.sig.params if p.source[0] == "value"}
        shape_names: dict[int, list[str]] = {}
        for p in self.sig.params:
            if p.source[0] == "shape":
                shape_names.setdefault(p.source[1], []).append(p.name)
        index = {n: i for i, n in enumerate(self.fn.param_names)}
        for i, v in enumerate(self.fn.params):
            name = cname[i]
            var = Var(name, self.ctype(v.type), isinstance(v.type, VecType), name, self.fn.body,
                      end=self.last_use(v) if not isinstance(v.type, (ArrayType, VecType)) else 1 << 30,
                      declared=True)
            self.bind(v, var)
            self.vars.append(var)
            if isinstance(v.type, ArrayType):
                primal = index[self.fn.tangent_of.get(self.fn.param_names[i], self.fn.param_names[i])]
                self.shapes[id(v)] = shape_names[primal]
            if self.fn.param_names[i] == self.fn.nbdirs:
                self.nbdirs = name
        hints = {v.name for op in self.fn.walk() for v in op.results if v.name}
        for cand in ("k", "kd", "dir", "dir_"):
            if cand not in hints and cand not in self.names:
                self.dir = cand
                break
        self.names.add(self.dir)
        # everything else, in program order
        self.allocate_region(self.fn.body)

    def allocate_region(self, r: Region) -> None:
        for op in r.ops:
            if isinstance(op, (For, While)):
                self.allocate_loop(op, r)
            elif isinstance(op, If):
                pos = self.layout.pos[id(op)]
                for res in op.results:
                    prefer = self.if_preference(op, res) or \
                        self.yield_target(res, r, pos, False, start=self.layout.end[id(op)])
                    self.assign_var(res, r, pos, prefer=prefer)
            elif isinstance(op, Zeros):
                v = op.results[0]
                name = self.fresh_name(self.hint(v))
                var = Var(name, self.ctype(v.type), False, name, r, end=1 << 30)
                self.bind(v, var)
                self.vars.append(var)
                self.zeros.append((self.layout.pos[id(op)], name))
                self.shapes[id(v)] = [self.expr(e).text for e in op.operands]
            else:
                strict = isinstance(op, Call)
                for res in op.results:
                    if id(res) not in self.inlined:
                        pos = self.layout.pos[id(op)]
                        self.assign_var(res, r, pos, strict=strict,
                                        prefer=self.yield_target(res, r, pos, strict))
            for sub in op.regions:
                if isinstance(op, For):
                    iv = sub.args[0]
                    name = self.loop_index_name(iv.name or "i")
                    var = Var(name, "int64_t", False, "", sub, end=1 << 30, declared=True)
                    self.bind(iv, var)
                    self.active_ivs.append(name)
                    self.allocate_region(sub)
                    self.active_ivs.pop()
                else:
                    self.allocate_region(sub)

    def if_preference(self, op: If, res: Value) -> Var | None:
        j = op.results.index(res)
        pos = self.layout.pos[id(op)]
        for region in op.regions:
            t = region.terminator
            if isinstance(t, Yield):
                src = t.operands[j]
                var = self.var_of.get(id(src))
                if var is not None and self.def_pos(src) < pos and not var.vector and \
                        self.last_use(src) <= self.layout.end[id(op)] and \
                        var.hint == (res.name or "tmp") and var.end <= self.layout.end[id(op)] \
                        and self._in_scope(var, op):
                    return var
        return None

    def yield_target(self, v: Value, r: Region, pos: int, strict: bool,
                     start: int | None = None) -> Var | None:
        """The variable of the if/loop slot ``v`` is yielded to, when ``v`` can live there.

        ``r = r * x`` in a loop body writes the carried variable directly instead of a
        temporary copied at the end of the iteration.
        """
        t = r.terminator
        parent = self.region_parent.get(id(r))
        if not isinstance(t, Yield) or parent is None:
            return None
        slots = [j for j, o in enumerate(t.operands) if o is v]
        if len(slots) != 1:
            return None
        j = slots[0]

        # the position from which v occupies the variable (an if's results are written
        # at the end of its branches)
        start = pos if start is None else start

        def dead(u: Value) -> bool:
            last = self.last_use(u)
            return last < start or (last == start and not strict)

        if isinstance(parent, If):
            target = parent.results[j]
            var = self.var_of.get(id(target))
            if var is None or not all(dead(u) for u in var.values if u is not target):
                return None
        elif isinstance(parent, (For, While)) and r is parent.regions[-1]:
            arg = parent.body.args[j + 1] if isinstance(parent, For) else r.args[j]
            var = self.var_of.get(id(arg))
            if var is None or not dead(arg):
                return None
            for op in parent.walk():
                if isinstance(op, (Yield, Break, Continue)) and op is not t and \
                        self.layout.pos[id(op)] > pos and self._targets(op, parent) and \
                        op.operands[j] is not v:
                    return None
        else:
            return None
        if var.ctype != self.ctype(v.type) or var.vector != isinstance(v.type, VecType):
            return None
        return var

    def _targets(self, term: Op, loop: Op) -> bool:
        if isinstance(term, Yield):
            return self.region_parent.get(id(self.layout.region_of[id(term)])) is loop
        loops = self.layout.loops_of[id(term)]
        return bool(loops) and loops[-1] is loop

    def _in_scope(self, var: Var, op: Op) -> bool:
        r: Region | None = self.layout.region_of[id(op)]
        while r is not None:
            if r is var.decl_region:
                return True
            parent = self._region_parent(r)
            r = self.layout.region_of.get(id(parent)) if parent is not None else None
        return False

    def allocate_loop(self, op: For | While, r: Region) -> None:
        pos = self.layout.pos[id(op)]
        end = self.layout.end[id(op)]
        if isinstance(op, For):
            members = [[op.results[j], op.body.args[j + 1]] for j in range(len(op.results))]
        else:
            members = [[op.results[j], op.regions[0].args[j], op.regions[1].args[j]]
                       for j in range(len(op.results))]
        for j, group in enumerate(members):
            init = op.inits[j]
            res = op.results[j]
            last = max(end, self.last_use(res))
            var: Var | None = None
            init_var = self.var_of.get(id(init))
            if init_var is not None and id(init) not in self.inlined and init_var.end <= pos and \
                    self.last_use(init) <= pos and init_var.ctype == self.ctype(res.type) and \
                    init_var.vector == isinstance(res.type, VecType) and \
                    (init_var.hint == (res.name or "tmp")) and self._in_scope(init_var, op):
                var = init_var
            if var is None:
                var = self.reuse(res, r, pos)
            if var is None:
                name = self.fresh_name(self.hint(res))
                var = Var(name, self.ctype(res.type), isinstance(res.type, VecType),
                          res.name or "tmp", r)
                self.vars.append(var)
            var.end = last
            for m in group:
                self.bind(m, var)

    def reuse(self, v: Value, r: Region, pos: int, strict: bool = False) -> Var | None:
        hint = v.name or "tmp"
        if hint == "tmp":
            return None
        for var in self.vars:
            if var.hint != hint or var.ctype != self.ctype(v.type) or \
                    var.vector != isinstance(v.type, VecType):
                continue
            free = var.end < pos or (var.end == pos and not strict)
            if free and self._region_in_scope(var, r):
                return var
        return None

    def _region_in_scope(self, var: Var, r: Region) -> bool:
        cur: Region | None = r
        while cur is not None:
            if cur is var.decl_region:
                return True
            parent = self._region_parent(cur)
            cur = self.layout.region_of.get(id(parent)) if parent is not None else None
        return False

    def assign_var(self, v: Value, r: Region, pos: int, prefer: Var | None = None,
                   strict: bool = False) -> None:
        last = self.last_use(v)
        var = prefer or self.reuse(v, r, pos, strict)
        if var is None:
            name = self.fresh_name(self.hint(v))
            var = Var(name, self.ctype(v.type), isinstance(v.type, VecType), v.name or "tmp", r)
            self.vars.append(var)
        var.end = max(var.end, last)
        self.bind(v, var)

    # -- expressions ---------------------------------------------------------------------
    def expr(self, v: Value, rename: dict[str, str] | None = None, vec: bool = False) -> _Expr:
        """C expression of ``v``; ``vec``: inside a loop over directions (``[k]``)."""
        var = self.var_of.get(id(v))
        if var is not None and id(v) not in self.inlined:
            name = (rename or {}).get(var.name, var.name)
            if isinstance(v.type, VecType):
                return _Expr(f"{name}[{self.dir}]", ATOM)
            return _Expr(name, ATOM)
        op = v.owner
        assert isinstance(op, Op), v
        return self.op_expr(op, rename, vec)

    def op_expr(self, op: Op, rename: dict[str, str] | None = None, vec: bool = False) -> _Expr:
        """C expression computing the (single) result of ``op``."""
        v = op.results[0]
        if isinstance(op, Const):
            text = c_const(op.value, v.type)
            return _Expr(text, UNARY_PREC if text.startswith("-") else ATOM)
        if isinstance(op, Dim):
            return _Expr(self.shapes[id(op.operands[0])][op.axis], ATOM)
        if isinstance(op, Cast):
            inner = self.expr(op.operands[0], rename, vec)
            return _Expr(f"({self.ctype(v.type)})" + self.paren(inner, UNARY_PREC), UNARY_PREC)
        if isinstance(op, Load):
            return _Expr(self.element(op.operands[0], op.operands[1:], rename, op.loc.line), ATOM)
        if isinstance(op, Prim):
            return self.prim_expr(op, rename, vec)
        raise AssertionError(f"no expression for {op}")

    def paren(self, e: _Expr, need: int) -> str:
        return e.text if e.prec >= need else f"({e.text})"

    def prim_expr(self, op: Prim, rename: dict[str, str] | None, vec: bool) -> _Expr:
        p = PRIMS[op.prim]
        args = [self.expr(a, rename, vec) for a in op.operands]
        elem = elem_of(op.operands[-1].type)
        if p.c_op == "?:":
            c, a, b = args
            return _Expr(f"{self.paren(c, 4)} ? {self.paren(a, 4)} : {self.paren(b, 3)}", 3)
        if p.c_op is not None and p.arity == 1:
            inner = self.paren(args[0], UNARY_PREC)
            if inner.startswith(p.c_op):  # -(-x), not the decrement --x
                inner = f"({inner})"
            return _Expr(f"{p.c_op}{inner}", UNARY_PREC)
        if p.c_op is not None:
            prec = PREC[p.c_op]
            left_need, right_need = prec, prec + 1
            if p.c_op in LOGICAL:
                left_need = right_need = prec + 1 if p.c_op not in ("&&", "||") else 11
            lt = self.paren(args[0], left_need)
            rt = self.paren(args[1], right_need)
            return _Expr(f"{lt} {p.c_op} {rt}", prec)
        assert p.c_func is not None
        fname = p.c_func[elem.name]
        return _Expr(f"{fname}({', '.join(a.text for a in args)})", ATOM)

    def element(self, array: Value, indices: list[Value], rename: dict[str, str] | None = None,
                line: int = 0) -> str:
        at = array.type
        assert isinstance(at, ArrayType)
        shape = self.shapes[id(array)]
        idx = [self.expr(i, rename) for i in indices]
        if self.options.bounds_checks:
            where = f"{self.options.source_name}:{line}"
            idx = [_Expr(f"ADGEN_INDEX({e.text}, {shape[k]}, \"{where}\")", ATOM)
                   for k, e in enumerate(idx)]
        lin = idx[0]
        for k in range(1, len(idx)):
            lin = _Expr(f"{self.paren(lin, 13)} * {shape[k]} + {self.paren(idx[k], 12)}", 12)
        if at.vector:
            lin = _Expr(f"{self.paren(lin, 13)} * {self.nbdirs} + {self.dir}", 12)
        name = self.expr(array, rename).text
        return f"{name}[{lin.text}]"

    def reads(self, v: Value) -> set[str]:
        var = self.var_of.get(id(v))
        if var is not None and id(v) not in self.inlined:
            return {var.name}
        op = v.owner
        out: set[str] = set()
        if isinstance(op, Op) and not isinstance(op, (Const, Dim)):
            for o in op.operands:
                out |= self.reads(o)
        return out

    # -- statements ------------------------------------------------------------------------
    def emit(self, line: str, depth: int) -> None:
        self.lines.append("    " * depth + line)

    def comment_line(self, op: Op, depth: int) -> None:
        if op.loc.line and op.loc.line != self.last_line:
            self.last_line = op.loc.line
            src = ""
            lines = self.module.source_lines
            if 1 <= op.loc.line <= len(lines):
                src = " " + lines[op.loc.line - 1].strip().replace("*/", "* /")
            self.emit(f"/* {self.options.source_name}:{op.loc.line}:{src} */", depth)

    def run(self) -> str:
        self.number()
        self.decide_inlining()
        self.allocate()
        self.region(self.fn.body, 1, top=True)
        while self.lines and self.lines[-1].strip() == "return;":
            self.lines.pop()
        body = "\n".join(self.lines)
        unused = [p.name for p in self.sig.params
                  if not re.search(rf"\b{re.escape(p.name)}\b", body)]
        self.lines[0:0] = [f"    (void){name};" for name in unused]
        if self.nbdirs is not None and self.nbdirs not in unused:
            self.lines.insert(0, f"    ADGEN_ASSUME({self.nbdirs} > 0);")
        return "\n".join([self.sig.prototype() + "\n{", *self.lines, "}"])

    def region(self, r: Region, depth: int, top: bool = False) -> None:
        for op in r.ops:
            if op.results and all(id(v) in self.inlined for v in op.results) and \
                    not isinstance(op, (If, For, While, Call)):
                continue
            if not isinstance(op, (Yield, Condition)):
                self.comment_line(op, depth)
            getattr(self, "op_" + type(op).__name__)(op, depth)

    def declare_or_assign(self, v: Value, rhs: _Expr | None, depth: int, vec_rhs: str | None = None) -> None:
        var = self.var_of[id(v)]
        if var.vector:
            if not var.declared:
                self.emit(f"{var.ctype} {var.name}[{self.nbdirs}];", depth)
                var.declared = True
            if vec_rhs is not None:
                self.emit(self.dir_loop(f"{var.name}[{self.dir}] = {vec_rhs};"), depth)
            return
        if rhs is None:
            if not var.declared:
                self.emit(f"{var.ctype} {var.name};", depth)
                var.declared = True
            return
        if var.declared:
            self.emit(f"{var.name} = {rhs.text};", depth)
        else:
            self.emit(f"{var.ctype} {var.name} = {rhs.text};", depth)
            var.declared = True

    def dir_loop(self, stmt: str) -> str:
        return f"for (int64_t {self.dir} = 0; {self.dir} < {self.nbdirs}; ++{self.dir}) {stmt}"

    def op_value(self, op: Op, depth: int) -> None:
        v = op.results[0]
        if isinstance(v.type, VecType):
            self.declare_or_assign(v, None, depth, vec_rhs=self.op_expr(op, vec=True).text)
        else:
            self.declare_or_assign(v, self.op_expr(op), depth)

    op_Prim = op_value
    op_Cast = op_value
    op_Load = op_value

    def op_Const(self, op: Const, depth: int) -> None:
        pass

    def op_Dim(self, op: Dim, depth: int) -> None:
        pass

    def op_Store(self, op: Store, depth: int) -> None:
        array, value = op.operands[0], op.operands[-1]
        target = self.element(array, op.operands[1:-1], line=op.loc.line)
        if isinstance(value.type, VecType):
            self.emit(self.dir_loop(f"{target} = {self.expr(value, vec=True).text};"), depth)
        else:
            self.emit(f"{target} = {self.expr(value).text};", depth)

    def op_Zeros(self, op: Zeros, depth: int) -> None:
        v = op.results[0]
        var = self.var_of[id(v)]
        at = v.type
        assert isinstance(at, ArrayType)
        count = " * ".join(self.paren(_Expr(s, ATOM if s.isidentifier() or s.isdigit() else 12), 13)
                           for s in self.shapes[id(v)])
        if at.vector:
            count += f" * {self.nbdirs}"
        self.emit(f"{var.ctype} *{var.name} = adgen_calloc((size_t)({count}), sizeof({var.ctype}));",
                  depth)
        var.declared = True

    def op_Assert(self, op: Assert, depth: int) -> None:
        msg = op.message.replace("\\", "\\\\").replace('"', '\\"')
        where = f"{self.options.source_name}:{op.loc.line}"
        text = f"{where}: assertion failed" + (f": {msg}" if msg else "")
        self.emit(f"ADGEN_ASSERT({self.expr(op.operands[0]).text}, \"{text}\");", depth)

    def op_Call(self, op: Call, depth: int) -> None:
        sig = self.sigs[op.callee]
        args: list[str] = []
        outs: dict[int, Value] = {}
        for p in sig.params:
            kind = p.source[0]
            if kind == "value":
                a = op.operands[p.source[1]]
                if isinstance(a.type, VecType):
                    args.append(self.var_of[id(a)].name if id(a) in self.var_of and id(a) not in
                                self.inlined else self.materialize_vec(a, depth))
                else:
                    args.append(self.expr(a).text)
            elif kind == "shape":
                a = op.operands[p.source[1]]
                args.append(self.shapes[id(a)][p.source[2]])  # type: ignore[misc]
            else:
                r = op.results[p.source[1]]
                outs[p.source[1]] = r
                self.declare_or_assign(r, None, depth)
                var = self.var_of[id(r)]
                args.append(var.name if var.vector else "&" + var.name)
        call = f"{op.callee}({', '.join(args)})"
        if sig.c_return is not None:
            r = op.results[sig.c_return]
            if self.uses.get(id(r)):
                self.declare_or_assign(r, _Expr(call, ATOM), depth)
                return
        self.emit(call + ";", depth)

    def materialize_vec(self, v: Value, depth: int) -> str:
        name = self.fresh_name("tmpd")
        self.emit(f"{self.ctype(v.type)} {name}[{self.nbdirs}];", depth)
        self.emit(self.dir_loop(f"{name}[{self.dir}] = {self.expr(v, vec=True).text};"), depth)
        return name

    # -- moves (terminators) ------------------------------------------------------------------
    def moves(self, dests: list[Value], srcs: list[Value], depth: int) -> None:
        pending: list[tuple[Var, Value]] = []
        for d, s in zip(dests, srcs, strict=True):
            dv = self.var_of[id(d)]
            sv = self.var_of.get(id(s))
            if sv is dv and id(s) not in self.inlined:
                continue
            pending.append((dv, s))
        rename: dict[str, str] = {}

        def reads(s: Value) -> set[str]:
            return {rename.get(n, n) for n in self.reads(s)}

        while pending:
            for k, (dv, s) in enumerate(pending):
                if not any(dv.name in reads(s2) for j, (_, s2) in enumerate(pending) if j != k):
                    self.emit_move(dv, s, rename, depth)
                    pending.pop(k)
                    break
            else:
                # a cycle (a, b = b, a): save one destination, then its readers use the copy
                dv, s = pending.pop(0)
                tmp = self.fresh_name(dv.name + "_old")
                if dv.vector:
                    self.emit(f"{dv.ctype} {tmp}[{self.nbdirs}];", depth)
                    self.emit(self.dir_loop(f"{tmp}[{self.dir}] = {dv.name}[{self.dir}];"), depth)
                else:
                    self.emit(f"{dv.ctype} {tmp} = {dv.name};", depth)
                self.emit_move(dv, s, rename, depth)
                rename[dv.name] = tmp

    def emit_move(self, dv: Var, s: Value, rename: dict[str, str], depth: int) -> None:
        ren = rename
        if dv.vector:
            self.emit(self.dir_loop(f"{dv.name}[{self.dir}] = {self.expr(s, ren, vec=True).text};"),
                      depth)
        else:
            self.emit(f"{dv.name} = {self.expr(s, ren).text};", depth)

    def declare_group(self, values: list[Value], depth: int) -> None:
        for v in values:
            var = self.var_of[id(v)]
            if not var.declared:
                if var.vector:
                    self.emit(f"{var.ctype} {var.name}[{self.nbdirs}];", depth)
                else:
                    self.emit(f"{var.ctype} {var.name};", depth)
                var.declared = True

    def init_loop(self, results: list[Value], inits: list[Value], depth: int) -> None:
        # declare with the initial value where the variable is new and no move conflicts
        simple = []
        for res, init in zip(results, inits, strict=True):
            var = self.var_of[id(res)]
            if not var.declared and not var.vector and not any(
                    var.name in self.reads(i) for i in inits):
                self.emit(f"{var.ctype} {var.name} = {self.expr(init).text};", depth)
                var.declared = True
            else:
                simple.append((res, init))
        self.declare_group([r for r, _ in simple], depth)
        self.moves([r for r, _ in simple], [i for _, i in simple], depth)

    def op_If(self, op: If, depth: int) -> None:
        self.declare_group(op.results, depth)
        cond = self.expr(op.operands[0]).text
        self.emit(f"if ({cond}) {{", depth)
        self.region(op.regions[0], depth + 1)
        else_lines = len(self.lines)
        self.emit("} else {", depth)
        self.region(op.regions[1], depth + 1)
        if len(self.lines) == else_lines + 1:
            self.lines.pop()
        self.emit("}", depth)

    def op_For(self, op: For, depth: int) -> None:
        self.init_loop(op.results, op.inits, depth)
        start, stop, step = op.operands[:3]
        iv = self.var_of[id(op.body.args[0])].name
        s = step.owner.value if isinstance(step.owner, Const) else None
        lo, hi = self.expr(start).text, self.expr(stop).text
        if s == 1:
            header = f"for (int64_t {iv} = {lo}; {iv} < {hi}; ++{iv})"
        elif s == -1:
            header = f"for (int64_t {iv} = {lo}; {iv} > {hi}; --{iv})"
        elif isinstance(s, int) and s > 0:
            header = f"for (int64_t {iv} = {lo}; {iv} < {hi}; {iv} += {s})"
        elif isinstance(s, int):
            header = f"for (int64_t {iv} = {lo}; {iv} > {hi}; {iv} -= {-s})"
        else:
            st = self.expr(step).text
            header = (f"for (int64_t {iv} = {lo}; {st} > 0 ? {iv} < {hi} : {iv} > {hi}; "
                      f"{iv} += {st})")
        self.emit(header + " {", depth)
        self.region(op.body, depth + 1)
        self.emit("}", depth)

    def op_While(self, op: While, depth: int) -> None:
        self.init_loop(op.results, op.inits, depth)
        cond_region = op.regions[0]
        stmts = [o for o in cond_region.ops[:-1]
                 if not (o.results and all(id(v) in self.inlined for v in o.results))]
        cond = cond_region.ops[-1].operands[0]
        if not stmts:
            self.emit(f"while ({self.expr(cond).text}) {{", depth)
        else:
            self.emit("while (1) {", depth)
            self.region(Region([], cond_region.ops[:-1]), depth + 1)
            self.emit(f"if (!{self.paren(self.expr(cond), UNARY_PREC)}) break;", depth + 1)
        self.region(op.regions[1], depth + 1)
        self.emit("}", depth)

    def parent(self, op: Op) -> Op | None:
        return self.layout.parent_of.get(id(op))

    def loop_of(self, op: Op) -> Op:
        loops = self.layout.loops_of[id(op)]
        return loops[-1]

    def op_Yield(self, op: Yield, depth: int) -> None:
        parent = self.parent(op)
        if isinstance(parent, If):
            self.moves(parent.results, op.operands, depth)
        elif isinstance(parent, For):
            self.moves(parent.body.args[1:], op.operands, depth)
        elif isinstance(parent, While):
            self.moves(parent.regions[1].args, op.operands, depth)

    def op_Break(self, op: Break, depth: int) -> None:
        loop = self.loop_of(op)
        self.moves(loop.results, op.operands, depth)
        self.emit("break;", depth)

    def op_Continue(self, op: Continue, depth: int) -> None:
        loop = self.loop_of(op)
        self.moves(loop.results, op.operands, depth)
        self.emit("continue;", depth)

    def op_Condition(self, op: Condition, depth: int) -> None:
        pass

    def op_Return(self, op: Return, depth: int) -> None:
        pos = self.layout.pos[id(op)]
        frees = [name for p, name in self.zeros if p < pos]
        ret_expr: str | None = None
        for p in self.sig.params:
            if p.source[0] == "result":
                v = op.operands[p.source[1]]
                if isinstance(v.type, VecType):
                    self.emit(self.dir_loop(f"{p.name}[{self.dir}] = {self.expr(v, vec=True).text};"),
                              depth)
                else:
                    self.emit(f"*{p.name} = {self.expr(v).text};", depth)
        if self.sig.c_return is not None:
            v = op.operands[self.sig.c_return]
            ret_expr = self.expr(v).text
            if frees and not isinstance(v.owner, Const):
                name = self.fresh_name("result")
                self.emit(f"{self.sig.return_ctype} {name} = {ret_expr};", depth)
                ret_expr = name
        for name in reversed(frees):
            self.emit(f"free({name});", depth)
        self.emit(f"return {ret_expr};" if ret_expr is not None else "return;", depth)


def _is_vector_statement(op: Op) -> bool:
    """A statement that loops over directions (scalars inside it are recomputed per direction)."""
    return (isinstance(op, (Prim, Cast, Load)) and isinstance(op.results[0].type, VecType)) or (
        isinstance(op, Store) and isinstance(op.operands[-1].type, VecType))


def _may_write(op: Op, array: Value) -> bool:
    """Whether ``op`` may write ``array``.  Distinct arrays never overlap (the binding
    rejects overlapping arguments when one is written, DESIGN.md section 1)."""
    for o in op.walk():
        if isinstance(o, Store) and o.operands[0] is array:
            return True
        if isinstance(o, Call) and any(a is array for a in o.operands):
            return True
    return False


def _cheap_bound(v: Value) -> bool:
    """Integer arithmetic on variables: fine to re-evaluate in a for header."""
    op = v.owner
    if isinstance(op, (Const, Dim)) or not isinstance(op, Op):
        return True
    if isinstance(op, Prim) and op.prim in ("add", "sub", "mul", "neg"):
        return all(_cheap_bound(o) for o in op.operands)
    if isinstance(op, Cast):
        return _cheap_bound(op.operands[0])
    return False


def emit_function(fn: Function, sigs: dict[str, CSignature], module: Module,
                  options: EmitOptions) -> str:
    return FunctionEmitter(fn, sigs[fn.name], sigs, module, options).run()
