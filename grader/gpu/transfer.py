"""Move tensors between devices as views of their whole storage, never as contiguous copies.

`view.cpu()` (or `.to()`) of a non-contiguous view makes a contiguous copy: a kernel that then uses the
view's original strides reads and writes the wrong elements, and copying the result back scatters it
wrongly (Triton's interpreter did exactly this before 3.3). Moving the storage keeps storage offset,
size and stride, and views of one storage stay views of one storage.
"""
import torch


class StorageTransfer:
    """Views of `tensors` on `device`, sharing one copied storage per source storage; copy_back() returns them."""

    def __init__(self, tensors, device):
        self._storages = {}  # source storage address -> (source flat tensor, moved flat tensor)
        self.moved = [self._move(t, device) for t in tensors]

    def _move(self, tensor, device):
        storage = tensor.untyped_storage()
        key = storage.data_ptr()
        if key not in self._storages:
            flat = torch.empty(0, dtype=tensor.dtype, device=tensor.device)
            flat.set_(storage, 0, (storage.nbytes() // tensor.element_size(),), (1,))
            self._storages[key] = (flat, flat.to(device, copy=True))
        _, moved = self._storages[key]
        return moved.as_strided(tensor.size(), tensor.stride(), tensor.storage_offset())

    def copy_back(self):
        for source, moved in self._storages.values():
            source.copy_(moved)
