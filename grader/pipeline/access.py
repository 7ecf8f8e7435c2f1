"""Which program loaded and stored which element of each tensor in a case: the data behind the pictures.

Kept as plain data (nested lists, ints, floats) so that a result stays JSON; feedback.py draws it.
"""
import numpy as np

from .cases import is_unwritten

MAX_ELEMENTS = 4096  # larger tensors are not drawn


def memory_map(case, error=None):
    """{"grid", "dims", "tensors": [...]} for the first launch of a case, or None when a tensor is too large."""
    launch = case.launches[0]
    tensors = []
    for name, buffer in case.buffers.items():
        positions = buffer.positions[0].numpy()
        if positions.size > MAX_ELEMENTS:
            return None
        entry = {"name": name, "role": buffer.spec.role, "shape": list(positions.shape),
                 "readers": _programs(buffer.readers[positions]), "writers": _programs(buffer.writers[positions])}
        if buffer.spec.written:
            got = buffer.parent[positions.reshape(-1)].reshape(positions.shape)
            expected = case.expected[name][positions.reshape(-1)].reshape(positions.shape)
            tolerance = case.puzzle.tolerances[case.spec.dtype]
            close = np.isclose(got.double().numpy(), expected.double().numpy(), atol=tolerance.atol,
                               rtol=tolerance.rtol, equal_nan=True)
            entry["wrong"] = (~close).tolist()
            entry["unwritten"] = is_unwritten(got).numpy().tolist()
            if (~close).any():
                entry["around"] = _around(got.double().numpy(), expected.double().numpy(), ~close)
        if error and error.get("kind") == "out_of_bounds" and error.get("tensor") == name:
            entry["out_of_bounds"] = {"access": error["access"], "program": error["program"][:launch.dims],
                                      "offsets": error["offsets"][:MAX_ELEMENTS]}
        tensors.append(entry)
    return {"grid": list(launch.grid[:launch.dims]), "tensors": tensors}


def _programs(codes):
    """Linear program index (within the first launch) per element, -1 where no program touched it."""
    codes = np.asarray(codes)
    linear = np.where(codes >= 0, codes & 0xFFFFFFFF, -1)
    return linear.tolist()


def _around(got, expected, wrong):
    """got and expected around the first wrong element: a few rows and columns either side of it."""
    first = tuple(int(i) for i in np.argwhere(wrong)[0])
    if got.ndim == 1:
        got, expected, wrong, first = got[None], expected[None], wrong[None], (0,) + first
    elif got.ndim > 2:
        return None
    row, column = first
    rows = slice(max(0, row - 2), row + 3)
    columns = slice(max(0, column - 3), column + 4)
    return {"first": list(first), "origin": [rows.start, columns.start], "got": got[rows, columns].tolist(),
            "expected": expected[rows, columns].tolist(), "wrong": wrong[rows, columns].tolist()}
