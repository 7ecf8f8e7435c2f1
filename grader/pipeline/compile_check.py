"""Compile kernels for real NVIDIA targets on a machine without a GPU, and say where the compiler objects.

The interpreter runs plain Python, so it accepts what the GPU compiler rejects: a block size that is not a
tl.constexpr, a tl.dot on blocks smaller than 16, a non-constexpr global. `triton.compile` needs no GPU to
produce PTX. It runs in the sandboxed worker, before interpretation (constexpr functions run while compiling).
"""
import contextlib
import json
import os
import re
from pathlib import Path

from .interpret import FLOAT32_DOT, KernelCrashed, bind_arguments, constexpr_params, python_function
from .load.rules import ChangedInPlace

POINTER_TYPES = {"float32": "*fp32", "float16": "*fp16", "bfloat16": "*bf16", "float64": "*fp64",
                 "int32": "*i32", "int64": "*i64"}


def benchmark_arguments(puzzle, config, sizes):
    """The arguments, in the puzzle's order, of the GPU stage's timed launch at `sizes` with `config`
    (Benchmark.launch_config) for the blocks: tensors on the meta device, ints for the rest."""
    return benchmark_launch(puzzle, config, sizes)[1]


def benchmark_launch(puzzle, config, sizes, device="meta"):
    """({tensor name: tensor}, arguments in the puzzle's order, grid) of the GPU stage's timed launch at `sizes`
    with `config`; the tensors are allocated on `device` and never filled."""
    import torch

    benchmark = puzzle.benchmark
    sizes = dict(sizes)
    tensors = {t.name: torch.empty(t.shape_at(sizes), dtype=getattr(torch, t.dtype or benchmark.dtype), device=device)
               for t in puzzle.tensors}
    namespace = {**sizes, **config["kwargs"], **tensors}
    return (tensors, [expression(namespace) for expression in puzzle.args.values()],
            tuple(int(g(namespace)) for g in puzzle.grid))


def pointer_type(value):
    """'*fp32' for a float32 tensor argument, None for anything that is not a tensor."""
    dtype = getattr(value, "dtype", None)
    if dtype is None or not hasattr(value, "data_ptr"):
        return None
    return POINTER_TYPES.get(str(dtype).removeprefix("torch."), "*fp32")


def signature(kernel, bound, aligned=lambda param: True):
    """Triton signature, constexprs and attributes as a real launch makes them from bound arguments
    ({parameter: value}): constexpr where the kernel says so, an int equal to 1 or None folded in as a constant, ints
    divisible by 16 marked so, and pointers marked 16-byte aligned where `aligned` says (fresh allocations
    are; a view with a storage offset may not be), which lets the compiler vectorise; a parameter in the kernel's
    do_not_specialize is neither folded in nor marked, one in do_not_specialize_on_alignment is not marked.
    `kernel`: a kernel, or the plain function of one (then nothing is left unspecialised)."""
    fn = python_function(kernel) or kernel
    constexprs = constexpr_params(fn)
    annotated = _annotated_types(fn)
    kept = {p.name: p for p in getattr(jit_function(kernel), "params", ())}
    types, values, attrs = {}, {}, {}
    for index, param in enumerate(fn.__code__.co_varnames[:fn.__code__.co_argcount]):
        value = bound[param]
        specialized = not getattr(kept.get(param), "do_not_specialize", False)
        marked = specialized and not getattr(kept.get(param), "do_not_specialize_on_alignment", False)
        if param in annotated and param not in constexprs:
            _check_annotated(param, annotated[param], value)
        pointer = annotated.get(param) if annotated.get(param, "").startswith("*") else pointer_type(value)
        if param in constexprs or (value is None or type(value) is int and value == 1 and specialized) and \
                param not in annotated:
            types[param], values[param] = "constexpr", value
        elif pointer is not None:
            types[param] = pointer
            if aligned(param) and marked:
                attrs[(index,)] = [["tt.divisibility", 16]]
        elif param in annotated:  # Triton types it as its annotation says (int: i32, float: fp32, bool: u1)
            types[param] = annotated[param]
            if annotated[param][:1] in ("i", "u") and annotated[param] != "u1" and type(value) is int and \
                    value % 16 == 0 and marked:
                attrs[(index,)] = [["tt.divisibility", 16]]
        elif isinstance(value, bool):
            types[param] = "i1"
        elif isinstance(value, float):
            types[param] = "fp32"
        else:
            types[param] = "i32" if -2 ** 31 <= value < 2 ** 31 else "i64"
            if value % 16 == 0 and marked:
                attrs[(index,)] = [["tt.divisibility", 16]]
    return types, values, attrs


