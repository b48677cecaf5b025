"""IR -> C statements and expressions, one small method per op.

``variables.py`` decides what is inlined and which C variable holds each
value; this module writes the text: expressions with C precedence, one
statement per line with the source line as a comment, control flow as real
``if``/``for``/``while``, and the parallel moves that terminators become.
"""

from __future__ import annotations

import math
import re
import textwrap
from dataclasses import dataclass

from ..ir.core import (
    Assert, Break, Call, Cast, Condition, Const, Continue, Dim, For, Function, If, Load, Module,
    Op, Pop, Prim, Push, Region, Return, Store, Value, While, Yield, Zeros,
)
from ..ir.prims import PRIMS
from ..ir.types import ArrayType, ScalarType, Type, VecType, elem_of, single
from .signature import CSignature
from .variables import Var, Variables, constant_branch, filling, pushing
from ..frontend.diagnostics import AdgenError
from ..ir.walk import increment, index_dependent

#: modes whose functions may keep a tape (and so get a ``MODULE_b_tape_bytes()`` counter)
TAPE_MODES = ("reverse", "vector-reverse", "hvp", "vector-hvp")

def note_lines(op: For) -> list[str]:
    """The loop's note as a C comment of lines up to about 100 characters (an element such
    as ``z[i, 0]`` is never split over two lines)."""
    if not op.note:
        return []
    kept = re.sub(r"\[[^]]*\]", lambda m: m.group(0).replace(" ", "\0"), op.note)
    lines = [line.replace("\0", " ") for line in textwrap.wrap(kept, 92)]
    return [("/* " if k == 0 else "   ") + line + (" */" if k == len(lines) - 1 else "")
            for k, line in enumerate(lines)]


# precedence of C operators (higher binds tighter)
PREC = {"?:": 3, "||": 4, "&&": 5, "==": 9, "!=": 9, "<": 10, "<=": 10, ">": 10, ">=": 10,
        "+": 12, "-": 12, "*": 13, "/": 13}
UNARY_PREC = 14
ATOM = 100


def _atom(c: str) -> str:
    """``c`` in parentheses unless it is a name or a number."""
    return c if re.fullmatch(r"\w+", c) else f"({c})"


def _term(c: str) -> str:
    """``c`` as the left operand of ``+`` or ``-``: in parentheses when it holds an operator
    that binds less tightly (a conditional, a comparison)."""
    return c if re.fullmatch(r"[\w\s+\-*/%(),]+", c) else f"({c})"


def _plus_one(c: str) -> str:
    """The C expression ``c + 1``, folded when ``c`` is an integer literal or ends in ``- 1``
    (additive and multiplicative operators only, so that the ``- 1`` is outermost)."""
    if re.fullmatch(r"-?\d+", c):
        return str(int(c) + 1)
    if c.endswith(" - 1") and _term(c) == c:
        return c[:-len(" - 1")]
    return f"{_term(c)} + 1"


#: bytes a value of each type takes on the tape (sizeof in C)
_TAPE_BYTES = {"f64": 8, "f32": 4, "i64": 8, "i32": 4, "bool": 1}


def _tape_layout(ops: list[Op]) -> tuple[int, list[int]]:
    """The bytes that pushes (or pops) ``ops`` take, and the offset of each one's value in
    them, as pushes one by one lay them out (the first pop gets the last value pushed)."""
    sizes = [_TAPE_BYTES[elem_of(v.type).name] for o in ops for v in (*o.operands, *o.results)]
    if isinstance(ops[0], Push):
        return sum(sizes), [sum(sizes[:k]) for k in range(len(ops))]
    return sum(sizes), [sum(sizes[k + 1:]) for k in range(len(ops))]
#: operators whose operands gcc wants parenthesised for clarity (-Wparentheses)
LOGICAL = {"&&", "||", "==", "!=", "<", "<=", ">", ">="}


@dataclass
class EmitOptions:
    bounds_checks: bool = False
    source_name: str = "module.py"
    #: "c" or "cuda" (pranges become kernels; ``device``: the primal names of the functions
    #: that run on the device, see ``analysis/targets.py``)
    target: str = "c"
    device: frozenset[str] = frozenset()


@dataclass
class _Expr:
    text: str
    prec: int


def c_float(value: float, t: ScalarType) -> str:
    if value != value:
        return "NAN"
    if t.name == "f32" and value != 0.0:  # what the f32 literal is (lint warns of it)
        value32 = single(value)
        if value32 == 0.0:  # below the smallest subnormal ("truncated to zero")
            return "-0.0f" if value < 0 else "0.0f"
        value = value if math.isfinite(value32) else value32
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


