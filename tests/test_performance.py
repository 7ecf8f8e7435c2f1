"""The performance stage: counters pinned on kernels whose traffic is known by hand, the estimate and its advice,
the protocol's checks of what the worker returns, and the check's report."""
import importlib.util
import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from grader.course import load_course
from grader.pipeline import traffic
from grader.pipeline.load import load_submission
from grader.pipeline.performance import GPUS, _dot_rate, _l2_missed, _reduction_s, estimate, warps_along
from grader.pipeline.protocol import MalformedResult, check_profile

from conftest import ROOT, execute_notebook

COURSE = load_course()


def load_kernel(path, name):
    spec = importlib.util.spec_from_file_location(f"perf_{path.stem}_{abs(hash(str(path)))}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name), str(path)


def profiled(path, puzzle_id, chosen=None, configs=()):
    """The checked profile and the estimate of the kernel in `path` (trusted: the course's own kernels)."""
    puzzle = COURSE.puzzle(puzzle_id)
    kernel, file = load_kernel(path, puzzle.kernel)
    plan = traffic.Plan(kernel, puzzle, list(configs), chosen)
    from grader.pipeline.compile_check import compile_resources
    resources = compile_resources(kernel, plan.args, 90, plan.config)
    counters = check_profile({"configs": list(configs), "resources": resources,
                              **traffic.profile(kernel, plan, resources["lanes"], {file: None})})
    from grader.pipeline.interpret import python_function
    fn = python_function(kernel)
    return counters, estimate(puzzle, fn.__code__.co_varnames[:fn.__code__.co_argcount], counters, "H100", chosen=chosen)


# --- warp requests ----------------------------------------------------------------------------------------------

def test_a_contiguous_float32_block_is_one_request_of_the_fewest_sectors():
    addresses = 4096 + 4 * np.arange(128, dtype=np.int64)
    lanes, sectors, ideal, requests = traffic.warp_requests(addresses, np.ones(128, bool), 4)
    assert (lanes, sectors, ideal, requests) == (128, 16, 16, 1)  # 32 lanes x 4 floats, 512 bytes, 16 sectors


def test_a_walk_down_a_column_touches_a_sector_per_lane():
    addresses = 4 * 1024 * np.arange(64, dtype=np.int64)  # one float per row of a 1024-column matrix
    lanes, sectors, ideal, requests = traffic.warp_requests(addresses, np.ones(64, bool), 4)
    assert (lanes, sectors, ideal, requests) == (64, 64, 8, 2)  # 32 sectors per request where 4 would do


def test_a_tile_contiguous_along_its_first_axis_is_laid_out_along_it():
    rows, cols = np.meshgrid(np.arange(64), np.arange(4), indexing="ij")
    addresses = (4 * (rows + 1024 * cols)).astype(np.int64)  # a transposed load: axis 0 is contiguous
    _, sectors, ideal, _ = traffic.warp_requests(addresses, np.ones(addresses.shape, bool), 4)
    assert sectors == ideal == 32


def test_masked_off_lanes_move_nothing_and_a_broadcast_needs_one_sector():
    addresses = 4 * np.arange(128, dtype=np.int64)
    active = np.arange(128) < 40
    assert traffic.warp_requests(addresses, active, 4)[:3] == (40, 5, 5)
    same = np.zeros(32, dtype=np.int64)  # every lane reads one scalar
    assert traffic.warp_requests(same, np.ones(32, bool), 4)[1:3] == (1, 1)


def test_the_sampled_programs_are_the_first_the_middle_of_every_axis_and_the_last():
    assert traffic.sampled_programs((10, 1, 1)) == [(0, 0, 0), (5, 0, 0), (9, 0, 0)]
    assert traffic.sampled_programs((32, 128, 1)) == [(0, 0, 0), (16, 64, 0), (31, 127, 0)]
    assert traffic.sampled_programs((1, 1, 1)) == [(0, 0, 0)]


def test_one_program_stands_for_all_where_each_does_the_same_work_and_the_middle_one_runs_where_they_differ():
    uniform, _ = profiled(ROOT / "solutions" / "attention.py", "attention")
    assert uniform["programs"] == [[0, 0, 0]]
    growing, performance = profiled(ROOT / "solutions" / "causal_attention.py", "causal_attention")
    assert growing["programs"] == [[0, 0, 0], [31, 127, 0], [16, 64, 0]]
    # Program (m, h) of causal attention reads the key tiles up to its diagonal: m + 1 of BLOCK_M / BLOCK_N keys.
    config = performance.config["kwargs"]
    tiles = sum(s["executions"] for s in growing["sites"] if s["tensor"] == "k")  # masked or not, two lines
    assert tiles == (1 + 32 + 17) * config["BLOCK_M"] // config["BLOCK_N"]


def test_a_footprint_counts_each_element_once_and_how_far_back_it_was_read():
    region = traffic.ProfileRegion("x", __import__("torch").empty(1 << 20))
    footprint = traffic.Footprint(region)
    at = lambda *elements: region.base + 4 * np.array(elements, dtype=np.int64)  # noqa: E731
    assert footprint.add(at(7, 7, 7, 8), moved=1).size == 0  # a broadcast: one element read by three lanes
    assert footprint.distinct_bytes() == 8
    assert footprint.add(at(8, 9, (1 << 20) - 1), moved=17).tolist() == [16]  # 8 again, 16 bytes later
    assert footprint.distinct_bytes() == 16


# --- counters of whole kernels ----------------------------------------------------------------------------------

def test_vector_add_reads_each_input_once_and_writes_the_output_once():
    counters, performance = profiled(ROOT / "solutions" / "vector_add.py", "vector_add")
    block = performance.config["kwargs"]["BLOCK_SIZE"]
    sites = {(s["access"], s["tensor"]): s for s in counters["sites"]}
    assert set(sites) == {("load", "x"), ("load", "y"), ("store", "out")}
    assert counters["programs"] == [[0, 0, 0]]  # every program does the same work
    for site in sites.values():
        assert site["executions"] == 1 and site["lanes"] == block and site["bytes"] == 4 * block
        assert site["sectors"] == site["ideal_sectors"] == block * 4 // 32
    tensors = {t["name"]: t for t in performance.tensors}
    assert tensors["x"]["times_read"] == pytest.approx(1.0) and tensors["x"]["shared_by"] == pytest.approx(1.0)
    assert tensors["out"]["written"] == pytest.approx(4 * 33554432)
    assert performance.bound == "memory" and performance.fraction > 0.9 and not performance.advice
    assert performance.occupancy["registers"] > 0 and performance.occupancy["num_warps"] == \
        (performance.config.get("num_warps") or 4)


def test_a_loops_loads_wait_together_once_an_iteration_and_loops_one_after_another_wait_in_turn():
    counters, _ = profiled(ROOT / "solutions" / "vector_add.py", "vector_add")
    assert counters["rounds"] == 1  # x and y go out together: one round trip in the sampled program
    counters, layer_norm = profiled(ROOT / "solutions" / "layer_norm.py", "layer_norm")
    chunks = 4096 // layer_norm.config["kwargs"]["BLOCK_N"]
    assert counters["rounds"] == 3 * chunks  # three loops over the row's chunks, the last one's x, w and b together
    counters, matmul = profiled(ROOT / "solutions" / "matmul.py", "matmul")
    assert counters["rounds"] == 4096 // matmul.config["kwargs"]["BLOCK_K"]  # a tile of a and of b an iteration
    # Three loops of one iteration each (the row in one block) still wait three times.
    counters, _ = profiled(ROOT / "bench" / "variants" / "layer_norm" / "chunks_of_4096.py", "layer_norm",
                           {"kwargs": {"BLOCK_N": 4096}, "num_warps": 8})
    assert counters["rounds"] == 3
    # The same loads from @jit helpers: one round an iteration, as when the kernel issues them itself.
    counters, _ = profiled(ROOT / "tests" / "alternatives" / "layer_norm" / "jit_helpers_row_statistics.py",
                           "layer_norm")
    assert counters["rounds"] == 3 * chunks
    # tl.static_range unrolls its loop: each pass's loads of every chunk go out together. The second pass loads the
    # first's addresses again with the same hints: in the compiled kernel they are the first's, kept in registers.
    counters, _ = profiled(ROOT / "tests" / "alternatives" / "layer_norm" / "constexpr_row_length_static_range.py",
                           "layer_norm")
    assert counters["rounds"] == 2
    # Unless a reduction comes between them: a barrier each iteration's loads wait for.
    counters, _ = profiled(ROOT / "tests" / "alternatives" / "softmax" / "chunked_static_range.py", "softmax")
    assert counters["rounds"] == 8 + 1  # 8 chunks, each after the last one's max and sum; then 8 at once


def test_a_load_the_compiler_removes_moves_nothing(tmp_path):
    """x loaded again on another line, the same addresses with nothing stored between: the compiled kernel loads
    it once (the TritonGPU IR has one load of it), and so does the profile: no advice to read it once."""
    source = (ROOT / "solutions" / "vector_add.py").read_text()
    old = "    y = tl.load(y_ptr + offsets, mask=mask)\n"
    assert old in source
    path = tmp_path / "vector_add.py"
    path.write_text(source.replace(old, old + "    x = tl.load(x_ptr + offsets, mask=mask) * 1.0\n"))
    counters, performance = profiled(path, "vector_add")
    plain, solution = profiled(ROOT / "solutions" / "vector_add.py", "vector_add")
    def read(profile):
        return sum(site["bytes"] for site in profile["sites"] if site["tensor"] == "x" and site["access"] == "load")
    assert read(counters) == read(plain)
    assert performance.predicted_s == pytest.approx(solution.predicted_s, rel=0.02) and not performance.advice


def test_a_row_read_three_times_is_counted_and_named_with_its_lines():
    counters, performance = profiled(ROOT / "solutions" / "layer_norm.py", "layer_norm")
    x = next(t for t in performance.tensors if t["name"] == "x")
    assert x["times_read"] == pytest.approx(3.0)
    assert len(x["lines"]) == 3
    assert any("reads its part of x 3.0 times" in advice for advice in performance.advice)


def test_lanes_laid_along_an_axis_the_compiler_chose_are_grouped_along_it():
    rows, cols = np.meshgrid(np.arange(4), np.arange(64), indexing="ij")
    addresses = (4 * (rows + 1024 * cols)).astype(np.int64)  # contiguous along axis 0, the lanes along axis 1
    lanes, sectors, ideal, requests = traffic.warp_requests(addresses, np.ones(addresses.shape, bool), 4, lane_axis=1)
    assert (lanes, sectors, ideal, requests) == (256, 256, 32, 8)  # 8 requests of 32 columns: a sector a lane
    assert traffic.warp_requests(addresses, np.ones(addresses.shape, bool), 4)[1] == 64  # 4 floats a lane, 16 bytes



def test_the_lanes_of_each_load_and_store_are_read_from_the_tritongpu_ir():
    from grader.pipeline.compile_check import lane_axes
    ttgir = textwrap.dedent("""\
        #blocked = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32, 1], warpsPerCTA = [1, 4], order = [0, 1]}>
        #blocked1 = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
        #blocked2 = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
        #loc = loc("/k/kernel_0.py":5:0)
        module {
            %a = tt.load %p, %m : tensor<128x!tt.ptr<f32>, #blocked1> loc(#loc3)
            %b = tt.load %q : tensor<32x64x!tt.ptr<f16>, #blocked2> loc(#loc4)
            %c = ttg.async_copy_global_to_local %r, %buf : tensor<64x32x!tt.ptr<f16>, #blocked> -> !ttg.memdesc<64x32xf16> loc(#loc5)
            tt.store %s, %v, %m2 : tensor<64x32x!tt.ptr<f32>, #blocked> loc(#loc6)
        } loc(#loc)
        #loc1 = loc("/k/kernel_0.py":12:8)
        #loc2 = loc("/k/kernel_1.py":3:4)
        #loc3 = loc("x"(#loc1))
        #loc4 = loc(#loc1)
        #loc5 = loc(callsite(#loc2 at #loc1))
        #loc6 = loc("out"(#loc7))
        #loc7 = loc(fused[#loc1, #loc2])
        """)
    # The 1-D load has one axis anyway; the tile whose lanes spread over two axes is left to the addresses. Every
    # access is listed, with the axis where its lanes lie along one.
    assert lane_axes(ttgir) == [["/k/kernel_0.py", 12, "load", None], ["/k/kernel_0.py", 12, "load", None],
                                ["/k/kernel_1.py", 3, "load", 0], ["/k/kernel_0.py", 12, "store", 0]]
    aliased = ttgir.replace("#blocked2> loc(#loc4)", "#blocked> loc(#loc4)")
    assert ["/k/kernel_0.py", 12, "load", 0] in lane_axes(aliased)


def test_a_store_is_counted_as_the_compiled_kernel_lays_its_lanes(tmp_path):
    """A tile held transposed, whose column offsets are scaled by a run-time 1: the compiler cannot prove the
    columns contiguous and chooses the lanes' axis itself (Triton 3.9 along the rows, a sector a lane; Triton 3.6
    along the columns). The profile follows the compile, whichever it is, not the addresses."""
    from grader.pipeline.compile_check import compile_resources
    path = tmp_path / "transposed_tile.py"
    path.write_text(textwrap.dedent("""\
        import triton
        import triton.language as tl


        @triton.jit
        def outer_add_kernel(x_ptr, y_ptr, out_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
            one = 1 + N // (N + 1)
            rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
            cols = (tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)) * one
            x = tl.load(x_ptr + rows, mask=rows < M)
            y = tl.load(y_ptr + cols, mask=cols < N)
            mask = (cols[:, None] < N) & (rows[None, :] < M)
            tl.store(out_ptr + cols[:, None] + rows[None, :] * N, y[:, None] + x[None, :], mask=mask)
        """))
    puzzle = COURSE.puzzle("outer_add")
    kernel, file = load_kernel(path, puzzle.kernel)
    plan = traffic.Plan(kernel, puzzle, [], {"kwargs": {"BLOCK_M": 32, "BLOCK_N": 128}, "num_warps": 4})
    resources = compile_resources(kernel, plan.args, 90, plan.config)
    [(_, line, _, axis)] = [lane for lane in resources["lanes"] if lane[2] == "store"]
    counters = traffic.profile(kernel, plan, resources["lanes"], {file: None})
    store = next(site for site in counters["sites"] if site["access"] == "store")
    assert store["line"] == line == 13
    per_request = (store["sectors"] / store["requests"], store["ideal_sectors"] / store["requests"])
    assert per_request == ((32, 4) if axis == 1 else (16, 16))


def test_an_uncoalesced_store_is_found_at_its_line(tmp_path):
    variant = ROOT / "bench" / "variants" / "outer_add" / "column_strips.py"
    chosen = {"kwargs": {"BLOCK_M": 1024, "BLOCK_N": 1}, "num_warps": 4}
    _, performance = profiled(variant, "outer_add", chosen)
    store = next(a for a in performance.accesses if a["access"] == "store")
    assert store["sectors_per_request"] == pytest.approx(32.0) and store["ideal_per_request"] == pytest.approx(4.0)
    out = next(t for t in performance.tensors if t["name"] == "out")
    assert out["write_sectors"] == pytest.approx(8.0)  # a 1 GiB output: DRAM writes 32 bytes for each 4 stored
    h100 = GPUS["H100"]  # ... after reading the 32 bytes it completes (measured: 5.1 ms)
    assert performance.ceilings["memory"] >= 8 * out["bytes"] * (1 / h100.read_bandwidth + 1 / h100.write_bandwidth)
    assert performance.bound == "memory"
    assert f"stores of out at line {store['line']} are not coalesced" in performance.advice[0]
    _, good = profiled(ROOT / "solutions" / "outer_add.py", "outer_add")
    assert good.predicted_s * 2 < performance.predicted_s


def test_a_float32_dot_in_ieee_precision_is_priced_at_the_cuda_cores(tmp_path):
    source = (ROOT / "solutions" / "matmul.py").read_text()
    upcast = source.replace("acc = tl.dot(tl.load(a_ptrs), tl.load(b_ptrs), acc)",
                            "acc = tl.dot(tl.load(a_ptrs).to(tl.float32), tl.load(b_ptrs).to(tl.float32), acc, "
                            "input_precision=\"ieee\")")
    assert upcast != source
    path = tmp_path / "matmul.py"
    path.write_text(upcast)
    counters, performance = profiled(path, "matmul")
    [dot] = counters["dots"]
    assert (dot["a"], dot["b"]) == ("fp32", "fp32")
    config = performance.config["kwargs"]
    assert (dot["m"], dot["n"], dot["k"]) == (config["BLOCK_M"], config["BLOCK_N"], config["BLOCK_K"])
    assert sum(d["flops"] for d in performance.dots) == pytest.approx(2 * 4096 ** 3)
    assert performance.bound == "compute"
    assert any("runs on the CUDA cores" in advice for advice in performance.advice)
    _, fast = profiled(ROOT / "solutions" / "matmul.py", "matmul")
    assert fast.predicted_s * 5 < performance.predicted_s


def test_tiny_blocks_are_latency_bound_and_told_to_grow():
    chosen = {"kwargs": {"BLOCK_SIZE": 32}, "num_warps": 1}
    _, performance = profiled(ROOT / "bench" / "variants" / "vector_add" / "tiny_blocks.py", "vector_add", chosen)
    assert performance.programs == 33554432 // 32
    assert performance.bound == "latency"
    assert "too small to keep the memory busy" in performance.advice[0]


def test_spills_beyond_the_l2_go_to_dram_and_back():
    chosen = {"kwargs": {"BLOCK_SIZE": 16384}, "num_warps": 1}
    _, spilling = profiled(ROOT / "bench" / "variants" / "vector_add" / "huge_blocks_one_warp.py", "vector_add",
                           chosen)
    assert spilling.occupancy["spills"] > 4096  # 512 elements a thread of each input: bytes a thread
    assert spilling.bound == "memory" and "spills" in spilling.advice[0]
    _, solution = profiled(ROOT / "solutions" / "vector_add.py", "vector_add")
    assert spilling.predicted_s > 3 * solution.predicted_s  # measured on an H100: 534 us against 137 us


def test_exponentials_are_counted():
    counters, _ = profiled(ROOT / "solutions" / "softmax.py", "softmax")
    assert counters["special"] == 4096  # one exponential per element of the sampled row


def test_arithmetic_on_the_values_is_counted_and_on_the_addresses_not(tmp_path):
    counters, _ = profiled(ROOT / "solutions" / "softmax.py", "softmax")
    # Each element of the sampled row: reduced by tl.max, less the max, reduced by tl.sum, divided by the sum.
    assert len(counters["programs"]) == 1 and counters["arithmetic"] == 4 * 4096
    source = (ROOT / "solutions" / "attention.py").read_text()
    zeroed = source.replace("k = tl.load(k_ptr + kv_offsets)\n",
                            "k = tl.where(keys[:, None] < N, tl.load(k_ptr + kv_offsets), 0.0)\n")
    assert zeroed != source
    path = tmp_path / "attention.py"
    path.write_text(zeroed)
    counters, performance = profiled(path, "attention")
    plain, _ = profiled(ROOT / "solutions" / "attention.py", "attention")
    config, sizes = performance.config["kwargs"], performance.sizes
    # One tl.where of floats per element of each key tile; its comparison of key indices is the mask's, not counted.
    tiles = sizes["N"] // config["BLOCK_N"]
    assert len(counters["programs"]) == len(plain["programs"]) == 1
    assert counters["arithmetic"] - plain["arithmetic"] == tiles * config["BLOCK_N"] * sizes["D"]


def test_programs_that_do_unequal_work_get_no_estimate(tmp_path):
    """Where some programs work and others do not (a persistent kernel's first ones do every tile), the sampled
    programs, scaled to the grid, store the output more or less than once: the estimate says why it has no answer
    instead."""
    source = (ROOT / "solutions" / "matmul.py").read_text()
    old = "    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)\n"
    assert old in source
    # The programs of an even number return at once: the sampled ones, 0, 528 and 1023, store one tile in three.
    path = tmp_path / "matmul.py"
    path.write_text(source.replace("    tiles_m, tiles_n = tl.num_programs(0), tl.num_programs(1)\n",
                                   "    tiles_m, tiles_n = tl.num_programs(0), tl.num_programs(1)\n"
                                   "    if (tl.program_id(0) * tiles_n + tl.program_id(1)) % 2 == 0:\n"
                                   "        return\n"))
    _, performance = profiled(path, "matmul")
    assert performance.error and "do unequal work" in performance.error and "store 0.33 times c" in performance.error


def test_an_estimate_faster_than_the_roofline_is_refused(tmp_path):
    """A kernel that tells the benchmark's size from the cases' and skips its loads there stores every element
    (no unequal work) in a third of the least time any vector add takes: no estimate, and why."""
    source = (ROOT / "solutions" / "vector_add.py").read_text()
    old = ("    x = tl.load(x_ptr + offsets, mask=mask)\n    y = tl.load(y_ptr + offsets, mask=mask)\n"
           "    tl.store(out_ptr + offsets, x + y, mask=mask)\n")
    assert old in source
    path = tmp_path / "vector_add.py"
    path.write_text(source.replace(old, "    if n_elements > 1000000:\n"
                                        "        tl.store(out_ptr + offsets, offsets.to(out_ptr.dtype.element_ty), mask=mask)\n"
                                        "    else:\n" + "".join("    " + line + "\n" for line in old.splitlines())))
    _, performance = profiled(path, "vector_add")
    assert performance.error and "times faster than any kernel can be" in performance.error


def test_an_output_zeroed_then_added_into_with_atomics_is_stored_once(tmp_path):
    """A row sum that zeroes its output with tl.store and adds each block's partial sum with tl.atomic_add: the
    sampled programs write each element once between the store and the atomics (not twice: no unequal work)."""
    path = tmp_path / "row_sum.py"
    path.write_text(textwrap.dedent('''\
        import triton
        import triton.language as tl


        @triton.jit
        def row_sum_kernel(x_ptr, out_ptr, N, stride_m, stride_n, BLOCK_N: tl.constexpr):
            row = tl.program_id(0)
            tl.store(out_ptr + row, 0.0)
            for start in range(0, N, BLOCK_N):
                cols = start + tl.arange(0, BLOCK_N)
                x = tl.load(x_ptr + row * stride_m + cols * stride_n, mask=cols < N, other=0.0)
                tl.atomic_add(out_ptr + row, tl.sum(x.to(tl.float32), axis=0))
        '''))
    _, performance = profiled(path, "row_sum")
    assert not performance.error and performance.predicted_s > 0


def test_the_summary_says_which_configuration_it_estimated():
    from grader.pipeline.performance import summary
    _, performance = profiled(ROOT / "solutions" / "matmul.py", "matmul")
    assert "(BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, 8 warps, 3 stages): about" in summary(performance.to_dict())[0]


def test_the_exponentials_and_the_other_arithmetic_share_the_time_between_the_dots():
    counters, performance = profiled(ROOT / "solutions" / "attention.py", "attention")
    spec = GPUS["H100"]
    per_program = performance.programs / len(counters["programs"])
    exponentials = counters["special"] * per_program / (spec.special_per_sm_clock * spec.sms * spec.clock_hz)
    arithmetic = counters["arithmetic"] * per_program / (spec.alu_per_sm_clock * spec.sms * spec.clock_hz)
    assert exponentials > arithmetic  # attention's softmax: an exponential for every 6 other operations
    from grader.pipeline.interpret import python_function
    fn = python_function(load_kernel(ROOT / "solutions" / "attention.py", "attention_kernel")[0])
    params = fn.__code__.co_varnames[:fn.__code__.co_argcount]
    without = estimate(COURSE.puzzle("attention"), params, {**counters, "arithmetic": 0}, "H100")
    assert without.ceilings["compute"] == pytest.approx(performance.ceilings["compute"])
    heavy = estimate(COURSE.puzzle("attention"), params, {**counters, "arithmetic": 4 * counters["arithmetic"]},
                     "H100")
    assert heavy.ceilings["compute"] == pytest.approx(
        performance.ceilings["compute"] - exponentials + 4 * arithmetic)


def test_each_reduction_is_counted_with_its_line_shape_and_axis():
    counters, performance = profiled(ROOT / "solutions" / "online_softmax.py", "online_softmax")
    block, chunks = performance.config["kwargs"]["BLOCK_N"], 4096 // performance.config["kwargs"]["BLOCK_N"]
    assert {r["line"]: (r["shape"], r["axis"], r["executions"]) for r in counters["reductions"]} == {
        11: ([block], 0, 1), 12: ([block], 0, 1),  # before the loop, once in the sampled program
        16: ([block], 0, chunks), 18: ([block], 0, chunks)}
    counters, _ = profiled(ROOT / "solutions" / "attention.py", "attention")
    assert {(len(r["shape"]), r["axis"]) for r in counters["reductions"]} == {(2, 1)}  # the rows of a tile


def test_a_re_read_is_counted_with_the_bytes_the_program_moved_since():
    counters, _ = profiled(ROOT / "solutions" / "online_softmax.py", "online_softmax")
    # The second pass reads each chunk again after the whole row (16 KiB) was read, and the chunks before it
    # stored: 16 to 28 KiB later, all in the bucket of 2**14 bytes.
    assert counters["rereads"] == [{"tensor": "x", "distance": 2 ** 14, "bytes": 4096 * 4}]
    counters, _ = profiled(ROOT / "solutions" / "vector_add.py", "vector_add")
    assert counters["rereads"] == []


def test_data_read_again_comes_from_dram_once_the_l2_has_moved_on():
    h100 = GPUS["H100"]
    assert _l2_missed(h100, 0.05 * h100.l2_bytes) == 0.0
    assert _l2_missed(h100, 0.55 * h100.l2_bytes) == pytest.approx(0.5)
    assert _l2_missed(h100, 2 * h100.l2_bytes) == 1.0


def test_warps_lie_along_the_contiguous_axis_first():
    assert warps_along([1024], 4, 4) == [4]
    assert warps_along([8, 1024], 8, 4) == [1, 8]  # a row of 1024 holds 256 lanes of 4: every warp
    assert warps_along([64, 64], 4, 4) == [4, 1]  # 16 lanes of 4 hold a row: each warp its own rows
    assert warps_along([2, 16], 4, 4) == [4, 1]


def test_reductions_in_a_loop_across_sixteen_warps_are_latency_and_named_by_their_lines():
    chosen = {"kwargs": {"BLOCK_N": 256}, "num_warps": 16}
    counters, slow = profiled(ROOT / "bench" / "variants" / "online_softmax" / "chunks_of_256_sixteen_warps.py",
                              "online_softmax", chosen)
    looped = sorted({r["line"] for r in counters["reductions"] if r["executions"] > len(counters["programs"])})
    assert slow.bound == "latency"
    assert f"reductions at lines {', '.join(map(str, looped))} run 16 times a program, each across its 16 " \
           "warps" in slow.advice[0]
    _, fast = profiled(ROOT / "solutions" / "online_softmax.py", "online_softmax")
    assert slow.predicted_s > 2 * fast.predicted_s  # measured on an H100: 336 us against 134 us


def test_a_program_alone_on_its_sm_waits_for_its_own_arithmetic():
    """Attention's 128x128 tiles need so many registers that one program fits on an SM: with no other program to
    overlap them, its round trips to memory and its tl.dots take turns (measured on an H100: 1753 us against the
    solution's 1238 us, for the same flops). The solution's two programs an SM overlap them."""
    chosen = {"kwargs": {"BLOCK_M": 128, "BLOCK_N": 128}, "num_warps": 8, "num_stages": 2}
    _, alone = profiled(ROOT / "bench" / "variants" / "attention" / "tiles_128x128_two_stages.py", "attention",
                        chosen)
    _, paired = profiled(ROOT / "solutions" / "attention.py", "attention")
    assert (alone.occupancy["programs_per_sm"], paired.occupancy["programs_per_sm"]) == (1, 2)
    assert (alone.bound, paired.bound) == ("compute", "compute")
    # The same arithmetic, and the round trips the solution overlaps with it waited for too.
    assert alone.ceilings["compute"] == pytest.approx(paired.ceilings["compute"] + alone.ceilings["latency"], rel=0.01)
    assert alone.predicted_s > 1.2 * paired.predicted_s
    assert alone.advice[0].startswith("only one program fits on an SM at once, limited by registers: while it "
                                      "waits for memory the SM has nothing else to run")
    assert not paired.advice


def test_whether_a_dots_tiles_are_copied_ahead_is_read_from_the_tritongpu_ir():
    from grader.pipeline.compile_check import tiles_pipelined
    pipelined = """
        %t = ttg.async_copy_global_to_local %p, %buf : tensor<128x64x!tt.ptr<f16>, #blocked> -> <128x64xf16>
        %d = ttng.warp_group_dot %a, %b, %acc {isAsync = true} : !ttg.memdesc<128x64xf16>
        %w = ttng.warp_group_dot_wait %d {pendings = 0 : i32}"""
    assert tiles_pipelined(pipelined) is True
    assert tiles_pipelined(pipelined.replace("ttg.async_copy_global_to_local", "ttng.async_tma_copy_global_to_local"))
    waited = """
        %a = tt.load %p : tensor<128x64x!tt.ptr<f16>, #blocked>
        %s = ttg.local_alloc %a : (tensor<128x64xf16, #blocked>) -> !ttg.memdesc<128x64xf16>
        %d = ttng.warp_group_dot %s, %b, %acc : !ttg.memdesc<128x64xf16>"""
    assert tiles_pipelined(waited) is False
    assert tiles_pipelined(waited.replace("ttng.warp_group_dot", "tt.dot")) is False  # an mma.sync or FMA dot
    assert tiles_pipelined("%a = tt.load %p : tensor<1024x!tt.ptr<f32>, #blocked>") is None  # no dot: nothing to say


def test_a_dot_whose_tiles_are_not_loaded_ahead_waits_for_them_and_is_told_why(tmp_path):
    """One pipeline stage: no asynchronous copies in the compiled kernel, the dot waits for each iteration's tiles.
    Measured on an H100: matmul's epilogue 410 us in one stage against 227 us in three, at two programs an SM."""
    variant = ROOT / "bench" / "variants" / "matmul_epilogue" / "one_stage.py"
    chosen = {"kwargs": {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64}, "num_warps": 8}
    counters, waits = profiled(variant, "matmul_epilogue", dict(chosen, num_stages=1))
    _, ahead = profiled(variant, "matmul_epilogue", dict(chosen, num_stages=3))
    assert (counters["resources"]["pipelined"], waits.occupancy["pipelined"], ahead.occupancy["pipelined"]) == \
        (False, False, True)
    resident = waits.occupancy["programs_per_sm"]
    assert resident >= 2
    fetch = max(ahead.ceilings["memory"], ahead.ceilings["requests"])
    work = ahead.ceilings["compute"]
    # The larger of moving the tiles and multiplying them, and the share of the smaller no other program hides.
    assert max(waits.ceilings.values()) == pytest.approx(max(fetch, work) + min(fetch, work) / resident, rel=0.02)
    assert waits.predicted_s > 1.2 * ahead.predicted_s
    assert waits.advice[0].startswith("the tiles of the tl.dot at line 22 are loaded in the iteration that "
                                      "multiplies them")
    assert not any("loaded in the iteration" in advice for advice in ahead.advice)


def test_a_dot_a_program_runs_once_on_float32_inputs_is_told_what_applies_to_it():
    """Outer add as one padded tl.dot of float32 inputs: no loop has next tiles to load ahead, and no float16
    operands were there to keep; what the tensor cores would take instead is TF32, with its rounding."""
    path = ROOT / "tests" / "alternatives" / "outer_add" / "dot_with_ones.py"
    counters, result = profiled(path, "outer_add", {"kwargs": {"BLOCK_M": 32, "BLOCK_N": 128}, "num_warps": 4})
    assert counters["resources"]["pipelined"] is False
    [dot] = [advice for advice in result.advice if "tl.dot" in advice]
    assert "in IEEE float32" in dot and 'input_precision="tf32"' in dot and "10 bits of mantissa" in dot
    assert "float16 operands" not in dot and "loaded in the iteration" not in dot


def test_a_row_reduction_of_a_dot_tile_stays_within_each_warp():
    spec = GPUS["H100"]
    row = {"line": 1, "shape": [128, 64], "axis": 1, "executions_per_program": 1}
    column = dict(row, axis=0)
    dot = {"dots": [{"m": 128}], "itemsize": 2}
    assert _reduction_s(spec, row, 4, dot) == spec.reduction_warp_s
    assert _reduction_s(spec, column, 4, dot) == spec.reduction_block_s
    assert _reduction_s(spec, column, 1, dot) == spec.reduction_warp_s
    blocked = {"dots": [], "itemsize": 2}  # lanes of 8 float16 elements
    assert _reduction_s(spec, row, 4, blocked) == spec.reduction_warp_s  # 8 lanes hold a row of 64
    assert _reduction_s(spec, dict(row, shape=[16, 1024]), 4, blocked) == spec.reduction_block_s  # 128 lanes a row


# --- what the worker returns is data, checked -------------------------------------------------------------------

GOOD = {"configs": [], "programs": [[0, 0, 0]], "resources": {"registers": 32, "spills": 0, "shared": 0, "num_warps": 4},
        "special": 0, "arithmetic": 0, "rounds": 1,
        "sites": [{"line": 3, "access": "load", "tensor": "x", "executions": 1, "lanes": 4, "bytes": 16,
                   "sectors": 1, "ideal_sectors": 1, "requests": 1}],
        "dots": [], "unique": [{"tensor": "x", "access": "load", "bytes": 16}],
        "reductions": [{"line": 4, "shape": [16, 8], "axis": 1, "executions": 1}],
        "rereads": [{"tensor": "x", "distance": 4096, "bytes": 16}]}


@pytest.mark.parametrize("forged", [
    "not a profile",
    {**GOOD, "programs": [[0, 0, 0]] * 4},
    {**GOOD, "resources": {"registers": 9999, "spills": 0, "shared": 0, "num_warps": 4}},
    {**GOOD, "resources": {"registers": 32, "spills": -1, "shared": 0, "num_warps": 4}},
    {**GOOD, "resources": {**GOOD["resources"], "pipelined": 1}},
    {**GOOD, "resources": {**GOOD["resources"], "pipelined": "yes"}},
    {**GOOD, "sites": [{**GOOD["sites"][0], "bytes": 1.5}]},
    {**GOOD, "sites": [{**GOOD["sites"][0], "access": "teleport"}]},
    {**GOOD, "sites": [GOOD["sites"][0]] * 300},
    {**GOOD, "dots": [{"line": 1, "m": 16, "n": 16, "k": 16, "a": "fp16", "b": "fp16", "precision": 3,
                       "executions": 1}]},
    {**GOOD, "special": True},
    {**GOOD, "arithmetic": -1},
    {**GOOD, "arithmetic": "many"},
    {**GOOD, "rounds": -1},
    {**GOOD, "rounds": 2.5},
    {**GOOD, "rounds": True},
    {**GOOD, "rounds": 10 ** 400},  # pickled ints have no bound: it would overflow the estimate's floats
    {**GOOD, "arithmetic": 2 ** 60},
    {**GOOD, "sites": [{**GOOD["sites"][0], "bytes": 10 ** 30}]},
    {key: value for key, value in GOOD.items() if key != "rounds"},
    {**GOOD, "reductions": [{**GOOD["reductions"][0], "axis": 2}]},
    {**GOOD, "reductions": [{**GOOD["reductions"][0], "shape": [0]}]},
    {**GOOD, "reductions": [{**GOOD["reductions"][0], "shape": [1] * 5}]},
    {**GOOD, "reductions": [GOOD["reductions"][0]] * 65},
    {key: value for key, value in GOOD.items() if key != "reductions"},
    {**GOOD, "rereads": [{**GOOD["rereads"][0], "distance": 0}]},
    {**GOOD, "rereads": [{**GOOD["rereads"][0], "bytes": -16}]},
    {**GOOD, "rereads": [GOOD["rereads"][0]] * 257},
    {key: value for key, value in GOOD.items() if key != "rereads"},
])
def test_a_forged_profile_is_refused(forged):
    with pytest.raises(MalformedResult):
        check_profile(forged)


def test_a_profile_error_is_kept_as_text():
    checked = check_profile({"configs": [], "error": "\x1b[31mboom" + "x" * 1000})
    assert checked["error"].startswith("\\x1b[31mboom") and len(checked["error"]) < 520  # 500 characters kept, escapes shown
    assert check_profile(GOOD)["sites"][0]["bytes"] == 16


# --- the check's report -----------------------------------------------------------------------------------------

def test_check_json_has_a_performance_section_for_passing_puzzles_with_a_benchmark(tmp_path):
    (tmp_path / "vector_add.py").write_text((ROOT / "solutions" / "vector_add.py").read_text())
    (tmp_path / "outer_add.py").write_text((ROOT / "solutions" / "outer_add.py").read_text().replace(
        "mask=mask)", "mask=mask & (rows[:, None] > 0))"))  # wrong: row 0 never written
    done = subprocess.run([sys.executable, "-m", "grader.cli", "check", str(tmp_path), "--json",
                           "--puzzle", "vector_add", "--puzzle", "outer_add"], cwd=ROOT, capture_output=True, text=True)
    report = {p["id"]: p for p in json.loads(done.stdout)["puzzles"]}
    performance = report["vector_add"]["performance"]
    assert performance["gpu"] == "NVIDIA H100 SXM" and performance["bound"] == "memory"
    assert 0.9 < performance["fraction"] <= 1.0
    assert performance["sizes"] == {"N": 33554432}
    assert report["outer_add"]["status"] == "fail" and report["outer_add"]["performance"] is None
    text = subprocess.run([sys.executable, "-m", "grader.cli", "check", str(tmp_path), "--puzzle", "vector_add"],
                          cwd=ROOT, capture_output=True, text=True).stdout
    assert "How fast would it be?" in text and "of the roofline" in text


def test_the_estimate_is_for_the_gpu_chosen_and_compiled_for_its_compute_capability(course):
    from dataclasses import replace

    from grader.pipeline.grade import grade_submission
    from grader.pipeline.protocol import job
    from grader.settings import DEFAULT
    a100 = replace(DEFAULT, estimate_gpu="A100")
    puzzle = course.puzzle("matmul")
    source = load_submission(ROOT / "solutions" / "matmul.py", course, ["matmul"], DEFAULT)["matmul"].source
    assert job("j", puzzle, source, [], DEFAULT, profile=True)["profile"]["target"] == 90
    assert job("j", puzzle, source, [], a100, profile=True)["profile"]["target"] == 80
    estimates = {gpu: grade_submission(course, ROOT / "solutions" / "matmul.py", ["matmul"], performance=True,
                                       settings=replace(DEFAULT, estimate_gpu=gpu)).puzzle("matmul").performance
                 for gpu in ("A100", "H100")}
    assert estimates["A100"]["gpu"] == GPUS["A100"].name and estimates["H100"]["gpu"] == GPUS["H100"].name
    assert estimates["A100"]["predicted_s"] > 1.3 * estimates["H100"]["predicted_s"]
    # The A100 has no warpgroup MMA to miss: its tl.dot runs at its own rate whatever its warps.
    dot = {"a": "fp16", "b": "fp16", "precision": "tf32", "m": 128}
    assert _dot_rate(GPUS["A100"], dot, {"num_warps": 2}) == GPUS["A100"].float16_dot
    assert _dot_rate(GPUS["H100"], dot, {"num_warps": 2}) < GPUS["H100"].float16_dot


def test_an_a100_is_not_told_of_hoppers_warpgroup_mma_and_a_program_too_large_for_its_sm_gets_no_estimate():
    counters, _ = profiled(ROOT / "solutions" / "matmul.py", "matmul")
    from grader.pipeline.interpret import python_function
    fn = python_function(load_kernel(ROOT / "solutions" / "matmul.py", "matmul_kernel")[0])
    params = fn.__code__.co_varnames[:fn.__code__.co_argcount]
    two_warps = {**counters, "resources": {**counters["resources"], "num_warps": 2}}  # the solution's tiles, 2 warps
    h100 = estimate(COURSE.puzzle("matmul"), params, two_warps, "H100")
    a100 = estimate(COURSE.puzzle("matmul"), params, two_warps, "A100")
    assert (h100.bound, a100.bound) == ("compute", "compute")
    assert "an H100's warpgroup MMA needs tiles of at least 64 rows and a multiple of 4 warps" in h100.advice[0]
    assert not any("warpgroup MMA" in advice for advice in a100.advice)
    # 196 KiB of shared memory a program (a 128x256x64 float16 tile in 4 stages): an H100 holds one, an A100 none.
    large = {**counters, "resources": {**counters["resources"], "shared": 196 * 1024}}
    assert estimate(COURSE.puzzle("matmul"), params, large, "H100").error is None
    refused = estimate(COURSE.puzzle("matmul"), params, large, "A100")
    assert refused.error == "one program needs more shared memory than an SM of the NVIDIA A100 SXM 80GB has"
    assert refused.predicted_s == 0


def test_the_estimates_gpu_is_compiled_for_even_where_the_check_compiles_for_others(course):
    from dataclasses import replace

    from grader.pipeline.grade import grade_submission
    from grader.settings import DEFAULT
    only_hopper = replace(DEFAULT, compile_targets=(90,), estimate_gpu="A100")
    result = grade_submission(course, ROOT / "solutions" / "vector_add.py", ["vector_add"], performance=True,
                              settings=only_hopper).puzzle("vector_add")
    assert result.status == "pass" and result.performance["error"] is None
    assert result.performance["occupancy"]["registers"] > 0


def test_an_unknown_gpu_is_named_with_the_ones_the_estimate_knows(tmp_path):
    done = subprocess.run([sys.executable, "-m", "grader.cli", "check", str(ROOT / "solutions"), "--puzzle",
                           "vector_add", "--gpu", "B200"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 2 and "--gpu B200: the performance estimate knows H100, H200, A100, not 'B200'" in \
        done.stderr
    from grader.notebook import check
    with pytest.raises(ValueError, match="knows H100, H200, A100, not 'h100'"):
        check("vector_add", None, gpu="h100")


def test_a_profile_that_takes_too_long_gives_no_estimate_and_takes_no_points():
    from dataclasses import replace

    from grader.pipeline.grade import grade_submission
    from grader.settings import DEFAULT
    report = grade_submission(COURSE, ROOT / "solutions" / "vector_add.py", ["vector_add"],
                              settings=replace(DEFAULT, profile_timeout_s=0.0), performance=True)
    result = report.puzzle("vector_add")
    assert result.status == "pass" and result.points == result.max_points
    assert "took longer than 0 s" in result.performance["error"]
    assert "Crashed" not in result.performance["error"], "the estimate ran out of time: nothing crashed"


@pytest.mark.parametrize("configs,refused", [
    ("[triton.Config({'BLOCK_SIZE': 1024}, num_warps=3)]", "num_warps is one of"),
    ("[triton.Config({'BLOCK_SIZE': 1024})] + [c for c in filter(lambda c: True, [])]", "Lambda"),
    ("[triton.Config({'BLOCK_SIZE': 1024})] * 1025", "1025 tuning configurations: the grader takes at most 1024"),
])
def test_tuning_configurations_the_gpu_stage_refuses_get_no_estimate_and_take_no_points(tmp_path, configs, refused):
    """`bench` reports such a kernel as an error: an estimate would be of a launch that never comes (the course's),
    so the check says why there is none, and the verdict is the cases' alone."""
    from grader.pipeline.grade import grade_submission
    solution = (ROOT / "solutions" / "vector_add.py").read_text()
    path = tmp_path / "vector_add.py"
    path.write_text(solution[:solution.index("@triton.autotune")] + solution[solution.index("@triton.jit"):]
                    + f"\nGPU_CONFIGS = {configs}\n")
    result = grade_submission(COURSE, path, ["vector_add"], performance=True).puzzle("vector_add")
    assert result.status == "pass" and result.points == result.max_points
    assert result.performance["error"].startswith("the GPU stage refuses the kernel's tuning configurations: ")
    assert refused in result.performance["error"]


def test_a_hundred_tuning_configurations_get_an_estimate(tmp_path):
    """A comprehension over tiles, warps and stages gives many: the check takes them as the GPU stage does (a kernel
    tuned over 88 was an error of the check alone, its worker's answer refused as malformed)."""
    from grader.pipeline.grade import grade_submission
    solution = (ROOT / "solutions" / "vector_add.py").read_text()
    path = tmp_path / "vector_add.py"
    path.write_text(solution[:solution.index("@triton.autotune")] + solution[solution.index("@triton.jit"):]
                    + "\nGPU_CONFIGS = [triton.Config({'BLOCK_SIZE': b}, num_warps=w, num_stages=s)\n"
                      "               for b in (256, 512, 1024, 2048) for w in (1, 2, 4, 8) for s in range(1, 8)]\n")
    result = grade_submission(COURSE, path, ["vector_add"], performance=True).puzzle("vector_add")
    assert result.status == "pass" and result.points == result.max_points, [d.message for d in result.diagnostics]
    assert result.performance["error"] is None and result.performance["predicted_s"] > 0


def test_the_estimate_alone_is_the_estimate_of_a_whole_check():
    """A notebook's check makes the estimate after its verdict, in a worker of its own that runs no case: the
    same estimate as the check that makes both."""
    from grader.pipeline import grade
    kernel, _ = load_kernel(ROOT / "solutions" / "matmul.py", "matmul_kernel")
    puzzle = COURSE.puzzle("matmul")
    alone = grade.estimate_source(puzzle, grade.load_kernel(puzzle, kernel).source, COURSE)
    whole = grade.grade_submission(COURSE, ROOT / "solutions" / "matmul.py", ["matmul"], performance=True)
    whole = whole.puzzle("matmul")
    assert alone["error"] is None and alone == whole.performance


@pytest.mark.slow
def test_a_notebook_check_shows_its_verdict_and_then_the_estimate(tmp_path):
    """In a Jupyter kernel check() returns with the verdict; the estimate comes from a thread of its own and joins
    the result and its report (JupyterLab shows the report updated: test_lab_browser.py)."""
    import nbformat
    cells = ['import os, time\nos.environ["TRITON_INTERPRET"] = "1"\nfrom grader.notebook import check',
             (ROOT / "solutions" / "vector_add.py").read_text(),
             'result = check("vector_add", add_kernel)\nprint("at once:", result.performance)',
             'deadline = time.monotonic() + 120\nwhile result.performance is None and time.monotonic() < deadline:\n'
             '    time.sleep(0.05)\nprint("then:", result.performance["bound"], result.performance["error"])']
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    execute_notebook(notebook)
    verdict, estimate_shown = notebook.cells[2].outputs, notebook.cells[3].outputs
    assert "Estimating it on the CPU" in verdict[0].data["text/html"]
    assert verdict[1].text.startswith("vector_add: Vector add - PASS") and "at once: None" in verdict[1].text
    # One print can reach the notebook as several stream messages when the machine is busy.
    assert "".join(output.text for output in estimate_shown if output.output_type == "stream") == "then: memory None\n"


@pytest.mark.slow
def test_an_estimate_that_comes_during_an_nbgrader_test_cell_leaves_its_outputs_alone():
    """A student's own check() cell before the test cell: its estimate arrives while grade() runs, and the test
    cell's outputs are still only its own report and line (anything on stderr would cost it its points)."""
    import nbformat
    cells = ['import os, time\nos.environ["TRITON_INTERPRET"] = "1"\nfrom grader.notebook import check, grade',
             (ROOT / "solutions" / "vector_add.py").read_text(),
             'result = check("vector_add", add_kernel)',
             'points = grade("vector_add", add_kernel)\ndeadline = time.monotonic() + 120\n'
             'while result.performance is None and time.monotonic() < deadline:\n    time.sleep(0.05)\n'
             'time.sleep(1)\nprint(points, result.performance["error"])']
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    execute_notebook(notebook)
    outputs = notebook.cells[3].outputs
    assert [o.output_type for o in outputs] == ["display_data", "stream", "stream"], outputs
    assert all(o.name == "stdout" for o in outputs[1:]) and outputs[2].text == "10 None\n"
    assert "How fast would it be?" not in outputs[0].data["text/html"]


def test_the_advice_names_the_lines_where_the_student_wrote_them(tmp_path):
    """The rebuilt modules leave out docstrings and comments, and a helper module's lines are its own: the advice
    and the accesses name the file and line the student wrote (the layer norm reads x three times)."""
    from grader.pipeline.grade import grade_submission
    solution = ROOT / "solutions" / "layer_norm.py"
    reads = [number for number, text in enumerate(solution.read_text().splitlines(), 1) if "tl.load(x_row" in text]
    result = grade_submission(COURSE, solution, ["layer_norm"], performance=True).puzzle("layer_norm")
    assert f"(layer_norm.py lines {', '.join(map(str, reads))})" in result.performance["advice"][0]
    # A load in a helper module, below a docstring and a comment.
    folder = tmp_path / "student"
    folder.mkdir()
    (folder / "helpers.py").write_text(
        '"""Helpers."""\nimport triton\nimport triton.language as tl\n\n\n# Loads a block.\n@triton.jit\n'
        'def load_block(ptr, offsets, n):\n    return tl.load(ptr + offsets, mask=offsets < n)\n')
    (folder / "vector_add.py").write_text((ROOT / "solutions" / "vector_add.py").read_text().replace(
        "x = tl.load(x_ptr + offsets, mask=mask)", "x = load_block(x_ptr, offsets, n_elements)").replace(
        "import triton.language as tl", "import triton.language as tl\nfrom helpers import load_block"))
    result = grade_submission(COURSE, folder, ["vector_add"], performance=True).puzzle("vector_add")
    assert result.status == "pass"
    where = {access["tensor"]: access["line"] for access in result.performance["accesses"]}
    assert where["x"] == "helpers.py line 9" and where["y"].startswith("vector_add.py line ")


def test_lines_are_told_together_by_file():
    from grader.pipeline.performance import places
    assert places([13]) == "line 13" and places([20, 13, 20]) == "lines 13, 20"
    assert places(["a.py line 20", "a.py line 9", "h.py line 4"]) == "a.py lines 9, 20; h.py line 4"
    assert places(["nb.ipynb cell 3, line 5", "nb.ipynb cell 3, line 7"]) == "nb.ipynb cell 3, lines 5, 7"
    assert places(["line 4 of the kernel's module"]) == "line 4 of the kernel's module"


def test_a_misspelt_puzzle_id_names_the_puzzles():
    from grader.notebook import check
    with pytest.raises(ValueError, match="no puzzle 'vector_ad'.*the puzzles are: vector_add"):
        check("vector_ad", None)


UNIFORMITY = '''
import triton
import triton.language as tl
from triton.language import program_id as pid_of

import triton_helpers


@triton.jit
def _loop(x_ptr, start, end, BLOCK: tl.constexpr):
    total = tl.zeros([BLOCK], tl.float32)
    for i in range(start, end, BLOCK):
        total += tl.load(x_ptr + i + tl.arange(0, BLOCK))
    return total


@triton.jit
def kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    BODY
'''


@pytest.mark.parametrize("body,same", [
    ("tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=offsets < n), mask=offsets < n)", True),
    ("for i in range(0, n, BLOCK):\n        tl.store(out_ptr + offsets, tl.load(x_ptr + i + offsets))", True),
    ("tl.store(out_ptr + offsets, _loop(x_ptr, 0, n, BLOCK))", True),
    # The work depends on the program: its ids, or what it loads, decide a loop's bounds or a branch.
    ("for tile in range(pid, n, tl.num_programs(0)):\n        tl.store(out_ptr + tile, 1.0)", False),
    ("if pid == 0:\n        tl.store(out_ptr + offsets, 1.0)", False),
    ("start = pid * 2\n    end = start + 1\n    tl.store(out_ptr + offsets, _loop(x_ptr, start, end, BLOCK))", False),
    ("count = tl.load(x_ptr)\n    for i in range(count):\n        tl.store(out_ptr + i, 1.0)", False),
    ("last = 0\n    for i in range(n):\n        tl.store(out_ptr + i, 1.0, mask=i < last)\n        last = pid", True),
    ("last = 0\n    for i in range(last, n):\n        last = pid", False),
    ("tl.store(out_ptr + offsets, 1.0 if pid > 0 else 2.0)", False),
    # The program's id under another name, or a helper of a student's module whose name starts with triton
    ("for i in range(pid_of(0)):\n        tl.store(out_ptr + i, 1.0)", False),
    ("for i in range(getattr(tl, 'program_id')(0)):\n        tl.store(out_ptr + i, 1.0)", False),
    ("tl.store(out_ptr + offsets, triton_helpers.loop(x_ptr, 0, n, BLOCK))", True),
    ("tl.store(out_ptr + offsets, triton_helpers.loop(x_ptr, pid, n, BLOCK))", False),
])
def test_one_program_stands_for_all_only_where_no_branch_or_loop_depends_on_the_program(tmp_path, body, same):
    import importlib.util

    from grader.pipeline.interpret import python_function
    (tmp_path / "triton_helpers.py").write_text(  # a student's module, named like Triton's
        "import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
        "def loop(x_ptr, start, end, BLOCK: tl.constexpr):\n    total = tl.zeros([BLOCK], tl.float32)\n"
        "    for i in range(start, end, BLOCK):\n        total += tl.load(x_ptr + i + tl.arange(0, BLOCK))\n"
        "    return total\n")
    path = tmp_path / "uniformity.py"
    path.write_text(UNIFORMITY.replace("BODY", body))
    spec = importlib.util.spec_from_file_location("uniformity", path)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(tmp_path))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("triton_helpers", None)
    assert traffic.same_work_in_every_program(python_function(module.kernel)) is same


PIECES_KERNEL = '''
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK_SIZE": 1024, "PIECES": 1}, num_warps=4),
                          triton.Config({"BLOCK_SIZE": 1024, "PIECES": 4}, num_warps=2)], key=["n_elements"])
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr, PIECES: tl.constexpr):
    for piece in tl.static_range(PIECES):
        offsets = tl.program_id(0) * BLOCK_SIZE + piece * (BLOCK_SIZE // PIECES) + tl.arange(0, BLOCK_SIZE // PIECES)
        mask = offsets < n_elements
        tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask),
                 mask=mask)
'''


def test_each_tuning_configuration_is_estimated_with_its_own_constants(tmp_path):
    """The check estimates the first tuning configuration and says the autotuner times the others; the estimate of
    another is made with its values of the kernel's own parameters (PIECES=4: four loads of x per program)."""
    from grader.pipeline import grade
    from grader.pipeline.performance import summary
    path = tmp_path / "vector_add.py"
    path.write_text(PIECES_KERNEL)
    puzzle = COURSE.puzzle("vector_add")
    first = grade.grade_submission(COURSE, path, ["vector_add"], performance=True).puzzle("vector_add").performance
    assert first["error"] is None
    assert [(config["kwargs"], config["constants"], config["num_warps"]) for config in first["tuning"]] == \
        [({"BLOCK_SIZE": 1024}, {"PIECES": 1}, 4), ({"BLOCK_SIZE": 1024}, {"PIECES": 4}, 2)]
    assert "estimated at the first of the 2 tuning configurations" in summary(first)[1]

    def loads_of_x(performance):
        return [a["executions_per_program"] for a in performance["accesses"] if a["tensor"] == "x" and
                a["access"] == "load"]
    assert loads_of_x(first) == [1.0]
    source = load_submission(path, COURSE, ["vector_add"])["vector_add"].source
    second = grade.estimate_source(puzzle, source, COURSE, config=first["tuning"][1])
    assert second["error"] is None and second["config"]["num_warps"] == 2
    assert loads_of_x(second) == [4.0]
    assert "estimated at one of the 2 tuning configurations" in summary(second)[1]