def _annotated_types(fn):
    """{parameter: the Triton type its annotation names}, as Triton's launcher reads it (triton.runtime.jit's
    KernelParam): int is i32, float fp32, bool u1, "*fp16" a pointer; a parameter whose annotation names none is
    typed from its value."""
    import inspect

    from triton.runtime.jit import KernelParam
    found = {}
    for index, param in enumerate(inspect.signature(fn).parameters.values()):
        try:
            kind = KernelParam(index, param, False, False).annotation_type
        except Exception:  # an annotation Triton cannot read as a type: typed from the value, as before
            continue
        if kind:
            found[param.name] = kind
    return found


def _check_annotated(param, kind, value):
    """Raise ValueError where a launch's argument does not fit the Triton type its parameter is annotated with:
    Triton would read a tensor's memory as another type, or refuses an int the type cannot hold."""
    if kind.startswith("*"):
        given = pointer_type(value)
        if given is not None and given.removeprefix("*") != kind.removeprefix("*k").removeprefix("*"):
            raise ValueError(f"{param} is annotated {kind!r} but this launch passes a {str(value.dtype)[6:]} tensor: "
                             f"Triton would read its memory as {kind.lstrip('*k')}")
    elif kind[:1] in ("i", "u") and kind != "u1" and type(value) is int:
        bits = int(kind[1:])
        low, high = (-2 ** (bits - 1), 2 ** (bits - 1)) if kind[0] == "i" else (0, 2 ** bits)
        if not low <= value < high:
            raise ValueError(f"{param} is annotated {kind!r}, which cannot hold {value}: Triton refuses the launch")


def jit_function(kernel):
    """The JITFunction under @triton.autotune and @triton.heuristics."""
    while not hasattr(kernel, "cache_key") and hasattr(kernel, "fn"):
        kernel = kernel.fn
    return kernel


def _ast_source(kernel, args, aligned=lambda param: True):
    """(Triton's ASTSource of `kernel` as launched with `args` (in parameter order), its constants)."""
    from triton.compiler import ASTSource

    types, constexprs, attrs = signature(kernel, bind_arguments(kernel, args), aligned)
    return ASTSource(fn=jit_function(kernel), signature=types, constexprs=constexprs, attrs=attrs), constexprs


def key_the_compile_cache_by_version():
    """Triton keys its on-disk compile cache by a hash of its own files and of its library (hundreds of MB read:
    0.4 s of every worker's start). A sandboxed worker's cache (worker.py, the GPU stage's compile_worker.py) is
    a folder of its attempt, made empty and gone with it, never read by another Triton: the version names the
    build well enough. For the calling process only: never the grader's own, whose cache may be shared."""
    import triton
    from triton.runtime import cache
    cache.triton_key = lambda: f"triton-{triton.__version__}"


@contextlib.contextmanager
def _as_the_gpu_stage_compiles():
    """A float32 tl.dot without input_precision= made as the GPU stage makes it (interpret.FLOAT32_DOT), not as
    Triton's TF32 default: its registers and shared memory differ."""
    from triton import knobs
    saved, knobs.language.fp32_default = knobs.language.fp32_default, FLOAT32_DOT
    try:
        yield
    finally:
        knobs.language.fp32_default = saved


def compile_kernel(kernel, args, target, options=None, aligned=lambda param: True):
    """(triton.compile of `kernel` as launched with `args` (in parameter order) for sm_`target`, its constants)."""
    import triton
    from triton.backends.compiler import GPUTarget

    source, constexprs = _ast_source(kernel, args, aligned)
    with _as_the_gpu_stage_compiles():
        return triton.compile(source, target=GPUTarget("cuda", target, 32), options=options or {}), constexprs


