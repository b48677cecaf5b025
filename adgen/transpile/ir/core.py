"""The IR: SSA values, ops, single-block regions, functions and modules.

Control flow is structured, as in MLIR's scf dialect: ``If``, ``For`` and
``While`` own regions whose block arguments are the phi values (the
loop-carried variables) and whose terminators (``Yield``, ``Break``,
``Continue``, ``Condition``, ``Return``) pass values out.  Arrays are SSA
values too (pointers); their elements are memory, read by ``Load`` and
written by ``Store``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import ClassVar, final

from .types import ArrayType, ScalarType, Type


@dataclass(frozen=True, slots=True)
class Loc:
    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


NOWHERE = Loc("<generated>", 0, 0)


@dataclass(eq=False, slots=True)
class Value:
    type: Type
    name: str | None = None  # the source variable it came from, if any
    #: the op that defines it, or the region whose block argument it is
    owner: "Op | Region | None" = field(default=None, repr=False, compare=False)

    def __repr__(self) -> str:
        return f"Value({self.name or '_'}: {self.type})"


@dataclass(eq=False, slots=True)
class Region:
    """One block: arguments, then ops; the last op is a terminator."""

    args: list[Value] = field(default_factory=list)
    ops: list[Op] = field(default_factory=list)

    def __post_init__(self) -> None:
        for a in self.args:
            a.owner = self

    def add_arg(self, v: Value) -> Value:
        v.owner = self
        self.args.append(v)
        return v

    @property
    def terminator(self) -> Op | None:
        if self.ops and self.ops[-1].is_terminator:
            return self.ops[-1]
        return None


@dataclass(eq=False, slots=True)
class Op:
    operands: list[Value]
    results: list[Value]
    loc: Loc
    regions: list[Region] = field(default_factory=list)

    is_terminator: ClassVar[bool] = False
    #: no observable effect besides its results (may be CSE'd, removed if unused)
    is_pure: ClassVar[bool] = False
    mnemonic: ClassVar[str] = "op"

    def __post_init__(self) -> None:
        for r in self.results:
            r.owner = self

    @property
    def result(self) -> Value:
        assert len(self.results) == 1, self
        return self.results[0]

    def walk(self) -> Iterator[Op]:
        """This op and every op nested in its regions, in program order."""
        yield self
        for region in self.regions:
            for op in region.ops:
                yield from op.walk()


# --- scalar computation -------------------------------------------------


@final
@dataclass(eq=False, slots=True)
class Const(Op):
    value: float | int | bool = 0
    is_pure: ClassVar[bool] = True
    mnemonic: ClassVar[str] = "const"


@final
@dataclass(eq=False, slots=True)
class Prim(Op):
    """A primitive: arithmetic, comparison, logic, intrinsic (see prims.py)."""

    prim: str = ""
    is_pure: ClassVar[bool] = True
    mnemonic: ClassVar[str] = "prim"


@final
@dataclass(eq=False, slots=True)
class Cast(Op):
    is_pure: ClassVar[bool] = True
    mnemonic: ClassVar[str] = "cast"


# --- arrays --------------------------------------------------------------


@final
@dataclass(eq=False, slots=True)
class Dim(Op):
    axis: int = 0
    is_pure: ClassVar[bool] = True
    mnemonic: ClassVar[str] = "dim"


#: the ops that are functions of their operands alone (``is_pure``), for ``isinstance``
PURE_OPS = (Const, Prim, Cast, Dim)


@final
@dataclass(eq=False, slots=True)
class Load(Op):
    """operands: array, *indices."""

    mnemonic: ClassVar[str] = "load"


@final
@dataclass(eq=False, slots=True)
class Store(Op):
    """operands: array, *indices, value."""

    mnemonic: ClassVar[str] = "store"


@final
@dataclass(eq=False, slots=True)
class Zeros(Op):
    """A new local array of zeros; operands: the extents."""

    mnemonic: ClassVar[str] = "zeros"


# --- calls and checks ------------------------------------------------------


@final
@dataclass(eq=False, slots=True)
class Call(Op):
    callee: str = ""
    #: "checkpoint" (``# adgen: checkpoint`` on the statement): the adjoint runs the callee's
    #: taping forward sweep again just before its reverse sweep instead of taping it here
    directive: str = ""
    mnemonic: ClassVar[str] = "call"


@final
@dataclass(eq=False, slots=True)
class Assert(Op):
    message: str = ""
    mnemonic: ClassVar[str] = "assert"


# --- the tape of reverse mode ---------------------------------------------


@final
@dataclass(eq=False, slots=True)
class Push(Op):
    """Save operands[0] on the tape (forward sweep of an adjoint)."""

    mnemonic: ClassVar[str] = "push"


@final
@dataclass(eq=False, slots=True)
class Pop(Op):
    """Take the last saved value back from the tape (reverse sweep); LIFO with ``Push``."""

    mnemonic: ClassVar[str] = "pop"


# --- structured control flow -------------------------------------------


@final
@dataclass(eq=False, slots=True)
class If(Op):
    """operands: cond; regions: then, else; results: the values both yield."""

    mnemonic: ClassVar[str] = "if"


@final
@dataclass(eq=False, slots=True)
class For(Op):
    """operands: start, stop, step, *inits; region body(iv, *carried)."""

    #: "store" / "recompute" / "checkpoint": how the adjoint gets the body's values back
    #: (``# adgen: ...``)
    directive: str = ""
    #: a ``prange``: iterations are independent, each carried value is a sum (``s = s + e``
    #: with ``s`` used only there), so they may run in any order or at once
    parallel: bool = False
    #: each iteration pops all it pushes (the adjoint of a prange that computes its body
    #: again): threads may each have their own tape
    iteration_tape: bool = False
    #: a comment the emitter writes above the loop (what the adjoint loop of a prange
    #: marked ``# adgen: forward-in-reverse`` computes)
    note: str = ""
    mnemonic: ClassVar[str] = "for"

    @property
    def inits(self) -> list[Value]:
        return self.operands[3:]

    @property
    def body(self) -> Region:
        return self.regions[0]


@final
@dataclass(eq=False, slots=True)
class While(Op):
    """operands: *inits; regions: cond(*carried) -> Condition, body(*carried)."""

    directive: str = ""
    mnemonic: ClassVar[str] = "while"

    @property
    def inits(self) -> list[Value]:
        return self.operands

    @property
    def body(self) -> Region:
        return self.regions[1]


# --- terminators ---------------------------------------------------------


@final
@dataclass(eq=False, slots=True)
class Yield(Op):
    """End of an if branch (its results) or of a loop body (next carried)."""

    is_terminator: ClassVar[bool] = True
    mnemonic: ClassVar[str] = "yield"


@final
@dataclass(eq=False, slots=True)
class Condition(Op):
    """End of a while's cond region: operands [cond]."""

    is_terminator: ClassVar[bool] = True
    mnemonic: ClassVar[str] = "condition"