class FunctionEmitter(Variables):
    """Writes the C text of one function, statement by statement."""

    # -- expressions ---------------------------------------------------------------------
    def expr(self, v: Value, rename: dict[str, str] | None = None, vec: bool = False) -> _Expr:
        """C expression of ``v``; ``vec``: inside a loop over directions (``[k]``)."""
        var = self.var_of.get(v)
        if var is not None and v not in self.inlined:
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
            return _Expr(self.shapes[op.operands[0]][op.axis], ATOM)
        if isinstance(op, Cast):
            inner = self.expr(op.operands[0], rename, vec)
            return _Expr(f"({self.ctype(v.type)})" + self.paren(inner, UNARY_PREC), UNARY_PREC)
        if isinstance(op, Load):
            return _Expr(self.element(op.operands[0], op.operands[1:], rename, op.loc.line), ATOM)
        if isinstance(op, Prim):
            return self.prim_expr(op, rename, vec)
        if isinstance(op, If):
            return self.logical_expr(op, rename)
        raise AssertionError(f"no expression for {op}")

    def logical_expr(self, op: If, rename: dict[str, str] | None) -> _Expr:
        """``a && b`` or ``a || b`` for an ``if`` that one branch ends with a constant
        (``Variables.is_logical``): ``if a: b else: False`` and ``if a: True else: b``."""
        cond = self.expr(op.operands[0], rename)
        then, other = (r.ops[-1].operands[0] for r in op.regions)
        const = then if constant_branch(op.regions[0]) else other
        value = other if const is then else then
        assert isinstance(const.owner, Const)
        # (operands of && and || in parentheses when they are themselves && or ||: -Wparentheses)
        rhs = self.paren(self.expr(value, rename), PREC["&&"] + 1)
        # if a: b else: False -> a && b;  if a: True else: b -> a || b;
        # if a: b else: True -> !a || b;  if a: False else: b -> !a && b
        logic = "||" if const.owner.value else "&&"
        left = self.paren(cond, PREC["&&"] + 1) if (const is other) != bool(const.owner.value) \
            else "!" + self.paren(cond, UNARY_PREC)
        return _Expr(f"{left} {logic} {rhs}", PREC[logic])

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
        shape = self.shapes[array]
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
        name = self.private_names.get(array) or self.expr(array, rename).text
        return f"{name}[{lin.text}]"

    def reads(self, v: Value) -> set[str]:
        var = self.var_of.get(v)
        if var is not None and v not in self.inlined:
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
        self.plan_parallel()
        self.allocate()
        self.region(self.fn.body, 1, top=True)
        # an adjoint that owns a tape frees it and records its size at each return (a
        # function of a nested derivative, in primal mode, frees it only)
        counted = self.fn.mode in TAPE_MODES
        own = "adgen_tape_free(&tape)" if self.uses_tape else "0"
        nested = counted and self.nested_tapes
        name = self.nested_name
        if nested and self.uses_tape:
            for at in self.nested_lines:
                self.lines[at] = self.lines[at].replace(
                    "adgen_tape_bytes_last)", "adgen_tape_size(&tape) + adgen_tape_bytes_last)")
        for at, depth in reversed(self.pending_tape_free):
            line = ("adgen_tape_free(&tape);" if not counted else
                    f"adgen_tape_bytes_last = adgen_size_max({own}, {name});"
                    if nested and self.uses_tape else
                    f"adgen_tape_bytes_last = {name};" if nested else
                    f"adgen_tape_bytes_last = {own};")
            if self.uses_tape or counted:
                self.lines.insert(at, "    " * depth + line)
        while self.lines and self.lines[-1].strip() == "return;":
            self.lines.pop()
        code = re.sub(r"/\*.*?\*/", "", "\n".join(self.lines), flags=re.S)  # not the comments
        unused = [p.name for p in self.sig.params
                  if not re.search(rf"\b{re.escape(p.name)}\b", code)]
        self.lines[0:0] = [f"    (void){name};" for name in unused]
        if nested:
            self.lines.insert(0, f"    size_t {name} = 0;")
        if self.fn.tape == "local" and self.uses_tape:
            self.lines.insert(0, "    adgen_tape tape = ADGEN_TAPE_INIT;")
        if self.nbdirs is not None and self.nbdirs not in unused:
            self.lines.insert(0, f"    ADGEN_ASSUME_NBDIRS({self.nbdirs});")
        return "\n".join([self.sig.prototype() + "\n{", *self.lines, "}"])

    def region(self, r: Region, depth: int, top: bool = False) -> None:
        groups = self.tape_groups(r)
        for op in r.ops:
            if op.results and all(v in self.inlined for v in op.results) and \
                    not isinstance(op, (For, While, Call)):  # (an inlined if: a && b)
                continue
            if not isinstance(op, (Yield, Condition)):
                self.comment_line(op, depth)
            if op in groups:
                self.tape_group(groups[op], depth)
            getattr(self, "op_" + type(op).__name__)(op, depth)

    def tape_groups(self, r: Region) -> dict[Op, list[Op]]:
        """Runs of two or more consecutive pushes (or pops) of scalars in ``r`` that no loop
        block holds, by their first op: each takes its bytes from the tape at once."""
        def groupable(op: Op) -> bool:
            return isinstance(op, (Push, Pop)) and op not in self.block_slots and not any(
                isinstance(v.type, VecType) for v in (*op.operands, *op.results))

        if self.on_device:
            return {}
        runs: list[list[Op]] = [[]]
        for op in r.ops:
            if not groupable(op):
                runs.append([])
            elif runs[-1] and type(op) is type(runs[-1][0]):
                runs[-1].append(op)
            else:
                runs.append([op])
        return {run[0]: run for run in runs if len(run) > 1}

    def tape_group(self, ops: list[Op], depth: int) -> None:
        """One ``adgen_push_block`` (``adgen_pop_block``) for the bytes of consecutive pushes
        (pops), then a put (get) at each value's offset: the same bytes as one by one, with
        one check of the tape's size."""
        width, offsets = _tape_layout(ops)
        saved = self.fresh_name("saved")
        if isinstance(ops[0], Push):
            self.emit(f"unsigned char *{saved} = adgen_push_block({self.tape}, {width});", depth)
        else:
            self.emit(f"const unsigned char *{saved} = adgen_pop_block({self.tape}, {width});",
                      depth)
        for o, off in zip(ops, offsets, strict=True):
            self.block_slots[o] = (saved, str(off))

    def declare_or_assign(self, v: Value, rhs: _Expr | None, depth: int, vec_rhs: str | None = None) -> None:
        var = self.var_of[v]
        if var.vector:
            if not var.declared:
                self.emit(self.dirs_array(var.ctype, var.name), depth)
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

    def dirs_array(self, ctype: str, name: str) -> str:
        """The declaration of a local array of directions: of constant length where the
        build fixes the number of directions (the runtime's ``ADGEN_DIRS``)."""
        return f"{ctype} {name}[ADGEN_DIRS({self.nbdirs})];"

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
        assign = "="
        increment = self.increment_of(op)
        if increment is not None:  # a[i] = a[i] + v  ->  a[i] += v
            assign, value = increment
        # in a parallel loop, an increment of an array other iterations touch too
        atomic = assign != "=" and self.atomic_arrays is not None and \
            array in self.atomic_arrays
        if assign == "=" and self.atomic_arrays is not None and array in self.atomic_arrays \
                and self.rereads(op):
            # a[i] = a[i] (the tangent of an increment by zero, xbd[k] += 0.0): nothing to
            # store, and a plain store would undo another thread's atomic increment made
            # between its load and it
            if value not in self.inlined and value in self.var_of:
                self.emit(f"(void){self.var_of[value].name};", depth)
            return
        stmt = f"{target} {assign} {self.expr(value, vec=isinstance(value.type, VecType)).text};"
        if not atomic:
            self.emit(self.dir_loop(stmt) if isinstance(value.type, VecType) else stmt, depth)
            return
        if self.options.target == "cuda":
            value_text = self.expr(value).text
            if assign == "-=":
                value_text = f"-({value_text})"
            self.emit(f"ADGEN_ATOMIC_ADD({target}, {value_text});", depth)
            return
        if isinstance(value.type, VecType):
            self.emit(self.dir_loop("{"), depth)
            self.emit("ADGEN_OMP(omp atomic)", depth + 1)
            self.emit(stmt, depth + 1)
            self.emit("}", depth)
        else:
            self.emit("ADGEN_OMP(omp atomic)", depth)
            self.emit(stmt, depth)

    @staticmethod
    def rereads(op: Store) -> bool:
        """Whether ``op`` stores ``a[idx]`` to ``a[idx]``: the element as loaded."""
        load, idx = op.operands[-1].owner, op.operands[1:-1]
        return isinstance(load, Load) and load.operands[0] is op.operands[0] and \
            len(load.operands) - 1 == len(idx) and \
            all(a is b for a, b in zip(load.operands[1:], idx))

    def increment_of(self, op: Store) -> tuple[str, Value] | None:
        """``("+=", v)`` when ``op`` stores ``a[i] + v`` to ``a[i]`` and that load is inlined
        into it (``("-=", v)`` for ``a[i] - v``)."""
        inc = increment(op)
        value = op.operands[-1]
        if inc is None or value not in self.inlined:
            return None
        load, term, subtracted = inc
        if load.result is value.owner.operands[0] and load.result in self.inlined:
            return ("-=" if subtracted else "+=", term)
        return None

    def op_Zeros(self, op: Zeros, depth: int) -> None:
        v = op.results[0]
        var = self.var_of[v]
        at = v.type
        assert isinstance(at, ArrayType)
        count = " * ".join(self.paren(_Expr(s, ATOM if s.isidentifier() or s.isdigit() else 12), 13)
                           for s in self.shapes[v])
        if at.vector:
            count += f" * {self.nbdirs}"
        # nvcc compiles the CUDA target as C++, which does not convert void * implicitly
        cast = f"({var.ctype} *)" if self.options.target == "cuda" else ""
        self.emit(f"{var.ctype} *{var.name} = {cast}adgen_calloc((size_t)({count}), "
                  f"sizeof({var.ctype}));", depth)
        var.declared = True

    def op_Assert(self, op: Assert, depth: int) -> None:
        msg = op.message.replace("\\", "\\\\").replace('"', '\\"')
        where = f"{self.options.source_name}:{op.loc.line}"
        text = f"{where}: assertion failed" + (f": {msg}" if msg else "")
        self.emit(f"ADGEN_ASSERT({self.expr(op.operands[0]).text}, \"{text}\");", depth)

    @property
    def tape(self) -> str:
        """The C expression of the tape (a pointer)."""
        if self.thread_tape is not None:
            return "&" + self.thread_tape
        self.uses_tape = True
        return "tape" if self.fn.tape == "param" else "&tape"

    @property
    def on_device(self) -> bool:
        """CUDA: whether the code being written runs on the device (a kernel's body, or a
        function called in one), whose tape is a thread's ``adgen_dtape``."""
        return self.options.target == "cuda" and (
            self.thread_tape is not None or (self.fn.primal or self.fn.name) in self.options.device)

    def op_Push(self, op: Push, depth: int) -> None:
        v = op.operands[0]
        slot = self.block_slots.get(op)
        if slot is not None:
            block, at = slot
            self.emit(f"adgen_put_{elem_of(v.type).name}({block}, {at}, "
                      f"{self.expr(v).text});", depth)
            return
        push = f"adgen_{'d' if self.on_device else ''}push_{elem_of(v.type).name}({self.tape}, "
        if isinstance(v.type, VecType):  # one value per direction (vector-hvp)
            self.emit(self.dir_loop(push + f"{self.expr(v, vec=True).text});"), depth)
        else:
            self.emit(push + f"{self.expr(v).text});", depth)

    def op_Pop(self, op: Pop, depth: int) -> None:
        v = op.results[0]
        slot = self.block_slots.get(op)
        # (a value nothing reads: the tangent that an hvp tapes beside a value whose adjoint
        # does not depend on it)
        unused = not self.uses.get(v)
        if slot is not None:
            if not unused:  # (the block's pop takes its bytes)
                block, at = slot
                self.declare_or_assign(
                    v, _Expr(f"adgen_get_{elem_of(v.type).name}({block}, {at})", ATOM), depth)
            return
        pop = f"adgen_{'d' if self.on_device else ''}pop_{elem_of(v.type).name}({self.tape})"
        if unused and not isinstance(v.type, VecType):
            self.emit(f"(void){pop};", depth)
            return
        if unused:
            # the tape's bytes are dropped, one value per direction, and no array of
            # directions is declared for them: gcc -Wall warns about an array only written
            # ("set but not used", the tangents of saddle's inner descent in vector-forward)
            self.emit(self.dir_loop(f"(void){pop};"), depth)
            return
        if isinstance(v.type, VecType):  # the directions back in the reverse order
            self.declare_or_assign(v, None, depth)
            var = self.var_of[v]
            self.emit(f"for (int64_t {self.dir} = {self.nbdirs} - 1; {self.dir} >= 0; "
                      f"--{self.dir}) {var.name}[{self.dir}] = {pop};", depth)
        else:
            self.declare_or_assign(v, _Expr(pop, ATOM), depth)

    def op_Call(self, op: Call, depth: int) -> None:
        sig = self.sigs[op.callee]
        args: list[str] = []
        outs: dict[int, Value] = {}
        # a callee that increments its scalar adjoints (a C adjoint given with @external)
        callee = next((f for f in self.module.functions if f.name == op.callee), None)
        increments = set(callee.increments) if callee is not None else set()
        for p in sig.params:
            kind = p.source[0]
            if kind == "tape":  # NULL for a callee that records nothing
                args.append(self.tape if self.uses_tape_in(op) else "NULL")
            elif kind == "value":
                a = op.operands[p.source[1]]
                if isinstance(a.type, VecType):
                    args.append(self.var_of[a].name if a in self.var_of and a not in
                                self.inlined else self.materialize_vec(a, depth))
                else:
                    args.append(self.expr(a).text)
            elif kind == "shape":
                a = op.operands[p.source[1]]
                args.append(self.shapes[a][p.source[2]])  # type: ignore[misc]
            else:
                r = op.results[p.source[1]]
                outs[p.source[1]] = r
                zero = _Expr(c_const(0.0, r.type), ATOM) if callee is not None and \
                    callee.results[p.source[1]].name in increments else None
                self.declare_or_assign(r, zero, depth)
                var = self.var_of[r]
                args.append(var.name if var.vector else "&" + var.name)
        call = f"{op.callee}({', '.join(args)})"
        r = op.results[sig.c_return] if sig.c_return is not None else None
        if r is not None and self.uses.get(r):
            self.declare_or_assign(r, _Expr(call, ATOM), depth)
        else:
            self.emit(call + ";", depth)
        if op.callee in self.taping:
            # a whole adjoint called in the forward sweep (ad/joint.py): its own tape, on
            # top of what this function's holds now (``run`` adds that)
            self.nested_tapes = True
            self.nested_lines.append(len(self.lines))
            self.emit(f"{self.nested_name} = adgen_size_max({self.nested_name}, "
                      "adgen_tape_bytes_last);", depth)

    def materialize_vec(self, v: Value, depth: int) -> str:
        name = self.fresh_name("tmpd")
        self.emit(self.dirs_array(self.ctype(v.type), name), depth)
        self.emit(self.dir_loop(f"{name}[{self.dir}] = {self.expr(v, vec=True).text};"), depth)
        return name

    # -- moves (terminators) ------------------------------------------------------------------
    def moves(self, dests: list[Value], srcs: list[Value], depth: int) -> None:
        pending: list[tuple[Var, Value]] = []
        for d, s in zip(dests, srcs, strict=True):
            dv = self.var_of[d]
            sv = self.var_of.get(s)
            if sv is dv and s not in self.inlined:
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
                    self.emit(self.dirs_array(dv.ctype, tmp), depth)
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
            var = self.var_of[v]
            if not var.declared:
                if var.vector:
                    self.emit(self.dirs_array(var.ctype, var.name), depth)
                else:
                    self.emit(f"{var.ctype} {var.name};", depth)
                var.declared = True

    def init_loop(self, results: list[Value], inits: list[Value], depth: int) -> None:
        # declare with the initial value where the variable is new and no move conflicts
        simple = []
        for res, init in zip(results, inits, strict=True):
            var = self.var_of[res]
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
        iv = self.var_of[op.body.args[0]].name
        s = step.owner.value if isinstance(step.owner, Const) else None
        lo, hi = self.expr(start).text, self.expr(stop).text
        if s is None:
            st = self.expr(step).text
            header = (f"for (int64_t {iv} = {lo}; {st} > 0 ? {iv} < {hi} : {iv} > {hi}; "
                      f"{iv} += {st})")
        else:
            cond, _ = self.loop_condition(op, int(s))
            incr = {1: f"++{iv}", -1: f"--{iv}"}.get(int(s)) or (
                f"{iv} += {s}" if s > 0 else f"{iv} -= {-s}")
            header = f"for (int64_t {iv} = {lo}; {cond}; {incr})"
        if self.options.target == "cuda" and op in self.omp_loops:
            self.emit_kernel(op, depth)
            return
        for line in note_lines(op):  # what the loop computes, where the source does not say
            self.emit(line, depth)
        outer_atomic = self.atomic_arrays
        tape: str | None = None
        private: list[tuple[Value, str, str]] = []  # (array, private copy, element count)
        block = False
        if op in self.omp_loops:
            atomic, privatized = self.share(op)
            block = bool(privatized) or self.uses_tape_in(op)
            if block:  # a parallel region around the loop, for what each thread owns
                self.emit("ADGEN_OMP(omp parallel)", depth)
                self.emit("{", depth)
                depth += 1
            if self.uses_tape_in(op):
                # each iteration pops what it pushes: one tape per thread
                tape = self.fresh_name("thread_tape")
                self.emit(f"adgen_tape {tape} = ADGEN_TAPE_INIT;", depth)
                self.thread_tape = tape
            for a in privatized:
                # every iteration adds to the same elements: each thread adds to its own copy
                name = self.fresh_name(self.var_of[a].name + "_t")
                count = self.element_count(a)
                ctype = self.var_of[a].ctype
                self.emit(f"{ctype} *{name} = ADGEN_PRIVATE({ctype}, {self.var_of[a].name}, "
                          f"{count});", depth)
                self.private_names[a] = name
                private.append((a, name, count))
            self.emit(self.omp_pragma(op, "for" if block else "parallel for"), depth)
            # in an adjoint called inside a prange (module.parallel_adjoints), the arrays it
            # is passed are shared with the caller's other iterations too, even where this
            # loop's iterations own their elements
            self.atomic_arrays = atomic | ((outer_atomic or set()) - set(privatized))
        elif op.parallel and self.atomic_arrays is None:
            self.emit(f"/* prange run in sequence: {self.parallel_reason(op)} */", depth)
        blocked = self.tape_block(op, depth)
        simd = self.simd_pragma(op, blocked) if op not in self.omp_loops else None
        extremes = self.lane_extremes(op, blocked, depth) if simd is not None else []
        if simd is not None:
            self.emit(simd, depth)
            if s == -1:  # independent iterations: upwards, which vectorises without permutes
                header = self.ascending_header(op)
        self.emit(header + " {", depth)
        if op in self.omp_loops and self.nbdirs is not None:
            # the body runs in a function of its own (OpenMP outlines it), where gcc no longer
            # knows the number of directions: under -DADGEN_NBDIRS=1 it took the loops over
            # them for ones that may leave an array of ADGEN_DIRS(nbdirs) unset (-Wall:
            # "may be used uninitialized"), and their trip counts were not constant
            self.emit(f"ADGEN_ASSUME_NBDIRS({self.nbdirs});", depth + 1)
        self.host_ivs.append(iv)
        self.region(op.body, depth + 1)
        self.host_ivs.pop()
        self.emit("}", depth)
        for name, kind, elem, start in extremes:
            self.emit(f"{name} = adgen_{kind}_{elem}({start}, {name});", depth)
        self.atomic_arrays = outer_atomic
        for a, name, count in private:
            self.emit(f"ADGEN_PRIVATE_ADD({elem_of(a.type).name}, {self.var_of[a].name}, "
                      f"{name}, {count});", depth)
            del self.private_names[a]
        if tape is not None:
            self.emit(f"adgen_tape_free(&{tape});", depth)
            self.thread_tape = None
        if block:
            self.emit("}", depth - 1)

    def lane_extremes(self, op: For, blocked: bool, depth: int) -> list[tuple[str, str, str, str]]:
        """The float running maxima and minima of the vectorised loop ``op``: each lane starts
        from -INFINITY (INFINITY), and after the loop the start value comes first, as in the
        loop as written (``adgen_max_f64(start, m)``: a NaN start stays NaN, a tie keeps the
        start; OpenMP's combination of the start with the lanes would drop a NaN).  Emits the
        lines before the loop; returns (variable, kind, type, start) for the line after it."""
        out = []
        for kind, arg in self.simd_reductions(op, blocked) or []:
            if kind not in ("max", "min") or not (isinstance(arg.type, ScalarType) and
                                                  arg.type.is_float):
                continue
            var = self.var_of[arg]
            start = self.fresh_name(var.name + "_start")
            self.emit(f"{var.ctype} {start} = {var.name};", depth)
            self.emit(f"{var.name} = {'-' if kind == 'max' else ''}INFINITY;", depth)
            out.append((var.name, kind, arg.type.name, start))
        return out

    def ascending_header(self, op: For) -> str:
        """The header of the step -1 loop ``op`` run upwards, over the same indices: for a
        loop whose iterations are independent (``simd_reductions``), where a reversed loop
        would make the vectorised code reverse the lanes of every load and store."""
        start, stop = op.operands[:2]
        iv = self.var_of[op.body.args[0]].name
        first, last = _plus_one(self.expr(stop).text), self.expr(start).text
        m = re.fullmatch(r"(.+) - 1", last)
        cond = f"{iv} < {m.group(1)}" if m and _term(m.group(1)) == m.group(1) else \
            f"{iv} <= {_term(last)}"
        return f"for (int64_t {iv} = {first}; {cond}; ++{iv})"

    def loop_condition(self, op: For, s: int) -> tuple[str, str]:
        """The loop condition of ``op`` with constant step ``s``, and a count of its
        iterations (exact or more, never fewer while positive)."""
        start, stop = op.operands[:2]
        iv = self.var_of[op.body.args[0]].name
        lo, hi = self.expr(start).text, self.expr(stop).text
        if s == -1 and isinstance(stop.owner, Const):  # reversed loops: i >= 0, not i > -1
            low = c_const(int(stop.owner.value) + 1, stop.type)
            return f"{iv} >= {low}", f"{lo} - {low} + 1" if low != "0" else f"{lo} + 1"
        if s > 0:
            count = f"({hi}) - ({lo})" if s == 1 else f"(({hi}) - ({lo}) + {s - 1}) / {s}"
            if lo == "0" and s == 1:
                count = hi
            return f"{iv} < {hi}", count
        count = f"({lo}) - ({hi})" if s == -1 else f"(({lo}) - ({hi}) + {-s - 1}) / {-s}"
        return f"{iv} > {hi}", count

    def emit_kernel(self, op: For, depth: int) -> None:
        """A prange on the CUDA target: a kernel, one thread per iteration (a grid-stride
        loop), emitted before the function; here, its launch and the sums it returns."""
        step = op.operands[2].owner
        assert isinstance(step, Const)
        s = int(step.value)
        iv = self.var_of[op.body.args[0]].name
        lo = self.expr(op.operands[0]).text
        cond, count = self.loop_condition(op, s)
        name = f"{self.fn.name}_kernel{len(self.kernels)}"
        known = {p.name for p in self.sig.params} | {v.name for v in self.vars if v.declared} | \
            set(self.host_ivs)
        sums = [self.var_of[a] for a in self.sums(op)]
        for var in sums:
            if var.ctype not in ("double", "float"):
                raise AdgenError(op.loc, "a prange summing an integer is not supported on the "
                                         "CUDA target yet (sum a float)")
        outer = (self.lines, self.atomic_arrays)
        self.lines = []
        atomic, privatized = self.share(op, anywhere=True)
        self.atomic_arrays = atomic | set(privatized)
        copies, bytes_ = self.block_copies(privatized)
        # (not a parameter's name: the kernel takes the parameters it reads)
        tape = self.fresh_name("thread_tape") if self.uses_tape_in(op) else None
        self.thread_tape = tape  # each iteration pops what it pushes: a tape per thread
        self.region(op.body, 2)
        self.thread_tape = None
        copy_names = {a: self.private_names.pop(a) for a in privatized}
        body, (self.lines, self.atomic_arrays) = self.lines, outer
        loop = f"ADGEN_GRID_LOOP({iv}, {lo}, {cond}, {s}) {{"
        code = re.sub(r"/\*.*?\*/", "", "\n".join(copies + body + [loop]), flags=re.S)
        used = set(re.findall(r"(?<![\w.])[A-Za-z_]\w*", code)) & known - {v.name for v in sums}
        params = [f"{p.ctype}{'' if p.ctype.endswith('*') else ' '}{p.name}"
                  for p in self.sig.params if p.name in used and p.source[0] != "tape"]
        args = [p.name for p in self.sig.params if p.name in used and p.source[0] != "tape"]
        for var in self.vars:
            if var.name in used and var.name not in args:
                params.append(f"{var.ctype} {var.name}")
                args.append(var.name)
        for host_iv in self.host_ivs:
            if host_iv in used and host_iv not in args:
                params.append(f"int64_t {host_iv}")
                args.append(host_iv)
        groups: dict[str, list[Var]] = {}
        for var in sums:
            groups.setdefault(var.ctype, []).append(var)
        buffers = {ctype: self.fresh_name("sums" if len(groups) == 1 else f"sums_{SUFFIX[ctype]}")
                   for ctype in groups}
        params += [f"{ctype} *{buffers[ctype]}" for ctype in groups]
        where = f"{self.options.source_name}:{op.loc.line}"
        src = self.module.source_lines[op.loc.line - 1].strip().replace("*/", "* /") \
            if 1 <= op.loc.line <= len(self.module.source_lines) else ""
        text = [f"/* {where}: {src} one thread per iteration */", *note_lines(op),
                f"ADGEN_KERNEL {name}({', '.join(params)})", "{"]
        text += [f"    {var.ctype} {var.name} = 0;" for var in sums]
        text += ["    " + line for line in copies]
        if tape:
            text.append(f"    ADGEN_DTAPE({tape});")
        text += ["    " + loop, *body, "    }"]
        if tape:
            text.append(f"    ADGEN_DTAPE_FREE({tape});")
        for a in privatized:
            array = self.var_of[a].name
            text.append(f"    ADGEN_BLOCK_PRIVATE_ADD({array}, {copy_names[a]}, "
                        f"{self.element_count(a)});")
        for ctype, members in groups.items():
            text += [f"    adgen_warp_add_{SUFFIX[ctype]}(&{buffers[ctype]}[{k}], {var.name});"
                     for k, var in enumerate(members)]
        text.append("}")
        self.kernels.append("\n".join(text))
        # the launch: in a block of its own when it declares the bytes of the block copies
        # or the sums' buffers
        launch = f"ADGEN_LAUNCH({name}, {count}, "
        block = bool(privatized or groups)
        if block:
            self.emit("{", depth)
        inner = depth + block
        if privatized:
            shared = self.fresh_name("copy_bytes")
            self.emit(f"size_t {shared} = {bytes_};  /* the block copies in shared memory */",
                      inner)
            launch = f"ADGEN_LAUNCH_SHARED({name}, {count}, {shared}, "
        for ctype, members in groups.items():
            self.emit(f"{ctype} *{buffers[ctype]} = adgen_cuda_sums_{SUFFIX[ctype]}"
                      f"({len(members)});", inner)
        self.emit(f"{launch}({', '.join(args + list(buffers.values()))}));", inner)
        for ctype, members in groups.items():
            host = self.fresh_name(buffers[ctype] + "_host")
            self.emit(f"{ctype} {host}[{len(members)}];", inner)
            self.emit(f"adgen_cuda_fetch_{SUFFIX[ctype]}({host}, {buffers[ctype]}, "
                      f"{len(members)});", inner)
            for k, var in enumerate(members):
                self.emit(f"{var.name} = {var.name} + {host}[{k}];", inner)
        if block:
            self.emit("}", depth)

    def block_copies(self, arrays: list[Value]) -> tuple[list[str], str]:
        """The declarations of the block copies in shared memory of ``arrays``, which a
        kernel only adds to (``ADGEN_BLOCK_PRIVATE``; doubles first so that every copy is
        aligned, vectors before matrices so that small ones come first: sorts ``arrays`` so),
        and the bytes of all of them.  Sets their names in ``private_names``."""
        if not arrays:
            return [], "0"
        arrays.sort(key=lambda a: (self.var_of[a].ctype != "double",
                                   len(self.shapes[a])))
        used = self.fresh_name("shared_bytes")
        lines = [f"size_t {used} = 0;"]
        counts: dict[str, dict[str, int]] = {}  # C type -> element count -> arrays of it
        for a in arrays:
            var = self.var_of[a]
            count = self.element_count(a)
            copy = self.private_names[a] = self.fresh_name(var.name + "_t")
            lines.append(f"{var.ctype} *{copy} = ADGEN_BLOCK_PRIVATE({var.ctype}, {var.name}, "
                         f"{count}, {used});")
            by_count = counts.setdefault(var.ctype, {})
            by_count[count] = by_count.get(count, 0) + 1
        terms = []
        for ctype, by_count in counts.items():
            elements = " + ".join(c if k == 1 else f"{k} * {_atom(c)}"
                                  for c, k in by_count.items())
            terms.append(f"(size_t){_atom(elements)} * sizeof({ctype})")
        return lines, " + ".join(terms)

    def element_count(self, array: Value) -> str:
        at = array.type
        assert isinstance(at, ArrayType)
        dims = list(self.shapes[array]) + ([self.nbdirs] if at.vector and self.nbdirs else [])
        return " * ".join(d if d.isidentifier() or d.isdigit() else f"({d})" for d in dims)

    def share(self, loop: For, anywhere: bool = False) -> tuple[set[Value], list[Value]]:
        """The arrays that iterations of the parallel ``loop`` may share, split in two: those
        whose increments are atomic (some access is not at the iteration's own index, the
        loop variable as first index, or a call gets the array), and those privatized: only
        incremented, somewhere at indices that do not depend on the iteration (the adjoint of
        a parameter every iteration reads), so that atomics would all collide there; with
        ``anywhere``, at any indices (a CUDA block's copy in shared memory, where small).
        Arrays only indexed by the loop variable first belong to one iteration each."""
        iv = loop.body.args[0]
        shared: dict[Value, Value] = {}
        called: set[Value] = set()
        accesses: dict[Value, list[Op]] = {}
        for op in loop.walk():
            if isinstance(op, (Load, Store)):
                accesses.setdefault(op.operands[0], []).append(op)
                if op.operands[1] is not iv:
                    shared[op.operands[0]] = op.operands[0]
            elif isinstance(op, Call):
                for a in op.operands:
                    if isinstance(a.type, ArrayType):
                        shared[a] = a
                        called.add(a)
        varies = index_dependent(loop)
        privatized = []
        for key, array in shared.items():
            ops = accesses.get(key, [])
            stores = [o for o in ops if isinstance(o, Store)]
            loads = [o for o in ops if isinstance(o, Load)]
            if key not in called and stores and len(loads) == len(stores) and \
                    all(self.increment_of(s) is not None for s in stores) and \
                    all(ld.results[0] in self.inlined for ld in loads) and \
                    (anywhere or any(not any(i in varies for i in s.operands[1:-1])
                                     for s in stores)) and \
                    elem_of(array.type).name in ("f64", "f32"):
                privatized.append(array)
        return set(shared) - set(privatized), privatized

    def omp_pragma(self, op: For, construct: str = "parallel for") -> str:
        """``#pragma omp parallel for``, through the runtime's ``ADGEN_OMP`` (nothing unless
        built with OpenMP), with the carried values as sums."""
        sums = []
        for a in self.sums(op):
            var = self.var_of[a]
            sums.append(f"{var.name}[:{self.nbdirs}]" if var.vector else var.name)
        clause = f" reduction(+: {', '.join(sums)})" if sums else ""
        return f"ADGEN_OMP(omp {construct}{clause})"

    def tape_block(self, op: For, depth: int) -> bool:
        """A loop whose only tape operations are the pushes (or the pops) of its own body, with
        a constant step, takes the bytes of all its iterations as one block before it
        (``adgen_push_block`` / ``adgen_pop_block``) and puts (gets) each value at its place:
        the bytes are those of pushes one by one (iteration t at t times the bytes of one
        iteration, the values in push order), so the loop that pops them may be written
        either way.  Writes the block's declaration; returns whether it did."""
        step = op.operands[2].owner
        ops = [o for o in op.body.ops if isinstance(o, (Push, Pop))]
        if not ops or self.on_device or not isinstance(step, Const) or \
                len({type(o) for o in ops}) > 1 or any(
                    isinstance(v.type, VecType) for o in ops for v in (*o.operands, *o.results)):
            return False
        mine = set(ops)
        if any(inner not in mine and (isinstance(inner, (Push, Pop)) or isinstance(
                inner, Call) and any(p.source[0] == "tape" for p in self.sigs[inner.callee].params))
               for inner in op.walk()):
            return False
        s = int(step.value)
        start, stop = (self.expr(v).text for v in op.operands[:2])
        pops = isinstance(ops[0], Pop)
        iv = self.var_of[op.body.args[0]].name
        low, high = (start, stop) if s > 0 else (stop, start)  # the span: high - low
        high = _term(high)
        if low == "0" or re.fullmatch(r"-\d+", low) and high.endswith(f" - {low[1:]}"):
            span = high if low == "0" else high[:-len(f" - {low[1:]}")]  # (n - 1) - -1: n
        else:
            span = f"{high} + {low[1:]}" if re.fullmatch(r"-\d+", low) else \
                f"{high} - {_atom(low)}"
        trips = self.fresh_name("count")
        if re.fullmatch(r"-?\d+", start) and re.fullmatch(r"-?\d+", stop):  # a known count
            span = str(max(0, (int(stop) - int(start) + s - (1 if s > 0 else -1)) // s))
        elif abs(s) != 1:  # (span + |s| - 1) / |s|; span ends in - (|s| - 1) in a jammed loop
            span = span[:-len(f" - {abs(s) - 1}")] if span.endswith(f" - {abs(s) - 1}") else \
                f"{span} + {abs(s) - 1}"
            span = f"{_atom(span)} / {abs(s)}"
        self.emit(f"int64_t {trips} = {span};", depth)
        if pops and s == -1:  # counting down to stop + 1, the iteration that pushed
            first = _plus_one(stop)
            t = iv if first == "0" else f"{iv} + {first[1:]}" if re.fullmatch(r"-\d+", first) \
                else f"{iv} - {_atom(first)}"
        else:
            if not re.fullmatch(r"-?\w+", start):  # its variable may change in the loop
                first = self.fresh_name("first")
                self.emit(f"int64_t {first} = {start};", depth)
                start = first
            t = (iv if start == "0" else f"{iv} - {start}") if s == 1 else \
                f"{start} - {iv}" if s == -1 else \
                f"{iv} / {s}" if start == "0" and s > 0 else f"({iv} - {start}) / {s}"
            if pops:  # iteration t of this loop gets what iteration trips - 1 - t pushed
                t = f"{trips} - 1 - {t if t.isidentifier() else f'({t})'}"
        width, offsets = _tape_layout(ops)
        block = self.fresh_name("block")
        if isinstance(ops[0], Push):
            self.emit(f"unsigned char *{block} = adgen_push_block({self.tape}, {trips} * {width});",
                      depth)
        else:
            self.emit(f"const unsigned char *{block} = adgen_pop_block({self.tape}, "
                      f"{trips} * {width});", depth)
        for o, off in zip(ops, offsets, strict=True):
            index = t if t.isidentifier() else f"({t})"
            at = f"{index} * {width}" if width != 1 else index
            self.block_slots[o] = (block, at + (f" + {off}" if off else ""))
        return True

    def simd_pragma(self, op: For, blocked: bool = False) -> str | None:
        """``ADGEN_SIMD(omp simd ...)`` before a loop whose iterations may run in SIMD lanes
        (``simd_reductions``; ``blocked``: its pushes or pops go through a block of the
        tape), with its reductions; None for other loops, and for loops inside a parallel
        loop that write arrays its threads share (atomic increments)."""
        reductions = self.simd_reductions(op, blocked)
        if reductions is None or self.atomic_arrays and any(
                isinstance(o, Store) and o.operands[0] in self.atomic_arrays
                for o in op.body.ops):
            return None
        by_kind: dict[str, list[str]] = {}
        for kind, arg in reductions:
            by_kind.setdefault(kind, []).append(self.var_of[arg].name)
        clause = "".join(f" reduction({kind}: {', '.join(names)})"
                         for kind, names in by_kind.items())
        return f"ADGEN_SIMD(omp simd{clause})"

    def op_While(self, op: While, depth: int) -> None:
        self.init_loop(op.results, op.inits, depth)
        cond_region = op.regions[0]
        stmts = [o for o in cond_region.ops[:-1]
                 if not (o.results and all(v in self.inlined for v in o.results))]
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
        return self.layout.parent_of.get(op)

    def loop_of(self, op: Op) -> Op:
        loops = self.layout.loops_of[op]
        return loops[-1]

    def op_Yield(self, op: Yield, depth: int) -> None:
        parent = self.parent(op)
        if isinstance(parent, If):
            self.moves(parent.results, op.operands, depth)
        elif isinstance(parent, For):
            self.moves(parent.body.args[1:], op.operands, depth)
        elif isinstance(parent, While):
            self.moves(parent.regions[1].args, op.operands, depth)
        # local arrays of an if branch or loop body (single-exit and adjoint code) end here
        region = self.layout.region_of[op]
        for _, name, r in reversed(self.zeros):
            if r is region:
                self.emit(f"free({name});", depth)

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
        pos = self.layout.pos[op]
        frees = [name for p, name, r in self.zeros
                 if p < pos and self._region_in_scope_of(r, self.layout.region_of[op])]
        ret_expr: str | None = None
        for p in self.sig.params:
            if p.source[0] == "result":
                v = op.operands[p.source[1]]
                assign = "="
                if self.fn.results[p.source[1]].name in self.fn.increments:
                    if isinstance(v.owner, Const) and v.owner.value == 0:
                        continue  # nothing to add
                    assign = "+="
                if isinstance(v.type, VecType):
                    self.emit(self.dir_loop(
                        f"{p.name}[{self.dir}] {assign} {self.expr(v, vec=True).text};"), depth)
                else:
                    self.emit(f"*{p.name} {assign} {self.expr(v).text};", depth)
        if self.sig.c_return is not None:
            v = op.operands[self.sig.c_return]
            ret_expr = self.expr(v).text
            if frees and not isinstance(v.owner, Const):
                name = self.fresh_name("result")
                self.emit(f"{self.sig.return_ctype} {name} = {ret_expr};", depth)
                ret_expr = name
        for name in reversed(frees):
            self.emit(f"free({name});", depth)
        if self.fn.tape == "local":
            self.pending_tape_free.append((len(self.lines), depth))
        self.emit(f"return {ret_expr};" if ret_expr is not None else "return;", depth)


def taping(module: Module) -> set[str]:
    """The adjoints with a tape of their own (``f_b``, which report its size) that may fill
    it: those that push or pop, or call a function that fills the tape it is given
    (``filling``) or is one of them."""
    return pushing(module, [fn for fn in module.functions
                            if fn.tape == "local" and fn.mode in TAPE_MODES], filling(module))


#: the runtime's suffix of a C float type
SUFFIX = {"double": "f64", "float": "f32"}


def emit_function(fn: Function, sigs: dict[str, CSignature], module: Module,
                  options: EmitOptions, tapes: set[str] | None = None,
                  shared: bool = False) -> str:
    """The C text of ``fn``, preceded by its kernels on the CUDA target; ``tapes``: the
    module's ``taping`` adjoints; ``shared``: ``fn`` is an adjoint called inside a prange
    (``module.parallel_adjoints``), whose increments of its array parameters are atomic."""
    emitter = FunctionEmitter(fn, sigs[fn.name], sigs, module, options)
    if shared:
        emitter.atomic_arrays = {p for p in fn.params if isinstance(p.type, ArrayType)}
    if fn.mode in TAPE_MODES and fn.tape == "local":
        emitter.taping = tapes or set()
    text = emitter.run()
    return "\n\n".join([*emitter.kernels, text])
