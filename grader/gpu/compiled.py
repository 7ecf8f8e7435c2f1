"""A compiled kernel as data: what the GPU stage's compile sandbox hands over, checked, and loaded for launching.

The submission's Python (its module constants, constexpr functions, heuristics, tuning configurations) runs
only in the compile sandbox (compile_worker.py). What comes out is a Compiled: Triton's metadata (JSON), the
GPU binary, and the launch signature. The grader checks it field by field (`check`), and the timing process,
which runs no submission code at all, turns it into a launchable kernel (`load`) with Triton's own
CompiledKernel and launcher: the launcher's C code is generated from the signature, so only the types a
launch of the puzzle can have are accepted.
"""
import json
import re
from pathlib import Path
from types import SimpleNamespace

from ..pipeline.configs import plain_constant

SIGNATURE_TYPES = ("*fp32", "*fp16", "*bf16", "*fp64", "*i8", "*u8", "*i16", "*i32", "*i64", "i1", "i8", "i16",
                   "i32", "i64", "u8", "u16", "u32", "u64", "fp16", "bf16", "fp32", "fp64", "constexpr")
METADATA_BYTES = 1 << 16
BINARY_BYTES = 64 << 20
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,200}")


class BadCompiled(Exception):
    """What the compile sandbox returned is not a compiled kernel of this puzzle."""


def from_compile(compiled, arg_names, bound, constexprs):
    """The Compiled of `triton.compile`'s result, launched with `bound` ({parameter: value}) (compile side)."""
    metadata = next(Path(p).read_text() for name, p in compiled.metadata_group.items() if name.endswith(".json"))
    extra = {name: plain_constant(value) for name, value in bound.items()
             if name in arg_names and not hasattr(value, "data_ptr")}
    return {"metadata": metadata, "binary": bytes(compiled.kernel), "arg_names": list(arg_names),
            "signature": dict(compiled.src.signature), "constexprs": {k: plain_constant(v) for k, v in constexprs.items()},
            "scalars": extra,
            "asm": {key: compiled.asm[key] for key in ("ttir", "ttgir", "ptx") if key in compiled.asm}}


def check(data, params):
    """`data` checked as the Compiled of a kernel with parameters `params`; raises BadCompiled."""
    def expect(condition, reason):
        if not condition:
            raise BadCompiled(reason)

    expect(isinstance(data, dict), "not a mapping")
    metadata, binary = data.get("metadata"), data.get("binary")
    expect(isinstance(metadata, str) and len(metadata) <= METADATA_BYTES, "no metadata")
    expect(isinstance(binary, bytes) and 0 < len(binary) <= BINARY_BYTES, "no binary")
    try:
        fields = json.loads(metadata)
    except ValueError:
        raise BadCompiled("the metadata is not JSON") from None
    expect(isinstance(fields, dict) and all(isinstance(k, str) and k.isidentifier() and not k.startswith("_")
                                            for k in fields), "the metadata's fields are not names")
    expect(isinstance(fields.get("name"), str) and NAME.fullmatch(fields["name"]) is not None,
           "the kernel's name is not a name")
    target = fields.get("target")
    expect(isinstance(target, dict) and target.get("backend") == "cuda" and isinstance(target.get("arch"), int),
           "the target is not a CUDA architecture")
    arg_names, signature = data.get("arg_names"), data.get("signature")
    expect(arg_names == list(params), "the parameters are not the kernel's")
    expect(isinstance(signature, dict) and list(signature) == list(params) and
           all(t in SIGNATURE_TYPES for t in signature.values()), "the signature has types a launch cannot have")
    for key in ("constexprs", "scalars"):
        values = data.get(key)
        expect(isinstance(values, dict) and set(values) <= set(params) and
               all(isinstance(v, (bool, int, float, str)) or v is None for v in values.values()),
               f"the {key} are not plain values of parameters")
    expect(all(signature[name] == "constexpr" for name in data["constexprs"]), "a constant that is not constexpr")
    asm = data.get("asm", {})
    expect(isinstance(asm, dict) and all(isinstance(v, str) for v in asm.values()), "malformed assembly")
    return data


def load(data, directory, key):
    """A launchable kernel, `kernel[grid](*args)`, of checked Compiled data (timing side). `args` are all the
    kernel's parameters in order; its constants are baked in and ignored by the launcher."""
    from triton.compiler.compiler import CompiledKernel

    directory = Path(directory) / key
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "kernel.json").write_text(data["metadata"])
    (directory / "kernel.cubin").write_bytes(data["binary"])
    names = data["arg_names"]
    source = SimpleNamespace(signature=dict(data["signature"]), fn=SimpleNamespace(arg_names=list(names)),
                             constants={(names.index(name),): value for name, value in data["constexprs"].items()})
    return CompiledKernel(source, {"kernel.json": str(directory / "kernel.json"),
                                   "kernel.cubin": str(directory / "kernel.cubin")}, key)


def launch_args(data, args):
    """All the kernel's arguments in order: the puzzle's `args`, then what the kernel's heuristics computed."""
    values = []
    for index, name in enumerate(data["arg_names"]):
        if name in data["scalars"]:
            values.append(data["scalars"][name])
        elif index < len(args):
            values.append(args[index])
        else:
            values.append(data["constexprs"].get(name))
    return values