def compile_resources(kernel, args, target, config, tell_lanes=None):
    """What the compiled kernel asks of an SM, compiled for sm_`target` as launched with `args` and `config`'s
    num_warps and num_stages: {"registers", "spills" (bytes stored), "shared" (bytes), "num_warps", "pipelined"
    (tiles_pipelined), "lanes" (lane_axes)}, or {"error": the compiler's message}. ptxas reports registers and
    spills as it assembles (Triton's dump_ptxas_log prints its -v report). `tell_lanes` is called with the lane
    layouts as soon as the TritonGPU passes have made them, long before LLVM and ptxas are done."""
    import io

    from triton import knobs

    options = {k: config[k] for k in ("num_warps", "num_stages") if k in config}
    report = io.StringIO()
    saved = knobs.nvidia.dump_ptxas_log, knobs.compilation.always_compile, knobs.runtime.add_stages_inspection_hook
    knobs.nvidia.dump_ptxas_log = knobs.compilation.always_compile = True  # a cached binary would bring no report
    if tell_lanes is not None:
        knobs.runtime.add_stages_inspection_hook = _telling_lanes(tell_lanes)
    try:
        with contextlib.redirect_stdout(report), _without_proxy_fences():
            binary, _ = compile_kernel(kernel, args, target, options)
    except Exception as error:
        return {"error": describe(error, None)[0]}
    finally:
        knobs.nvidia.dump_ptxas_log, knobs.compilation.always_compile, knobs.runtime.add_stages_inspection_hook = saved
    registers = re.search(r"Used (\d+) registers", report.getvalue())
    spills = re.search(r"(\d+) bytes spill stores", report.getvalue())
    return {"registers": int(registers.group(1)) if registers else None,
            "spills": int(spills.group(1)) if spills else 0,
            "shared": int(binary.metadata.shared), "num_warps": int(binary.metadata.num_warps),
            "pipelined": tiles_pipelined(binary.asm.get("ttgir", "")), "lanes": lane_axes(binary.asm.get("ttgir", ""))}


@contextlib.contextmanager
def _without_proxy_fences():
    """Triton's LLVM lowering for sm_90 and later inserts fences between the generic and the async proxies of
    shared memory (from 3.9 after an analysis of buffer regions: a quarter of that lowering's time). The pass
    rejects nothing, and its fences change neither the registers, the spills nor the shared memory ptxas reports
    (the same for each of the 243 kernels of bench/performance_model.py's corpus and held-out set): the estimate's
    compile goes without them. The GPU stage's binaries, which run, keep them."""
    from triton._C.libtriton import nvidia
    passes = nvidia.passes.ttnvgpuir
    insertion = getattr(passes, "add_proxy_fence_insertion", None)
    if insertion is None:
        yield
        return
    passes.add_proxy_fence_insertion = lambda *args: None
    try:
        yield
    finally:
        passes.add_proxy_fence_insertion = insertion


def _telling_lanes(tell):
    """A Triton stages hook (knobs.runtime.add_stages_inspection_hook) that calls `tell` with the lane layouts of
    the TritonGPU module as soon as its stage has made it. Triton calls the hook without arguments for what it
    adds to the compile's cache key (from 3.7), and with the backend's stages to change them."""
    def hook(backend=None, stages=None, *rest):
        if stages is None:
            return "", ""
        make_ttgir = stages["ttgir"]

        def ttgir(module, metadata):
            module = make_ttgir(module, metadata)
            tell(lane_axes(str(module)))
            return module
        stages["ttgir"] = ttgir
    return hook


DOT_OP = re.compile(r"\b(?:tt\.dot|tt\.dot_scaled|ttng\.warp_group_dot|ttng\.tc_gen5_mma)\b")
ASYNC_TILE_COPY = re.compile(r"\b(?:ttg\.async_copy_global_to_local|ttng\.async_tma_copy_global_to_local)\b")


def tiles_pipelined(ttgir):
    """Whether a TritonGPU module (its text) with a tl.dot copies tiles from global to shared memory asynchronously,
    ahead of the dot that needs them; None without a dot. The compiler's pipeliner does so for the loads of a `for`
    loop given two stages or more (num_stages); a `while` loop's loads, or one stage's, are plain loads that the
    dot waits for in each iteration."""
    if not DOT_OP.search(ttgir):
        return None
    return ASYNC_TILE_COPY.search(ttgir) is not None


BLOCKED_LAYOUT = re.compile(r"^#(blocked\d*) = #ttg\.blocked<\{sizePerThread = \[[\d, ]*\], threadsPerWarp = "
                            r"\[([\d, ]*)\], warpsPerCTA = \[[\d, ]*\], order = \[([\d, ]*)\]", re.M)
