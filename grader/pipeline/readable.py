"""How a kernel's values read when a student looks at them: `print(x)` in a kernel, `tl.device_print`, `p x` in
pdb, a debugger's variables panel.

Triton's interpreter shows a block as the NumPy array behind it (`array([0, 1, 2, 3], dtype=int32)`) and a
pointer as raw addresses. Here a block reads with its Triton type and shape, a mask as booleans, and a pointer
as the argument it points into and the element offsets it points at, the way the kernel computed it:

    int32[4] [0, 1, 2, 3]
    int1[4] [True, True, False, False]
    pointer<fp32>[4] x_ptr + [4, 5, 6, 7] (offsets 6, 7 are outside x_ptr: 6 elements, offsets 0..5)

The numbers are NumPy's printing (aligned columns, "..." past SHOWN elements), as for any array in a notebook.
"""
import numpy as np
import triton.language as tl

from .memcheck import TAG

SHOWN = 64  # elements of a block shown before NumPy summarises it with "..."
LINE = 100


def describe(data, dtype, shape=None, region=None, hex=False):
    """The value of a block or scalar of Triton type `dtype` (its elements' type) holding `data`. `region`: the
    memory checker's Region a pointer derives from."""
    values = np.asarray(data)
    shape = None if shape is None else [int(getattr(n, "value", n)) for n in shape]
    if shape is not None and values.size == int(np.prod(shape, dtype=np.int64)):
        values = values.reshape(tuple(shape))
    kind = f"{dtype}[{', '.join(str(n) for n in values.shape)}]" if values.ndim else str(dtype)
    if isinstance(dtype, tl.pointer_type):
        text = _pointer(values, region)
        return f"{kind}\n{text}" if "\n" in text else f"{kind} {text}"
    formatter = None
    if dtype == tl.int1:
        values, formatter = values.astype(bool), {"bool": str}  # True, not NumPy's aligned " True"
    elif hex and values.dtype.kind in "iu":
        formatter = {"int": lambda n: f"{int(n):#x}"}
    text = np.array2string(values, separator=", ", threshold=SHOWN, edgeitems=4, max_line_width=LINE,
                           formatter=formatter) if values.ndim else _scalar(values, formatter)
    return f"{kind}\n{text}" if "\n" in text else f"{kind} {text}"


def _scalar(value, formatter):
    value = value.item()
    return next(iter(formatter.values()))(value) if formatter else repr(value)


def _pointer(addresses, region):
    if region is None:  # not derived from one argument: mixes two, or was made from an integer
        return "at " + np.array2string(addresses, separator=", ", threshold=SHOWN, edgeitems=4, max_line_width=LINE,
                                       formatter={"int": lambda n: f"{int(n):#x}"})
    offsets = (addresses.astype(np.int64) - region.base) / region.itemsize
    if (offsets == np.round(offsets)).all():
        offsets = offsets.astype(np.int64)
    text = f"{region.param} + "
    text += np.array2string(offsets, separator=", ", threshold=SHOWN, edgeitems=4, max_line_width=LINE,
                            prefix=text) if offsets.ndim else str(offsets.item())
    flat = addresses.reshape(-1)
    _, inside = region.locate(flat)
    if inside is not None and not inside.all():
        outside = offsets.reshape(-1)[~inside]
        listed = ", ".join(str(o) for o in outside[:8]) + (", ..." if len(outside) > 8 else "")
        text += ("\n" if "\n" in text else " ") + (
            f"(offset{'s' if len(outside) > 1 else ''} {listed} {'are' if len(outside) > 1 else 'is'} outside "
            f"{region.param}: {region.describe()})")
    return text


def tensor_repr(tensor):
    """A tl.tensor of an interpreted kernel, readable (replaces the interpreter's NumPy repr)."""
    handle = tensor.handle
    return describe(handle.data, tensor.dtype, tensor.shape, getattr(handle, TAG, None))


def device_print(builder):
    """The interpreter builder's create_print, readable: one line per value, prefixed by the program."""
    def create_print(prefix, hex, values, *rest):
        grid, program = builder.grid_dim, builder.grid_idx
        dims = 3 if grid[2] > 1 else 2 if grid[1] > 1 else 1
        name = str(program[0]) if dims == 1 else str(tuple(program[:dims]))
        label = f"program {name}" + (f" {prefix.strip()}" if prefix.strip() else "")
        for value in values:
            print(f"{label} {describe(value.data, value.dtype, None, getattr(value, TAG, None), hex)}")
    return create_print