@final
@dataclass(eq=False, slots=True)
class Break(Op):
    """Leave the innermost loop; operands: its results."""

    is_terminator: ClassVar[bool] = True
    mnemonic: ClassVar[str] = "break"


@final
@dataclass(eq=False, slots=True)
class Continue(Op):
    """Next iteration of the innermost loop; operands: the carried values."""

    is_terminator: ClassVar[bool] = True
    mnemonic: ClassVar[str] = "continue"


@final
@dataclass(eq=False, slots=True)
class Return(Op):
    is_terminator: ClassVar[bool] = True
    mnemonic: ClassVar[str] = "return"


LOOPS = (For, While)


# --- functions and modules -----------------------------------------------


@dataclass(eq=False, slots=True)
class Result:
    """One thing a function returns: a value of the return tuple or a tangent of one."""

    name: str
    type: Type


@dataclass(frozen=True, slots=True)
class External:
    """A C function given by the user (``@external("f.c", name=..., tangent=..., adjoint=...)``
    on a module function): the module function calls ``name``; derivatives call ``tangent``
    and ``adjoint``, whose C signatures are those adgen gives ``f_d`` and ``f_b`` when every
    float parameter and result is differentiated."""

    #: the Python function it stands for, and where its decorator is
    function: str
    loc: Loc
    #: the C file that defines the functions: as written (relative to the module) and resolved
    source: str
    path: str
    name: str
    tangent: str = ""
    adjoint: str = ""


