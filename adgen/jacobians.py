"""Jacobians from the vector modes: ``adgen.jacobian(f, args)``.

Forward mode (``f.jvp_vec``, the generated ``f_dv``) computes ``J S`` for a seed
matrix ``S`` with one column per direction; reverse mode (``f.vjp_vec``,
``f_bv``) computes ``W^T J``.  Dense, ``S`` (or ``W``) is the identity: one
direction per column (row) of the Jacobian.  With a sparsity pattern, columns
that have no nonzero in a common row (structurally orthogonal columns, Curtis,
Powell and Reid) share a direction: a greedy coloring gives each column a
color, the seed has one direction per color, and each nonzero ``J[i, j]`` is
read back from ``(J S)[i, color(j)]``.  Reverse mode colors rows the same way.

    m = adgen.load("stencil.py", modes=("vector-forward", "vector-reverse"))
    jac = adgen.jacobian(m.laplace, (u, y), wrt=["u"], sparsity=pattern)
    print(jac)   # jacobian of laplace: 200 x 200, forward mode, 3 sweeps (compressed ...)

Layout: rows are the differentiated outputs flattened in order (the return
value, or each float element of a tuple return, then the final contents of
each array the function writes, in argument order); columns are the
differentiated inputs (values on entry) flattened in argument order; arrays
flatten in C order.  ``Jacobian.rows``/``.columns`` label every row and
column.  The caller's arguments are never modified: every call gets fresh
copies of the arrays the function writes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .api import option_list
from .binding import AdgenFunction, check_array, check_overlap
from .transpile.ir.types import ArrayType

#: a row or column label: the argument name (or "return") and the index of the entry
Label = tuple[str, tuple[int, ...]]

VECTOR_MODES = {"forward": "vector-forward", "reverse": "vector-reverse"}


@dataclass(frozen=True)
class _Block:
    """The rows or columns of one argument or one returned value."""

    name: str  # the argument's name, or "return"
    index: int  # the argument's position, or the result's position in the return value
    shape: tuple[int, ...]  # () for a scalar
    offset: int
    labels: tuple[Label, ...]

    @property
    def size(self) -> int:
        return len(self.labels)

    @property
    def span(self) -> slice:
        return slice(self.offset, self.offset + self.size)


@dataclass(eq=False)
class Jacobian:
    """What ``adgen.jacobian`` returns.  ``print(jac)`` prints ``jac.summary()``."""

    function: str
    #: the dense Jacobian, ``len(rows) x len(columns)``, float64
    matrix: np.ndarray
    #: one label per row: ``("return", ())`` for a returned float, ``("return", (k,))`` for
    #: element k of a tuple return, ``("y", (i,))`` for ``y[i]`` on exit
    rows: list[Label]
    #: one label per column: ``("a", ())`` for a scalar argument, ``("x", (i,))`` for ``x[i]``
    #: on entry, ``("W", (i, j))`` for ``W[i, j]``
    columns: list[Label]
    #: "forward" (``jvp_vec``, directions seed columns) or "reverse" (``vjp_vec``, rows)
    mode: str
    #: the number of vector directions used (the colors when compressed)
    sweeps: int
    #: compressed seeding: the color of each column (forward) or row (reverse), -1 for one
    #: that the pattern leaves empty; None when dense
    colors: np.ndarray | None
    #: the number of vector calls (more than one when ``chunk`` splits the directions)
    calls: int
    #: what the function returns at ``args``
    value: Any

    @property
    def shape(self) -> tuple[int, int]:
        return (len(self.rows), len(self.columns))

    def summary(self) -> str:
        """``jacobian of f: 200 x 200, forward mode, 3 sweeps (compressed from 200 columns by
        a 3-coloring)``."""
        n_rows, n_cols = self.shape
        what = "column" if self.mode == "forward" else "row"
        count = n_cols if self.mode == "forward" else n_rows
        if self.colors is None:
            how = f"one per {what}"
        elif self.sweeps == 0:
            how = "the sparsity pattern has no nonzeros"
        else:
            how = f"compressed from {count} {what}s by a {self.sweeps}-coloring"
        text = (f"jacobian of {self.function}: {n_rows} x {n_cols}, {self.mode} mode, "
                f"{self.sweeps} sweep{'' if self.sweeps == 1 else 's'} ({how})")
        if self.calls > 1:
            text += f" in {self.calls} calls"
        return text

    def __str__(self) -> str:
        return self.summary()

    def __repr__(self) -> str:
        return f"<{self.summary()}>"


# -- what the function differentiates ---------------------------------------------------------

@dataclass(frozen=True)
class _Derivatives:
    """Which arguments and results the loaded vector modes differentiate."""

    modes: tuple[str, ...]  # "forward" and/or "reverse", the vector modes loaded
    inputs: tuple[str, ...]  # argument names, in argument order
    results: tuple[int, ...]  # positions of differentiated results in the return value
    written: frozenset[str]  # arrays the function writes
    #: written arrays whose contents on exit are not differentiated (outside the module's --of,
    #: and no dependent reads them): no rows
    unneeded: frozenset[str]
    returns_tuple: bool
    n_results: int


def _derivatives(f: AdgenFunction) -> _Derivatives:
    # AdgenFunction has no public description of what each mode differentiates, so read it
    # from the generated functions it calls (their IR: ``tangent_of`` names, for each
    # derivative parameter and result, the primal it belongs to)
    calls = f._calls  # noqa: SLF001
    primal = calls["primal"]
    modes = tuple(m for m, full in VECTOR_MODES.items() if full in calls)
    inputs = set(f.param_names)
    results = {r.name for r in primal.fn.results}
    unneeded: set[str] = set()
    for m in modes:
        fn = calls[VECTOR_MODES[m]].fn
        of = set(fn.tangent_of.values())
        inputs &= of
        results &= of
        unneeded |= {fn.tangent_of[t] for t in fn.unneeded_tangents}
    return _Derivatives(
        modes, tuple(n for n in f.param_names if n in inputs),
        tuple(k for k, r in enumerate(primal.fn.results) if r.name in results),
        frozenset(n for n in primal.written if n in f.param_names), frozenset(unneeded),
        bool(primal.fn.returns_tuple), len(primal.fn.results))


def _names(value: str | Sequence[str] | None, what: str) -> list[str] | None:
    return option_list(value, what, comma=True, empty=True)  # _select: "selects nothing"


def _select(what: str, given: list[str] | None, available: list[str], fname: str) -> set[str]:
    if given is None:
        return set(available)
    for name in given:
        if name not in available:
            kind = "a differentiated argument" if what == "wrt" else \
                "a differentiated output ('return' or an array the function writes)"
            raise ValueError(f"jacobian of {fname}: {what} names '{name}', which is not {kind} "
                             f"(choose from {', '.join(available) or 'nothing'})")
    if not given:
        raise ValueError(f"jacobian of {fname}: {what} selects nothing")
    return set(given)


def _shape_of(value: Any) -> tuple[int, ...]:
    return tuple(value.shape) if isinstance(value, np.ndarray) else ()


def _labels(name: str, shape: tuple[int, ...]) -> tuple[Label, ...]:
    return tuple((name, tuple(int(i) for i in idx)) for idx in np.ndindex(*shape))


def _layout(f: AdgenFunction, d: _Derivatives, args: Sequence[Any], wrt: list[str] | None,
            of: list[str] | None) -> tuple[list[_Block], list[_Block]]:
    """The column blocks (inputs) and row blocks (outputs), in order."""
    outputs = (["return"] if d.results else []) + [n for n in d.inputs if n in d.written
                                                   and n not in d.unneeded]
    use_in = _select("wrt", wrt, list(d.inputs), f.name)
    use_out = _select("of", of, outputs, f.name)
    columns: list[_Block] = []
    offset = 0
    for i, name in enumerate(f.param_names):
        if name in use_in:
            shape = _shape_of(args[i])
            columns.append(_Block(name, i, shape, offset, _labels(name, shape)))
            offset += columns[-1].size
    rows: list[_Block] = []
    offset = 0
    if "return" in use_out:
        for k in d.results:
            labels: tuple[Label, ...] = (("return", (k,) if d.returns_tuple else ()),)
            rows.append(_Block("return", k, (), offset, labels))
            offset += 1
    for i, name in enumerate(f.param_names):
        if name in use_out and name != "return":
            shape = _shape_of(args[i])
            rows.append(_Block(name, i, shape, offset, _labels(name, shape)))
            offset += rows[-1].size
    return columns, rows


# -- sparsity patterns and coloring -----------------------------------------------------------

def _pattern(sparsity: Any, shape: tuple[int, int], describe: str) -> tuple[np.ndarray, np.ndarray]:
    """The (row, column) indices of the structural nonzeros, sorted and without repeats, from a
    boolean matrix or from (row, column) pairs (a sequence, or an integer array of shape
    (k, 2))."""
    n_rows, n_cols = shape
    if isinstance(sparsity, np.ndarray) and sparsity.dtype == np.bool_:
        if sparsity.shape != shape:
            raise ValueError(f"sparsity pattern has shape {sparsity.shape}, but the Jacobian "
                             f"is {n_rows} x {n_cols} ({describe})")
        r, c = np.nonzero(sparsity)
        return r.astype(np.intp), c.astype(np.intp)
    usage = ("sparsity must be a boolean array of shape (rows, columns) or a sequence of "
             "(row, column) pairs of integers")
    if isinstance(sparsity, (str, bytes)) or not isinstance(sparsity, (Sequence, np.ndarray)):
        raise TypeError(f"{usage}, got {type(sparsity).__name__}")
    try:
        pairs = np.asarray(sparsity)
    except ValueError:  # ragged
        raise ValueError(f"{usage}; cannot read {sparsity!r:.60}") from None
    if pairs.size == 0:
        pairs = np.zeros((0, 2), dtype=np.intp)
    if pairs.ndim != 2 or pairs.shape[1] != 2 or not np.issubdtype(pairs.dtype, np.integer):
        hint = " (a pattern matrix must have dtype bool)" if isinstance(sparsity, np.ndarray) \
            else ""
        raise ValueError(f"{usage}{hint}; got an array of shape {pairs.shape} and dtype "
                         f"{pairs.dtype}")
    if isinstance(sparsity, np.ndarray) and pairs.shape == shape and np.isin(pairs, (0, 1)).all():
        import warnings

        from .api import AdgenWarning
        warnings.warn(f"sparsity: an integer array of the Jacobian's shape ({n_rows} x {n_cols}) "
                      "holding only 0 and 1 is read as (row, column) pairs; a pattern matrix "
                      "must have dtype bool (pass sparsity.astype(bool)), and pairs meant as "
                      "pairs pass as a list without this warning (sparsity.tolist())",
                      AdgenWarning,
                      stacklevel=3)
    outside = (pairs[:, 0] < 0) | (pairs[:, 0] >= n_rows) | (pairs[:, 1] < 0) | \
        (pairs[:, 1] >= n_cols)
    if outside.any():
        r, c = (int(v) for v in pairs[np.argmax(outside)])
        raise ValueError(f"sparsity pair ({r}, {c}) is outside the {n_rows} x {n_cols} "
                         f"Jacobian ({describe})")
    flat = np.unique(pairs[:, 0].astype(np.intp) * n_cols + pairs[:, 1].astype(np.intp))
    return flat // n_cols, flat % n_cols


def greedy_coloring(rows: np.ndarray, cols: np.ndarray, n_cols: int) -> np.ndarray:
    """Colors of the columns of the pattern with nonzeros at ``(rows[k], cols[k])`` such that
    two columns with a nonzero in a common row get different colors; first fit, in column
    order.  A column without nonzeros gets -1.  (Color rows by passing ``cols, rows``.)

    A tridiagonal pattern gets colors 0, 1, 2, 0, 1, 2, ...
    """
    order = np.lexsort((rows, cols))
    rows, cols = rows[order], cols[order]
    starts = np.searchsorted(cols, np.arange(n_cols + 1))
    row_list = rows.tolist()
    used_in_row: dict[int, int] = {}  # row -> bit set of the colors of its columns so far
    colors = np.full(n_cols, -1, dtype=np.intp)
    for j in range(n_cols):
        mine = row_list[starts[j]:starts[j + 1]]
        if not mine:
            continue
        taken = 0
        for i in mine:
            taken |= used_in_row.get(i, 0)
        color = (~taken & (taken + 1)).bit_length() - 1  # the lowest color not taken
        bit = 1 << color
        for i in mine:
            used_in_row[i] = used_in_row.get(i, 0) | bit
        colors[j] = color
    return colors


# -- the sweeps ------------------------------------------------------------------------------

def _fresh(f: AdgenFunction, args: Sequence[Any], written: frozenset[str]) -> list[Any]:
    """The arguments with a new copy of each array the function writes."""
    return [a.copy() if n in written and isinstance(a, np.ndarray) else a
            for n, a in zip(f.param_names, args, strict=True)]


def _forward(f: AdgenFunction, args: Sequence[Any], d: _Derivatives, columns: list[_Block],
             rows: list[_Block], n_rows: int, seed: np.ndarray) -> tuple[Any, np.ndarray]:
    """``(value, J @ seed)`` from one ``jvp_vec`` call; ``seed`` is columns x directions."""
    k = seed.shape[1]
    call_args = _fresh(f, args, d.written)
    tangents: list[Any] = [None] * len(args)
    for b in columns:
        dtype = args[b.index].dtype if isinstance(args[b.index], np.ndarray) else np.float64
        tangents[b.index] = np.array(seed[b.span].reshape(b.shape + (k,)), dtype=dtype)
    for b in rows:  # a written array that is not a column: receive its tangent on exit
        if b.name != "return" and tangents[b.index] is None:
            tangents[b.index] = np.zeros(b.shape + (k,), dtype=args[b.index].dtype)
    value, tangent = f.jvp_vec(call_args, tangents)
    out = np.empty((n_rows, k))
    for b in rows:
        if b.name == "return":
            out[b.span] = (tangent[b.index] if d.returns_tuple else tangent).reshape(1, k)
        else:
            out[b.span] = tangents[b.index].reshape(b.size, k)
    return value, out


def _reverse(f: AdgenFunction, args: Sequence[Any], d: _Derivatives, columns: list[_Block],
             rows: list[_Block], n_cols: int, weight: np.ndarray) -> tuple[Any, np.ndarray]:
    """``(value, weight.T @ J)`` from one ``vjp_vec`` call; ``weight`` is rows x directions."""
    k = weight.shape[1]
    call_args = _fresh(f, args, d.written)
    bars: list[Any] = [None] * d.n_results
    out_bars: dict[str, np.ndarray] = {}
    for b in rows:
        if b.name == "return":
            bars[b.index] = np.ascontiguousarray(weight[b.offset])
        else:
            out_bars[b.name] = weight[b.span].reshape(b.shape + (k,))
    ybar = tuple(bars) if d.returns_tuple else (bars[0] if bars else None)
    value, grads = f.vjp_vec(call_args, ybar, out_bars)
    out = np.empty((k, n_cols))
    for b in columns:
        out[:, b.span] = np.reshape(np.asarray(grads[b.index], dtype=np.float64), (b.size, k)).T
    return value, out


def _chunks(n: int, chunk: int | None) -> list[slice]:
    step = n if chunk is None else chunk
    return [slice(a, min(a + step, n)) for a in range(0, n, step)]


def jacobian(f: AdgenFunction, args: Sequence[Any], *, wrt: str | Sequence[str] | None = None,
             of: str | Sequence[str] | None = None, sparsity: Any = None, mode: str = "auto",
             chunk: int | None = None) -> Jacobian:
    """The Jacobian of ``f`` (a function of a module loaded with ``"vector-forward"`` and/or
    ``"vector-reverse"``) at ``args`` (the full argument tuple, as for the call).

    - ``wrt``: argument names (columns; default every differentiated argument), ``of``:
      ``"return"`` and/or names of arrays the function writes (rows; default all).
    - ``mode``: ``"forward"`` (``jvp_vec``, one direction per column or color of columns),
      ``"reverse"`` (``vjp_vec``, one per row or color of rows) or ``"auto"``: forward when
      columns <= rows, else reverse; with ``sparsity``, the mode needing fewer colors (forward
      on a tie).  ``"auto"`` uses the only vector mode loaded when just one is.
    - ``sparsity``: the structural nonzeros, a boolean array of the Jacobian's shape or a
      sequence of ``(row, column)`` pairs; entries outside it are returned as 0.
    - ``chunk``: at most this many directions per vector call (default: all in one call; a
      module built with ``-DADGEN_NBDIRS=N`` takes N per call, the last padded with zeros).

    The caller's arrays are not modified (each call works on copies of the arrays ``f``
    writes).  Returns a ``Jacobian``; ``print`` it for a one-line summary.
    """
    if not isinstance(f, AdgenFunction):
        raise TypeError(f"jacobian: f must be a function of a module loaded with adgen.load, got "
                        f"{type(f).__name__}")
    if mode not in ("auto", "forward", "reverse"):
        raise ValueError(f"jacobian: mode must be 'auto', 'forward' or 'reverse', got {mode!r}")
    if chunk is not None and (isinstance(chunk, bool) or not isinstance(chunk, (int, np.integer))
                              or chunk < 1):
        raise ValueError(f"jacobian: chunk must be a positive integer, got {chunk!r}")
    if isinstance(args, (np.ndarray, str, bytes)) or not isinstance(args, Sequence):
        raise TypeError(f"jacobian of {f.name}: args must be the tuple of arguments, e.g. (x,), "
                        f"got {type(args).__name__}")
    args = tuple(args)
    if len(args) != len(f.param_names):
        raise TypeError(f"{f.name}() takes {len(f.param_names)} argument(s) "
                        f"({', '.join(f.param_names)}), got {len(args)}")
    d = _derivatives(f)
    if mode == "auto" and not d.modes:
        raise f.not_loaded("vector-forward", "vector-reverse")
    if mode != "auto" and mode not in d.modes:
        raise f.not_loaded(VECTOR_MODES[mode])
    arrays = {}
    for name, t, a in zip(f.param_names, f.param_types, args, strict=True):
        if isinstance(t, ArrayType):
            arrays[name] = check_array(name, a, t, name in d.written)
    check_overlap(arrays, set(d.written))

    columns, rows = _layout(f, d, args, _names(wrt, "wrt"), _names(of, "of"))
    row_labels = [lab for b in rows for lab in b.labels]
    col_labels = [lab for b in columns for lab in b.labels]
    n_rows, n_cols = len(row_labels), len(col_labels)

    colors: np.ndarray | None = None
    pattern: tuple[np.ndarray, np.ndarray] | None = None
    if sparsity is not None:
        def named(b: _Block) -> str:  # the entries of a returned tuple apart: return[k]
            return f"return[{b.index}]" if b.name == "return" and d.returns_tuple else b.name

        describe = (f"rows: {', '.join(f'{named(b)} ({b.size})' for b in rows) or 'none'}; "
                    f"columns: {', '.join(f'{b.name} ({b.size})' for b in columns) or 'none'}")
        pattern = _pattern(sparsity, (n_rows, n_cols), describe)
        pr, pc = pattern
        by_mode = {"forward": lambda: greedy_coloring(pr, pc, n_cols),
                   "reverse": lambda: greedy_coloring(pc, pr, n_rows)}
        if mode == "auto" and len(d.modes) == 2:
            fwd, rev = by_mode["forward"](), by_mode["reverse"]()
            n_fwd, n_rev = int(fwd.max(initial=-1)) + 1, int(rev.max(initial=-1)) + 1
            mode, colors = ("forward", fwd) if n_fwd <= n_rev else ("reverse", rev)
        else:
            mode = d.modes[0] if mode == "auto" else mode
            colors = by_mode[mode]()
        directions = int(colors.max(initial=-1)) + 1
    else:
        if mode == "auto":
            mode = ("forward" if n_cols <= n_rows else "reverse") if len(d.modes) == 2 \
                else d.modes[0]
        directions = n_cols if mode == "forward" else n_rows

    matrix = np.zeros((n_rows, n_cols))
    value: Any = None
    calls = 0
    if directions == 0 or n_rows == 0 or n_cols == 0:  # nothing to differentiate: the value
        value = f(*_fresh(f, args, d.written))
        directions = 0
    else:
        seeded = n_cols if mode == "forward" else n_rows
        if colors is None:
            seed = np.eye(seeded)
        else:
            seed = np.zeros((seeded, directions))
            hit = colors >= 0
            seed[np.flatnonzero(hit), colors[hit]] = 1.0
        parts = []
        # a build that fixes the number of directions (-DADGEN_NBDIRS=N) takes N per call,
        # the last padded with zero directions
        vector = f._vector if mode == "forward" else f._vector_reverse
        fixed = vector.fixed_nbdirs if vector is not None else None
        if chunk is None and vector is not None:  # as many as the stack holds, else all
            chunk = vector.max_directions()
        for part in _chunks(directions, fixed or chunk):
            piece = seed[:, part]
            width = piece.shape[1]
            if fixed is not None and width < fixed:
                piece = np.concatenate([piece, np.zeros((seeded, fixed - width))], axis=1)
            piece = np.ascontiguousarray(piece)
            if mode == "forward":
                v, product = _forward(f, args, d, columns, rows, n_rows, piece)
                parts.append(product[:, :width])
            else:
                v, product = _reverse(f, args, d, columns, rows, n_cols, piece)
                parts.append(product[:width].T)
            if calls == 0:
                value = v
            calls += 1
        compressed = np.concatenate(parts, axis=1)  # J S (forward) or (W^T J)^T (reverse)
        if colors is None:
            matrix = compressed if mode == "forward" else np.ascontiguousarray(compressed.T)
        else:
            assert pattern is not None
            pr, pc = pattern
            if mode == "forward":
                matrix[pr, pc] = compressed[pr, colors[pc]]
            else:
                matrix[pr, pc] = compressed[pc, colors[pr]]
    return Jacobian(f.name, matrix, row_labels, col_labels, mode, directions, colors, calls,
                    value)