MEMORY_OP = re.compile(r"\b(tt\.load|tt\.store|ttg\.async_copy_global_to_local) .*?: tensor<[\dx]+x!tt\.ptr<[^>]*>, "
                       r"#(blocked\d*)>.*\bloc\(#(loc\d*)\)\s*$")


# Every operation of a TritonGPU module that moves global memory, by its name: (the name, its location).
GLOBAL_ACCESS = re.compile(r"\b(tt\.load|tt\.store|tt\.descriptor_(?:load|store|gather|scatter)|"
                           r"ttg\.async_copy_global_to_local|ttng\.async_tma_\w+)\b.*\bloc\(#(loc\d*)\)\s*$")


def lane_axes(ttgir):
    """[[file, line, "load" or "store", axis]] for every load and store of global memory in a TritonGPU module (its
    text): where the lanes of a multi-dimensional block's access all lie along one axis, the axis along which the
    compiler lays a warp's 32 lanes, else None. The compiler decides it from what it can prove of the addresses (a
    stride it does not know hides their contiguity), which the addresses the interpreter sees do not tell. A load
    the interpreter runs that is not here, the compiler removed (a second load of the same addresses)."""
    axes = {}
    for name, threads, order in BLOCKED_LAYOUT.findall(ttgir):
        threads, order = [int(t) for t in threads.split(",")], [int(o) for o in order.split(",")]
        if len(order) > 1 and threads[order[0]] == 32:
            axes[name] = order[0]
    locations = dict(re.findall(r"^#(loc\d*) = (loc\(.*\))\s*$", ttgir, re.M))
    found = []
    for line in ttgir.splitlines():
        access = GLOBAL_ACCESS.search(line)
        place = access and _source_place(access.group(2), locations)
        if place:
            op = MEMORY_OP.search(line)
            stores = any(word in access.group(1) for word in ("store", "scatter", "local_to_global"))
            found.append([*place, "store" if stores else "load",
                          axes.get(op.group(2)) if op else None])
    return found


def _source_place(name, locations, depth=0):
    """(file, line) a location of a TritonGPU module points at, through aliases, names, call sites (the callee's
    own line, as the interpreter reports an access in a @jit helper) and fusions (the first), or None."""
    text = locations.get(name, "")
    direct = re.match(r'loc\("([^"]+)":(\d+):\d+\)', text)
    if direct:
        return direct.group(1), int(direct.group(2))
    inner = re.match(r'loc\((?:"[^"]*"\(|callsite\(|fused\[)?#(loc\d*)', text)
    return _source_place(inner.group(1), locations, depth + 1) if inner and depth < 16 else None


def trace_kernel(kernel, args, target):
    """Only the front of triton.compile: `kernel`, as launched with `args`, traced into Triton IR for sm_`target`.
    Where a launch with other constants goes wrong for the compiler (a branch that gives a value two shapes, a
    tl.dot below 16, an arange that is not a power of 2) it shows here, at a small part of a compile's cost."""
    _front(kernel, args, target)


def lower_kernel(kernel, args, target, options=None):
    """The front of triton.compile and its TritonGPU passes for sm_`target` (with `options`: num_warps,
    num_stages): where the compile of one target differs from another's (the float8 types, the tensor-core
    instructions, the pipelining of loads), at a fifth of a full compile's cost; the lowering to LLVM and PTX and
    ptxas are left out. Returns the TritonGPU module."""
    module, source, backend, _ = _front(kernel, args, target)
    options = backend.parse_options(options or {})
    stages = {}
    backend.add_stages(stages, options, source.language)
    metadata = {"target": backend.target, **options.__dict__}
    for stage in ("ttir", "ttgir"):
        module = stages[stage](module, metadata)
    return module


def _front(kernel, args, target):
    """(Triton IR of `kernel` as launched with `args` for sm_`target`, its ASTSource, the backend, its options)."""
    from triton._C.libtriton import ir
    from triton.backends.compiler import GPUTarget
    from triton.compiler.compiler import make_backend

    source, _ = _ast_source(kernel, args)
    target = GPUTarget("cuda", target, 32)
    backend = make_backend(target)
    options = backend.parse_options({})
    context = ir.context()
    ir.load_dialects(context)
    backend.load_dialects(context)
    with _as_the_gpu_stage_compiles():
        module = source.make_ir(target, options, backend.get_codegen_implementation(options),
                                backend.get_module_map(), context)
    return module, source, backend, options


