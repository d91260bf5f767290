"""LoD edge cases made from a Case: the inputs the `lod` check runs the op and its
`reference` on (docs/lod.md, "The `lod` check": the edges and how inputs are rewritten).
`two_level_inputs` wraps every 1-level LoD input in an outer level."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from harness.backend.case import as_value, map_inputs

__all__ = ["Edge", "EDGES", "LEVEL2_EDGES", "edges_for", "edge_inputs", "lod_inputs",
           "has_lod_input", "two_level_inputs"]


@dataclass(frozen=True)
class Edge:
    name: str
    lengths: tuple               # last level
    upper: tuple | None = None   # the level above it (level-2 edges only)
    description: str = ""


EDGES = [
    Edge("empty_first", (0, 2, 3), description="an empty sequence at the start"),
    Edge("empty_middle", (2, 0, 3), description="an empty sequence in the middle"),
    Edge("empty_last", (2, 3, 0), description="an empty sequence at the end"),
    Edge("empties_in_a_row", (1, 0, 0, 0, 2), description="several empty sequences in a row"),
    Edge("all_empty", (0, 0, 0), description="every sequence empty: a batch of 0 rows"),
    Edge("single_sequence", (4,), description="one sequence"),
    Edge("all_length_one", (1, 1, 1, 1), description="every sequence one row long"),
    Edge("paddle_13", (13,), description="Paddle's standard LoD [[13]]"),
    Edge("paddle_0_0_4_0_3_0_0_5_0_0", (0, 0, 4, 0, 3, 0, 0, 5, 0, 0),
         description="Paddle's standard LoD [[0, 0, 4, 0, 3, 0, 0, 5, 0, 0]]"),
]

LEVEL2_EDGES = [
    # outer sequences: 3 sub-sequences, none, 2; sub-sequences: empty first, empty last,
    # an empty one between non-empty ones
    Edge("level2_empty_subsequences", (0, 2, 0, 1, 0), upper=(3, 0, 2),
         description="two LoD levels with empty sub-sequences and an empty outer sequence"),
]


def _is_lod(value) -> bool:
    return isinstance(value, tuple) and len(value) == 2 and isinstance(value[1], (list, tuple))


def lod_inputs(inputs: dict) -> list[tuple[str, str, object]]:
    """(slot, variable name, (array, lengths)) of every LoD input."""
    out = []
    for slot, value in (inputs or {}).items():
        items = value if isinstance(value, list) else [(slot, value)]
        out += [(slot, item[0], item[1]) for item in items if isinstance(item, tuple)
                and len(item) == 2 and _is_lod(item[1]) and len(item[1][1])]
    return out


def has_lod_input(inputs: dict) -> bool:
    return bool(lod_inputs(inputs))


def edges_for(case) -> list[Edge]:
    """The edges that apply to a case: the level-1 ones, and the level-2 ones when an input
    has two LoD levels."""
    levels = max((len(v[1]) for _, _, v in lod_inputs(case.inputs)), default=0)
    return list(EDGES) + (list(LEVEL2_EDGES) if levels >= 2 else [])


def _new_data(original, rows: int, rng: np.random.Generator):
    a = np.asarray(original)
    shape = (rows,) + tuple(a.shape[1:])
    if a.dtype.kind == "f":
        lo, hi = (float(a.min()), float(a.max())) if a.size else (-1.0, 1.0)
        if not np.isfinite(lo) or not np.isfinite(hi) or hi - lo < 1e-6:
            lo, hi = lo - 1.0, hi + 1.0
        return rng.uniform(lo, hi, shape).astype(a.dtype)
    if a.dtype.kind in "iub" and a.size:
        return rng.choice(a.reshape(-1), size=shape).astype(a.dtype)
    return np.zeros(shape, dtype=a.dtype)


def _levels_for(edge: Edge, nlevels: int) -> list[list[int]]:
    """The edge's levels for an input of `nlevels` LoD levels: each level above them one
    sequence holding everything."""
    own = [list(edge.lengths)]
    if edge.upper is not None and nlevels > 1:
        own.insert(0, list(edge.upper))
    chain, count = [], len(own[0])
    for _ in range(nlevels - len(own)):     # one sequence above, of all below, up to the top
        chain.insert(0, [count])
        count = 1
    return chain + own


def edge_inputs(case, edge: Edge, rng: np.random.Generator) -> dict:
    """The case's inputs rewritten for `edge`: every LoD input gets its lengths (all the
    same number of sequences, so ops that pair sequences across inputs stay valid) and new
    rows, uniform in the original values' range (float) or drawn from them (int); a dense
    input with one row per sequence, or per row, of a LoD input is resized the same way."""
    lods = lod_inputs(case.inputs)
    seq_counts = {len(v[1][-1]) for _, _, v in lods}
    row_counts = {int(np.asarray(v[0]).shape[0]) for _, _, v in lods}
    new_rows = int(sum(edge.lengths))
    new_seqs = len(edge.lengths)

    def rewrite(value):
        if _is_lod(value) and len(value[1]):
            levels = _levels_for(edge, len(value[1]))
            return (_new_data(value[0], new_rows, rng), levels)
        if _is_lod(value):                               # (array, []) : no LoD
            value = value[0]
        if isinstance(value, np.ndarray) and value.ndim >= 1:
            rows = value.shape[0]
            if rows in row_counts and rows >= 2:
                return _new_data(value, new_rows, rng)
            if rows in seq_counts and rows >= 2:
                return _new_data(value, new_seqs, rng)
        return value

    return {slot: [(name, rewrite(v)) for name, v in value] if isinstance(value, list)
            else rewrite(value) for slot, value in (case.inputs or {}).items()}


def two_level_inputs(inputs) -> tuple[dict, list[str]]:
    """(inputs with every 1-level LoD input wrapped in an outer level -- one outer sequence
    holding all its sequences --, the names of the wrapped inputs)."""
    wrapped = []

    def one(s):
        if s.lengths and len(s.lengths) == 1:
            wrapped.append(s.name)
            return s.data, [[len(s.lengths[0])], list(s.lengths[0])]
        return as_value(s)

    return map_inputs(inputs, one), wrapped
