"""Module-level reading: imports, constants, function signatures, annotations."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field

import libcst as cst

from ..ir.core import External, Loc, Nested
from ..ir.prims import CONSTANTS
from ..ir.types import BOOL, F32, F64, I32, I64, ArrayType, ScalarType, Type
from ..emit.names import function_name_problem
from .diagnostics import AdgenError
from .external import external_decorator, is_external_decorator, read_external

SCALAR_NAMES = {"f64": "f64", "float": "f64", "f32": "f32", "i64": "i64", "int": "i64",
                "i32": "i32", "bool": "bool"}
ADGEN_NAMES = {"Array", "f64", "f32", "i64", "i32", "zeros", "prange", "custom_vjp", "custom_jvp",
               "grad", "jvp", "external"}


@dataclass
class Options:
    precision: str = "f64"  # what `float`/`f64` and float literals mean

    @property
    def float_type(self) -> ScalarType:
        return F32 if self.precision == "f32" else F64


@dataclass
class Param:
    name: str
    type: Type
    loc: Loc


@dataclass
class Signature:
    name: str
    params: list[Param]
    results: list[Type]
    returns_tuple: bool
    loc: Loc
    node: cst.FunctionDef
    #: ``@custom_vjp(g)``: the module function that is this function's adjoint
    custom_adjoint: str = ""
    #: ``@custom_jvp(g)``: the module function that is this function's tangent
    custom_tangent: str = ""
    #: ``@external(...)``: the C functions the user gives for this function
    external: External | None = None


@dataclass
class Constant:
    value: float | int | bool
    type: ScalarType
    loc: Loc


@dataclass
class ModuleScope:
    """What module-level statements define."""

    #: local alias -> "math" | "numpy"
    modules: dict[str, str] = field(default_factory=dict)
    #: local name -> (module, name) for `from math import sin` etc.
    imported: dict[str, tuple[str, str]] = field(default_factory=dict)
    constants: dict[str, Constant] = field(default_factory=dict)
    functions: dict[str, Signature] = field(default_factory=dict)
    #: names imported with `from adgen import ...` (CPython needs them imported too)
    from_adgen: set[str] = field(default_factory=set)
    #: `import adgen` (for `@adgen.custom_vjp(g)`)
    adgen_module: bool = False
    #: derivatives taken inside the module (``grad(f)(...)``, ``jvp(f, ...)``), by the name of
    #: the function each becomes
    nested: dict[str, Nested] = field(default_factory=dict)

    def require_adgen(self, name: str, error: Callable[[str], Exception]) -> None:
        if name not in self.from_adgen:
            raise error(f"'{name}' is not imported (add 'from adgen import {name}': CPython "
                        "runs the module too)")


class ScopeReader:
    def __init__(self, path: str, loc_of: Callable[[cst.CSTNode], Loc], options: Options) -> None:
        self.path = path
        #: the module's name, which names the generated files (check_module_name)
        self.module_name = os.path.splitext(os.path.basename(path))[0]
        self.loc_of = loc_of
        self.options = options
        self.scope = ModuleScope()

    def error(self, node: cst.CSTNode, message: str) -> AdgenError:
        return AdgenError(self.loc_of(node), message)

    # -- module statements ---------------------------------------------------
    def read(self, module: cst.Module) -> ModuleScope:
        self._later_functions = {s.name.value for s in module.body if isinstance(s, cst.FunctionDef)}
        for stmt in module.body:
            if isinstance(stmt, cst.FunctionDef):
                self.function(stmt)
            elif isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    self.small_statement(small)
            elif isinstance(stmt, cst.If) and is_main_guard(stmt):
                continue  # `if __name__ == "__main__":` runs only in CPython
            else:
                raise self.error(stmt, "this statement is not supported at module level (only "
                                       "imports, constants and function definitions; put code in "
                                       "a function)")
        return self.scope

    def not_a_constant(self, node: cst.CSTNode, local: str) -> None:
        """An import may not rebind a module constant's name (CPython's later binding wins)."""
        if local in self.scope.constants:
            from .diagnostics import Note
            raise AdgenError(self.loc_of(node), f"'{local}' is a module constant and cannot be "
                             "imported too (use another name)",
                             [Note(self.scope.constants[local].loc, "defined here")])

    def small_statement(self, small: cst.BaseSmallStatement) -> None:
        if isinstance(small, cst.Import):
            for alias in small.names:
                name = _dotted(alias.name)
                local = alias.asname.name.value if alias.asname else name  # type: ignore[union-attr]
                self.not_a_constant(alias, local)
                if name == "math":
                    self.scope.modules[local] = "math"
                elif name == "numpy":
                    self.scope.modules[local] = "numpy"
                elif name in ("adgen", "adgen.lang"):
                    self.scope.adgen_module = self.scope.adgen_module or local == "adgen"
                    continue
                else:
                    raise self.error(alias, f"import of '{name}' is not supported "
                                            "(import math, numpy or names from adgen)")
        elif isinstance(small, cst.ImportFrom):
            mod = _dotted(small.module) if small.module else ""
            if small.relative:
                raise self.error(small, "relative imports are not supported (import math, numpy "
                                        "or names from adgen)")
            if mod == "__future__":
                return
            if isinstance(small.names, cst.ImportStar):
                raise self.error(small, f"'from {mod} import *' is not supported (name the imports)")
            for alias in small.names:
                name = _dotted(alias.name)
                local = alias.asname.name.value if alias.asname else name  # type: ignore[union-attr]
                self.not_a_constant(alias, local)
                if mod in ("adgen", "adgen.lang"):
                    if name not in ADGEN_NAMES:
                        raise self.error(alias, f"adgen has no name '{name}' "
                                                f"(it provides {', '.join(sorted(ADGEN_NAMES))})")
                    if local != name:
                        raise self.error(alias, "renaming adgen names is not supported "
                                                f"(write from adgen import {name})")
                    self.scope.from_adgen.add(name)
                elif mod in ("math", "numpy"):
                    if not _module_has(mod, name):
                        raise self.error(alias, f"{mod} has no name '{name}' (CPython raises "
                                                "ImportError here: import a name it defines)")
                    self.scope.imported[local] = (mod, name)
                elif mod == "typing":
                    continue
                else:
                    raise self.error(small.module or small,  # type: ignore[arg-type]
                                     f"import from '{mod}' is not supported "
                                     "(import from math, numpy or adgen)")
        elif isinstance(small, (cst.Assign, cst.AnnAssign)):
            self.constant(small)
        elif isinstance(small, cst.Expr) and isinstance(small.value, cst.SimpleString):
            return  # module docstring
        elif isinstance(small, cst.Pass):
            return
        else:
            raise self.error(small, "this statement is not supported at module level (only "
                                    "imports, constants and function definitions; put code in "
                                    "a function)")

    def constant(self, node: cst.Assign | cst.AnnAssign) -> None:
        if isinstance(node, cst.Assign):
            if len(node.targets) != 1 or not isinstance(node.targets[0].target, cst.Name):
                raise self.error(node, "this module-level assignment is not supported (a module "
                                       "constant is one name assigned a number)")
            target = node.targets[0].target
            value_node = node.value
        else:
            if not isinstance(node.target, cst.Name) or node.value is None:
                raise self.error(node, "this module-level assignment is not supported (a module "
                                       "constant is one name assigned a number)")
            target = node.target
            value_node = node.value
        name = target.value
        if name in self._later_functions:
            raise self.error(target, f"'{name}' is a function of this module and cannot be a "
                                     "module constant too (use another name)")
        if name in self.scope.modules or name in self.scope.imported:
            raise self.error(target, f"'{name}' is imported and cannot be a module constant too "
                                     "(use another name)")
        if name in self.scope.constants:
            prev = self.scope.constants[name]
            from .diagnostics import Note
            raise AdgenError(self.loc_of(target), f"module constant '{name}' is assigned twice "
                             "(module-level names must not change)",
                             [Note(prev.loc, f"'{name}' first assigned here")])
        value = self.const_expr(value_node)
        if isinstance(value, int) and not isinstance(value, bool) \
                and not -2 ** 63 <= value <= 2 ** 63 - 1:
            raise self.error(value_node, "this integer constant does not fit in 64 bits (integers "
                                         "are 64-bit; write a float, e.g. 1e30)")
        if isinstance(value, bool):
            t: ScalarType = BOOL
        elif isinstance(value, int):
            t = I64
        else:
            t = self.options.float_type
        self.scope.constants[name] = Constant(value, t, self.loc_of(target))

    def const_expr(self, node: cst.BaseExpression) -> float | int | bool:
        """Evaluate a module constant's initialiser: numbers, names, + - * / // % **."""
        if isinstance(node, cst.Integer):
            return int(node.evaluated_value)
        if isinstance(node, cst.Float):
            return float(node.evaluated_value)
        if isinstance(node, cst.Name):
            if node.value in ("True", "False"):
                return node.value == "True"
            if node.value in self.scope.constants:
                return self.scope.constants[node.value].value
            if node.value in self.scope.imported and self.scope.imported[node.value] in CONSTANTS:
                return CONSTANTS[self.scope.imported[node.value]]
            raise self.error(node, f"unknown name '{node.value}' in a module constant "
                                   "(constants may use numbers and earlier constants)")
        if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name):
            mod = self.scope.modules.get(node.value.value)
            if mod is not None and (mod, node.attr.value) in CONSTANTS:
                return CONSTANTS[(mod, node.attr.value)]
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)):
            v = self.const_expr(node.expression)
            return -v if isinstance(node.operator, cst.Minus) else +v
        if isinstance(node, cst.BinaryOperation):
            a, b = self.const_expr(node.left), self.const_expr(node.right)
            ops = {cst.Add: lambda: a + b, cst.Subtract: lambda: a - b, cst.Multiply: lambda: a * b,
                   cst.Divide: lambda: a / b, cst.FloorDivide: lambda: a // b,
                   cst.Modulo: lambda: a % b, cst.Power: lambda: a ** b}
            fn = ops.get(type(node.operator))
            if isinstance(node.operator, cst.Power) and isinstance(a, int) and isinstance(b, int) \
                    and abs(a) > 1 and b > 64:  # do not compute a huge integer
                raise self.error(node, "this integer constant does not fit in 64 bits (integers "
                                       "are 64-bit; write a float, e.g. 1e30)")
            if fn is not None:
                try:
                    return fn()
                except (ZeroDivisionError, OverflowError) as exc:
                    why = str(exc) if isinstance(exc, ZeroDivisionError) else "the result is too large"
                    raise self.error(node, f"cannot evaluate this constant: {why} (module "
                                           "constants must evaluate to a number)") from None
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            raise self.error(node, "module constants must be numeric literals or arithmetic on "
                                   "them (compute other values inside a function)")
        raise self.error(node, "this module constant is not supported (module constants must be "
                               "numeric literals or arithmetic on them)")

    # -- functions ------------------------------------------------------------
    def function(self, node: cst.FunctionDef) -> None:
        name = node.name.value
        if name in self.scope.functions:
            from .diagnostics import Note
            raise AdgenError(self.loc_of(node.name), f"function '{name}' is defined twice "
                                                     "(rename one of them)",
                             [Note(self.scope.functions[name].loc, "first defined here")])
        problem = function_name_problem(name, set(self.scope.functions) | self._later_functions,
                                        self.module_name)
        if problem is not None:
            raise self.error(node.name, f"function name '{name}' cannot be used in the generated C: "
                                        f"{problem} (rename the function)")
        params = []
        for p in node.params.params:
            if p.annotation is None:
                raise self.error(p, f"parameter '{p.name.value}' needs a type annotation "
                                    "(e.g. x: float or a: Array[f64])")
            params.append(Param(p.name.value, self.annotation(p.annotation.annotation),
                                self.loc_of(p.name)))
        if node.returns is None:
            raise self.error(node.name, f"function '{name}' needs a return annotation "
                                        "(e.g. -> float, -> tuple[float, float] or -> None)")
        results, is_tuple = self.return_annotation(node.returns.annotation)
        sig = Signature(name, params, results, is_tuple, self.loc_of(node.name), node)
        dec = external_decorator(node)
        if dec is not None:
            sig.external = read_external(self, sig, dec)
        for dec in node.decorators:  # the fence lets only @custom_vjp(g), @custom_jvp(g) and
            if is_external_decorator(dec):  # @external through
                continue
            from .fence import custom_derivative
            found = custom_derivative(dec)
            assert found is not None
            if found[0] == "custom_jvp":
                sig.custom_tangent = self.custom_tangent(sig, dec)
            else:
                sig.custom_adjoint = self.custom_adjoint(sig, dec)
        self.scope.functions[name] = sig

    def require_decorator_import(self, call: cst.Call, name: str) -> None:
        """``@name(...)`` needs ``from adgen import name``, ``@adgen.name(...)`` ``import
        adgen``: CPython evaluates the decorator."""
        if isinstance(call.func, cst.Name):
            self.scope.require_adgen(name, lambda msg: self.error(call.func, msg))
        elif not self.scope.adgen_module:
            raise self.error(call.func, "'adgen' is not imported (add 'import adgen': CPython "
                                        "runs the module too)")

    def derivative_function(self, sig: Signature, dec: cst.Decorator, kind: str,
                            what: str) -> tuple[str, Signature, cst.BaseExpression]:
        """The function ``g`` of ``@custom_vjp(g)`` / ``@custom_jvp(g)``: imported, and a
        function of the module defined before ``sig``."""
        from .fence import custom_derivative
        call = dec.decorator
        assert isinstance(call, cst.Call)
        self.require_decorator_import(call, kind)
        found = custom_derivative(dec)
        assert found is not None
        name = found[1]
        arg = call.args[0].value
        g = self.scope.functions.get(name)
        if g is None:
            raise self.error(arg, f"the {what} '{name}' must be a function of this module "
                                  f"defined before '{sig.name}' (the decorator runs when "
                                  f"'{sig.name}' is defined)")
        return name, g, arg

    def custom_tangent(self, sig: Signature, dec: cst.Decorator) -> str:
        """Check ``@custom_jvp(g)``: ``g`` has the signature of ``sig``'s tangent with every
        float parameter and result differentiated (``f_d``'s): each parameter followed by its
        tangent if it is a float (scalar or array); returning the results, then the tangents
        of the float results."""
        from .diagnostics import Note
        name, g, arg = self.derivative_function(sig, dec, "custom_jvp", "tangent")
        want: list[tuple[str, Type]] = []
        for p in sig.params:
            want.append((p.name, p.type))
            if isinstance(p.type, ScalarType) and p.type.is_float or \
                    isinstance(p.type, ArrayType) and p.type.elem.is_float:
                want.append((p.name + "d", p.type))
        returns = list(sig.results) + [t for t in sig.results
                                       if isinstance(t, ScalarType) and t.is_float]
        expected = ", ".join(f"{w}: {_spell(t)}" for w, t in want)
        ret = "tuple[" + ", ".join(_spell(t) for t in returns) + "]"
        if not any(isinstance(t, ScalarType) and t.is_float for t in sig.results):
            raise AdgenError(self.loc_of(arg), f"'{sig.name}' returns no float, so it has no "
                                               f"tangent to give (a function with @custom_jvp "
                                               "returns a float or a tuple with floats)")
        got = [p.type for p in g.params]
        if got != [t for _, t in want] or g.results != returns or not g.returns_tuple:
            raise AdgenError(self.loc_of(arg), f"'{name}' does not have the signature of a "
                                               f"tangent of '{sig.name}' (write {name}({expected})"
                                               f" -> {ret}: the values, then the tangents of "
                                               "the float results)",
                             [Note(g.loc, f"'{name}' defined here")])
        return name

    def custom_adjoint(self, sig: Signature, dec: cst.Decorator) -> str:
        """Check ``@custom_vjp(g)``: ``g`` is defined before ``sig`` and has the signature of
        an adjoint of ``sig``: each parameter, followed by its adjoint array for a float array;
        then the adjoint of each float result; returning the adjoints of the float scalar
        parameters (None, one float or a tuple)."""
        from .diagnostics import Note
        name, g, arg = self.derivative_function(sig, dec, "custom_vjp", "adjoint")
        want: list[tuple[str, Type]] = []
        for p in sig.params:
            want.append((p.name, p.type))
            if isinstance(p.type, ArrayType) and p.type.elem.is_float:
                want.append((p.name + "b", p.type))
        for k, t in enumerate(sig.results):
            if isinstance(t, ScalarType) and t.is_float:
                want.append(("retb" if len(sig.results) == 1 else f"ret{k}b", t))
        returns = [p.type for p in sig.params
                   if isinstance(p.type, ScalarType) and p.type.is_float]
        expected = ", ".join(f"{w}: {_spell(t)}" for w, t in want)
        ret = "None" if not returns else _spell(returns[0]) if len(returns) == 1 else \
            "tuple[" + ", ".join(_spell(t) for t in returns) + "]"
        shape = (f"{name}({expected}) -> {ret}: the adjoints of array parameters incremented in "
                 "place, those of float scalar parameters returned")
        got = [p.type for p in g.params]
        if got != [t for _, t in want] or g.results != returns or \
                (len(returns) > 1) != g.returns_tuple:
            raise AdgenError(self.loc_of(arg), f"'{name}' does not have the signature of an "
                                               f"adjoint of '{sig.name}' (write {shape})",
                             [Note(g.loc, f"'{name}' defined here")])
        return name

    def return_annotation(self, node: cst.BaseExpression) -> tuple[list[Type], bool]:
        if isinstance(node, cst.Name) and node.value == "None":
            return [], False
        if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name) \
                and node.value.value in ("tuple", "Tuple"):
            types = [self.scalar_annotation(e.slice.value) for e in node.slice  # type: ignore[union-attr]
                     if isinstance(e.slice, cst.Index)]
            return types, True
        t = self.annotation(node)
        if isinstance(t, ArrayType):
            raise self.error(node, "returning an array is not supported "
                                   "(write into an array parameter instead)")
        return [t], False

    def scalar_annotation(self, node: cst.BaseExpression) -> ScalarType:
        t = self.annotation(node)
        if not isinstance(t, ScalarType):
            raise self.error(node, "an array in a tuple return is not supported (tuple returns "
                                   "hold scalars only; write arrays into array parameters)")
        return t

    def annotation(self, node: cst.BaseExpression) -> Type:
        if isinstance(node, cst.Name) and node.value in SCALAR_NAMES:
            if node.value in ADGEN_NAMES:
                self.scope.require_adgen(node.value, lambda msg: self.error(node, msg))
            return self.scalar(SCALAR_NAMES[node.value])
        if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name) \
                and node.value.value == "Array":
            self.scope.require_adgen("Array", lambda msg: self.error(node.value, msg))
            elems = [e.slice for e in node.slice]
            if not all(isinstance(e, cst.Index) for e in elems) or not 1 <= len(elems) <= 2:
                raise self.error(node, "this Array annotation is not supported (write Array[f64] "
                                       "or Array[f64, N] with N from 1 to 4)")
            elem = self.annotation(elems[0].value)  # type: ignore[union-attr]
            if isinstance(elem, ArrayType):
                raise self.error(elems[0], "arrays of arrays are not supported (write "
                                           "Array[f64, 2] for a 2-d array)")
            if not isinstance(elem, ScalarType) or elem.is_bool:
                raise self.error(elems[0], f"arrays of {elem} are not supported (array elements "
                                           "must be f64, f32, i64 or i32)")
            ndim = 1
            if len(elems) == 2:
                nd = elems[1].value  # type: ignore[union-attr]
                if not isinstance(nd, cst.Integer) or not 1 <= int(nd.evaluated_value) <= 4:
                    raise self.error(nd, "this number of dimensions is not supported (the number "
                                         "of dimensions must be 1, 2, 3 or 4)")
                ndim = int(nd.evaluated_value)
            return ArrayType(elem, ndim)
        if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and \
                node.value.value == "adgen" and node.attr.value in ADGEN_NAMES:
            raise self.error(node, f"adgen.{node.attr.value} is not supported (import the name, "
                                   f"from adgen import {node.attr.value}, and write "
                                   f"{node.attr.value})")
        raise self.error(node, "unsupported type annotation (use float, f64, f32, int, i64, i32, "
                               "bool or Array[f64, N])")

    def scalar(self, name: str) -> ScalarType:
        return {"f64": self.options.float_type, "f32": F32, "i64": I64, "i32": I32,
                "bool": BOOL}[name]


def result_names(sig: Signature) -> list[str]:
    """``return`` for one result, ``ret0``, ``ret1``... for a tuple; a trailing ``_`` when a
    parameter has the name."""
    names = ["return"] if len(sig.results) == 1 else [f"ret{i}" for i in range(len(sig.results))]
    params = {p.name for p in sig.params}
    for k, n in enumerate(names):
        while n in params:
            n += "_"
        names[k] = n
    return names


def _spell(t: Type) -> str:
    if isinstance(t, ArrayType):
        return f"Array[{t.elem.name}]" if t.ndim == 1 else f"Array[{t.elem.name}, {t.ndim}]"
    return str(t)


def _module_has(mod: str, name: str) -> bool:
    """Whether ``from mod import name`` works in CPython (``mod``: math or numpy)."""
    import importlib

    return hasattr(importlib.import_module(mod), name)


def _dotted(node: cst.BaseExpression) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return _dotted(node.value) + "." + node.attr.value
    return "?"


def is_main_guard(node: cst.If) -> bool:
    t = node.test
    return (isinstance(t, cst.Comparison) and isinstance(t.left, cst.Name)
            and t.left.value == "__name__")