def specialisation(kernel, args):
    """What the front of the compiler sees of a launch with `args`: the signature and its constants (the
    divisibility marks only matter to the later passes, which the first launch's compile ran)."""
    types, constexprs, _ = signature(kernel, bind_arguments(kernel, args))
    return repr((sorted(types.items()), sorted(constexprs.items(), key=str)))


def compile_problems(modules, kernel_name, launches, targets, benchmark=None, meanwhile=None, fork=False):
    """([{"targets", "message", "line", "module", "case"}] for what the GPU compiler rejects of the kernel
    (`kernel_name` in the main module of `modules`, a worker.KernelModules), its resources or None, what
    `meanwhile` returned or None).

    The first launch (of the launches: the arguments of each case's launches, [(case index, args)]) is
    compiled to the end, ptxas included, for the newest target (the GPU stage's machines), and through the
    TritonGPU passes for the older ones (lower_kernel: where targets differ, at a fifth of the cost; their
    LLVM lowering and ptxas would repeat the newest target's checks, but for hand-written PTX an older GPU
    lacks, tl.inline_asm_elementwise's), and every other launch is traced through the front of the compiler,
    which is where other block sizes, dtypes or ints equal to 1 go wrong (a branch that gives a value two
    shapes, a tl.dot below 16). The target of `benchmark` ((target, args, config): the
    GPU stage's first launch) is compiled to the end as that launch instead (what it asks of an SM is the
    resources, compile_resources), or as the first launch if the compiler rejects that configuration; a
    benchmark target the check does not compile for is compiled for the resources alone. The
    front of the compiler differs between targets only in the float8 types it accepts, more of them the newer
    the target: a launch it accepted for an older target is not traced again for a newer one. Each target's
    first rejection is reported, its first launch's before its traces'; `line` is a line of the rebuilt
    module named `module`, or None; `case` the index of the case whose launch is rejected.

    With `fork` (a core to spare), the first launch's compiles, the slow part, run in forked processes while
    this one traces every launch and then, if all of them are accepted, calls `meanwhile` (the interpretation
    of the cases, which patches Triton and so cannot share a process with a compile): they then cost little
    time. Without, they run here first (on cores that other workers keep busy, forks only add their own cost).
    `meanwhile` is given a callable that waits for the benchmark launch's lane layouts (benchmark_compile), or
    None where the check does not compile for the benchmark's target.
    """
    start = _forked if fork else _now
    benchmark_target = benchmark[0] if benchmark is not None and benchmark[0] in targets else None
    # Fresh modules for each compile: after one failed compile, Triton lets the same kernel object compile
    # "successfully" (seen with a torch call inside a kernel on 3.9).
    compiles, lanes = {}, None
    for target in sorted(targets):
        if target == benchmark_target:
            compiles[target], lanes = benchmark_compile(modules, kernel_name, benchmark, fork)
        else:
            compiles[target] = start(_rejection, modules, f"_sm{target}", kernel_name, launches[0], target,
                                     target == max(targets))
    traced, accepted = {}, set()  # accepted: specialisations the front of the compiler accepted for an older target
    for target in sorted(targets):
        kernel = getattr(modules.load(f"_sm{target}"), kernel_name)
        to_trace = launches
        if not fork and target != benchmark_target and compiles[target]() is None:  # its first launch compiled
            with contextlib.suppress(KernelCrashed):  # a heuristic that fails the second time is traced below
                accepted.add(specialisation(kernel, launches[0][1]))
                to_trace = launches[1:]
        traced[target] = _first_traced_rejection(kernel, to_trace, target, modules, accepted)
    met = meanwhile(lanes) if meanwhile is not None and not any(traced.values()) else None
    failures, resources = {}, None
    for target, finished in compiles.items():
        rejection = finished()
        if target == benchmark_target:
            resources, rejection = rejection, None
            if "error" in resources and not traced[target]:
                # A tuning configuration the GPU stage would reject is not the cases' concern: their first launch is.
                rejection = _rejection(modules, f"_sm{target}f", kernel_name, launches[0], target)
        elif isinstance(rejection, dict):  # the first launch's compile ended without an answer (the compiler crashed)
            rejection = [rejection["error"], None, None, launches[0][0]]
        rejection = tuple(rejection) if rejection else traced[target]
        if rejection:
            failures.setdefault(rejection, []).append(target)
    if benchmark is not None and benchmark_target is None and not failures:
        # The estimate's GPU is not one the check compiles for: its own compile, which decides nothing of the verdict.
        resources = compile_resources(getattr(modules.load(f"_sm{benchmark[0]}b"), kernel_name), benchmark[1],
                                      benchmark[0], benchmark[2])
    return [{"targets": targets, "message": message, "line": line, "module": module, "case": case}
            for (message, module, line, case), targets in failures.items()], resources, met