@dataclass(eq=False, slots=True)
class Function:
    name: str
    body: Region  # body.args are the parameters, in C order
    results: list[Result]
    loc: Loc
    #: the primal function this one differentiates (its own name for a primal)
    primal: str = ""
    mode: str = "primal"  # primal | forward | vector-forward | reverse | vector-reverse | hvp
    #: C parameter name of each body arg (source names, ``xd`` for tangents)
    param_names: list[str] = field(default_factory=list)
    #: for derivatives: which body arg / result each tangent belongs to
    tangent_of: dict[str, str] = field(default_factory=dict)
    returns_tuple: bool = False
    #: a primal helper emitted as a ``static`` function in a derivative file
    is_static: bool = False
    #: vector modes: the parameter that holds the number of directions
    nbdirs: str | None = None
    #: reverse modes: results that are added to ``*name`` (scalar adjoints of parameters, the
    #: C pointer parameter right after the primal one) instead of stored
    increments: list[str] = field(default_factory=list)
    #: reverse modes: "local" (the function owns a tape) or "param" (it takes the caller's)
    tape: str | None = None
    #: ``@custom_vjp(g)``: the module function that is this function's adjoint
    custom_adjoint: str = ""
    #: ``@custom_jvp(g)``: the module function that is this function's tangent
    custom_tangent: str = ""
    #: hvp (the tangent of an adjoint): the adjoint's own ``tangent_of`` (``xb`` -> ``x``)
    adjoint_of: dict[str, str] = field(default_factory=dict)
    #: tangent modes: the tangents (``yd``) of arrays the function writes whose contents reach
    #: no dependent (left out of ``--of``; in an hvp, primal arrays no adjoint needs): where
    #: the array gets a value no dependent needs, its tangent gets zero.  Adjoint modes: the
    #: adjoints (``yb``) of such arrays, whose value on entry (the adjoint of the contents on
    #: exit) the adjoint does not read
    unneeded_tangents: list[str] = field(default_factory=list)
    #: a declaration of a C function the user provides (``@external``): no body, the
    #: generated code only calls it
    external: External | None = None

    @property
    def params(self) -> list[Value]:
        return self.body.args

    def walk(self) -> Iterator[Op]:
        for op in self.body.ops:
            yield from op.walk()


@dataclass(frozen=True, slots=True)
class Nested:
    """A derivative taken inside the module: ``grad(f, argnums=...)(...)`` or
    ``jvp(f, primals, tangents)``.  The frontend lowers it to a call of the function ``name``,
    which ``ad.nested`` then builds from the derivative of ``f``."""

    name: str
    kind: str  # "grad" | "jvp"
    callee: str
    #: grad: the parameters differentiated, in the order of the results; jvp: every float
    #: scalar parameter (the call passes their tangents after the arguments)
    wrt: tuple[int, ...]
    loc: Loc


@dataclass(eq=False, slots=True)
class Module:
    name: str
    path: str
    functions: list[Function]
    source_lines: list[str] = field(default_factory=list)
    #: the derivatives taken inside the module, by the name of the function each becomes
    nested: dict[str, Nested] = field(default_factory=dict)

    @property
    def file_name(self) -> str:
        """The module's file name, as generated comments and messages name it."""
        return os.path.basename(self.path)

    def function(self, name: str) -> Function:
        for fn in self.functions:
            if fn.name == name:
                return fn
        raise KeyError(name)


def is_array(v: Value) -> bool:
    return isinstance(v.type, ArrayType)


def is_float_value(v: Value) -> bool:
    return isinstance(v.type, ScalarType) and v.type.is_float