def _rejection(modules, suffix, kernel_name, launch, target, to_the_end=True):
    """[message, module, line, case] of the compiler's rejection of the case `launch` ((case index, args)),
    compiled for sm_`target` (to the end, or through the TritonGPU passes) from fresh modules (loaded with
    `suffix`), or None."""
    case, args = launch
    try:
        kernel = getattr(modules.load(suffix), kernel_name)
        compile_kernel(kernel, args, target) if to_the_end else lower_kernel(kernel, args, target)
    except KernelCrashed:  # a heuristic raised: the kernel's own error, which its interpretation reports
        return None
    except Exception as error:
        return None if host_code_refusal(error) is not None else [*describe(error, modules), case]
    return None


def host_code_refusal(error):
    """The grader's own refusal of host code the compile ran (a @triton.constexpr_function's augmented assignment,
    rules.ChangedInPlace) that raised `error`, or None: no rejection of the compiler's, and the kernel's
    interpretation (on the CPU) or the compile sandbox (in the GPU stage) reports it where it was written."""
    seen = set()
    while error is not None and id(error) not in seen:
        if isinstance(error, ChangedInPlace):
            return error
        seen.add(id(error))
        error = error.__cause__ or error.__context__
    return None


def _first_traced_rejection(kernel, launches, target, modules, accepted):
    """(message, module, line, case) of the first launch the front of the compiler rejects, or None; what it
    accepts joins `accepted`."""
    for case, args in launches:
        try:
            key = specialisation(kernel, args)
            if key in accepted:
                continue
            trace_kernel(kernel, args, target)
        except KernelCrashed:  # a heuristic raised: the kernel's own error, which its interpretation reports
            continue
        except Exception as error:
            if host_code_refusal(error) is not None:
                continue
            return (*describe(error, modules), case)
        accepted.add(key)
    return None


def benchmark_compile(modules, kernel_name, benchmark, fork=False):
    """(a callable that waits for compile_resources of the benchmark's launch ((target, args, config)), a callable
    that waits for its lane layouts (lane_axes)). With `fork` the compile runs in a forked process that tells the
    lane layouts as soon as its TritonGPU passes have made them, so that what needs them (the profile) need not
    wait for LLVM and ptxas; without, both come from the compile, made here first."""
    target, args, config = benchmark
    kernel = getattr(modules.load(f"_sm{target}b"), kernel_name)
    if fork:
        finished, told = _forked_telling(compile_resources, kernel, args, target, config)
        if told is not None:
            return finished, lambda: told() or finished().get("lanes", ())
    else:
        finished = _now(compile_resources, kernel, args, target, config)
    return finished, lambda: finished().get("lanes", ())


def _now(function, *args):
    """function(*args), called now; returns a callable that gives what it returned."""
    answer = function(*args)
    return lambda: answer


def _forked(function, *args):
    """Start function(*args) in a forked process; returns a callable that waits for what it returned (JSON
    data), or {"error"} if the process ended without an answer."""
    return _forked_telling(function, *args, telling=False)[0]


def _forked_telling(function, *args, telling=True):
    """_forked, where `function` is also given, as its last argument, a callable through which it can tell one
    answer (JSON data) before it returns. Returns (the callable of _forked, one that waits for what was told, or
    None if the process told nothing), or (a callable that gives what function(*args, None) returned, called
    here now, None) where no process can be forked."""
    read, write = os.pipe()
    early = os.pipe() if telling else None
    try:
        pid = os.fork()
    except OSError:  # no process to spare (the sandbox's limit): here, then
        for fd in (read, write, *(early or ())):
            os.close(fd)
        return _now(function, *args, *((None,) if telling else ())), None
    if pid == 0:  # never returns
        os.close(read)
        try:
            if early:
                os.close(early[0])
                unsaid = [early[1]]

                def tell(told):  # once: the descriptor is closed after it
                    if unsaid:
                        _write_all(unsaid.pop(), json.dumps(told).encode())
                answer = function(*args, tell)
            else:
                answer = function(*args)
            _write_all(write, json.dumps(answer).encode())
        finally:
            os._exit(0)
    os.close(write)
    if early:
        os.close(early[1])

    def result():
        answer = _read_all(read)
        os.waitpid(pid, 0)
        try:
            return json.loads(answer)
        except ValueError:
            return {"error": "the compiler's process ended without an answer"}

    told = []

    def early_answer():
        if not told:
            text = _read_all(early[0])
            told.append(json.loads(text) if text else None)
        return told[0]
    return result, (early_answer if early else None)


def _write_all(fd, data):
    """Write all of `data` to `fd`, then close it: a reader waits for the end."""
    try:
        while data:
            data = data[os.write(fd, data):]
    finally:
        os.close(fd)


def _read_all(fd):
    with os.fdopen(fd, "rb") as pipe:
        return pipe.read()


# ptxas names the PTX file and line it refuses; the PTX's .loc directives say which line of which file made it.
PTXAS_ERROR = re.compile(r"ptxas[\w-]* (\S+\.ptx), line (\d+); error\s*:\s*(.+)")


def describe(error, modules):
    """(message, module name, module line) of a compile error."""
    # An error inside a @jit helper comes wrapped in one at the kernel's line that calls it, without a message:
    # the helper's own says what and where.
    while getattr(error, "error_message", "") is None and getattr(error.__cause__, "src", None) is not None:
        error = error.__cause__
    text = str(error)
    refused = PTXAS_ERROR.search(text)
    if refused:
        return (f"the PTX assembler (ptxas) refuses the code Triton made of it: {refused.group(3).strip()}",
                *_ptx_origin(Path(refused.group(1)), int(refused.group(2)), modules))
    message = getattr(error, "error_message", None) or (text.strip().splitlines() or [type(error).__name__])[-1]
    message = re.sub(r" at 0x[0-9a-f]+", "", message)
    location = re.match(r"at (\d+):(\d+):", text)
    if location and getattr(error, "src", None) and modules is not None:
        line, column = int(location.group(1)), int(location.group(2))
        functions = [(name, fn, jit_function(value).src) for name, module in modules.loaded.items()
                     for value in vars(module).values() for fn in [python_function(value)]
                     if fn is not None and getattr(jit_function(value), "src", None)]
        found = next(((name, fn) for name, fn, src in functions if src == error.src and
                      _holds(src, line, column)), None)
        # Triton places a call that breaks a noinline helper's rules at the caller's line and column, but names the
        # helper's source: the caller is the function whose text there is the call.
        called = re.match(r"Function (\w+) is marked noinline", message)
        if found is None and called:
            found = next(((name, fn) for name, fn, src in functions if _holds(src, line, column, called.group(1))),
                         None)
        if found is not None:
            return message, found[0], _def_line(found[1]) + line - 1
    return message, None, None


def _holds(src, line, column, text=""):
    """Whether a function's source has a line `line` (from 1) reaching `column` (from 0), `text` there."""
    lines = src.splitlines()
    return 1 <= line <= len(lines) and column <= len(lines[line - 1]) and lines[line - 1][column:].startswith(text)


def _ptx_origin(ptx, line, modules):
    """(module name, line) of the kernel's source that PTX line `line` was made from, or (None, None): the
    nearest .loc directive above it, whose comment names the file (`.loc 1 12 8  // kernel_0.py:12:8`)."""
    try:
        lines = ptx.read_text().splitlines()[:line]
    except (OSError, UnicodeDecodeError):
        return None, None
    for text in reversed(lines):  # inlined code's too: `.loc 1 20 16, function_name ..., inlined_at ... // f.py:20:16`
        location = re.match(r"\s*\.loc\s.*//\s*(\S+?):(\d+)", text)
        if location and modules is not None:
            module = next((name for name, path in modules.paths.items() if path.name == location.group(1)), None)
            if module:  # else a line of Triton's own helpers (tl.sum, ...): the kernel's is further up
                return module, int(location.group(2))
    return None, None


def _def_line(fn):
    """The line of a function's `def` (its code starts at its first decorator)."""
    import inspect
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if line.lstrip().startswith("def "))
