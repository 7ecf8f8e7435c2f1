"""Cases build the layouts the puzzle asks for, and comparison reports what is wrong and where."""
import numpy as np
import torch

from grader.pipeline.cases import is_unwritten, make_case
from grader.pipeline.compare import compare


def _case(course, puzzle_id, name):
    puzzle = course.puzzle(puzzle_id)
    return make_case(puzzle, next(i for i, c in enumerate(puzzle.cases) if c.name == name))


def test_split_layout_launches_once_per_column_view(course):
    case = _case(course, "strided_views", "split columns")
    x = case.buffers["x"]
    assert [tuple(v.shape) for v in x.views] == [(4, 2), (4, 4)]
    assert all(v.stride() == (6, 1) for v in x.views)
    assert [launch.args[1:5] for launch in case.launches] == [[4, 2, 6, 1], [4, 4, 6, 1]]
    assert all(v.untyped_storage().data_ptr() == x.parent.untyped_storage().data_ptr() for v in x.views)
    assert torch.equal(case.expected["x"], x.parent + 1), "the parent must show both writes"


def test_other_layouts_have_the_strides_they_promise(course):
    assert _case(course, "strided_views", "every other column").buffers["x"].views[0].stride() == (60, 2)
    assert _case(course, "strided_views", "transposed").buffers["x"].views[0].stride() == (1, 40)
    offset = _case(course, "strided_views", "storage offset").buffers["x"].views[0]
    assert offset.storage_offset() == 5 and offset.is_contiguous()


def test_outputs_start_as_the_unwritten_nan_and_inputs_are_random(course):
    case = _case(course, "vector_add", "ragged tail")
    assert is_unwritten(case.buffers["out"].parent).all()
    assert not torch.isnan(case.buffers["x"].parent).any()
    assert torch.equal(case.expected["out"], case.buffers["x"].parent + case.buffers["y"].parent)


def test_same_seed_same_inputs_other_seed_other_inputs(course):
    puzzle = course.puzzle("vector_add")
    a, b, c = make_case(puzzle, 0, seed=1), make_case(puzzle, 0, seed=1), make_case(puzzle, 0, seed=2)
    assert torch.equal(a.buffers["x"].parent, b.buffers["x"].parent)
    assert not torch.equal(a.buffers["x"].parent, c.buffers["x"].parent)


def _run_reference_kernel(case):
    """What a correct kernel would leave in memory, every element stored by program 0."""
    for name, expected in case.expected.items():
        buffer = case.buffers[name]
        buffer.parent.copy_(expected)
        buffer.writers[buffer.view_positions()] = 0


def test_a_correct_result_has_no_diagnostics(course):
    case = _case(course, "strided_views", "split columns")
    _run_reference_kernel(case)
    assert compare(case) == []


def test_mismatch_report_gives_count_errors_and_the_first_wrong_elements(course):
    case = _case(course, "vector_add", "ragged tail")
    _run_reference_kernel(case)
    out = case.buffers["out"].parent
    out[[3, 500]] += torch.tensor([0.5, 2.0])
    [diagnostic] = compare(case)
    assert diagnostic.kind == "mismatch" and diagnostic.case == "ragged tail"
    lines = diagnostic.message.splitlines()
    assert lines[0].startswith("out: 2 of 1000 elements are wrong (0.2%); max abs error 2, max rel error")
    assert lines[1].split() == ["index", "got", "expected", "stored", "by"]
    assert lines[2].split()[:3] == ["index", "(3,)", f"{float(out[3]):.6g}"]
    assert lines[2].split()[3] == f"{float(case.expected['out'][3]):.6g}"
    assert lines[2].endswith("program 0")


def test_unwritten_elements_are_told_apart_from_wrong_values(course):
    case = _case(course, "vector_add", "ragged tail")
    _run_reference_kernel(case)
    out = case.buffers["out"]
    out.parent[990:] = out.original[990:]  # still the NaN the output was filled with
    out.writers[990:] = -1
    [diagnostic] = compare(case)
    assert diagnostic.kind == "unwritten_output"
    assert "10 of 1000 elements were never written, the first at index (990,)" in diagnostic.message


def test_an_output_read_before_it_was_stored_is_named_when_its_values_are_wrong(course):
    """Reading an output before storing it (an atomic_add into it, `out += ...` through tl.load) reads garbage on
    a GPU: said first, with the program that read, when the output is wrong; a read that did no harm, or a read
    of a tensor that is also an input (in place), is not a fault."""
    case = _case(course, "vector_add", "ragged tail")
    _run_reference_kernel(case)
    out = case.buffers["out"]
    out.read_unwritten = (7, 1)  # program 1 read element 7 before any store
    assert compare(case) == [], "the values are right: the read did no harm"
    out.parent[7] = float("nan")
    kinds = [d.kind for d in compare(case)]
    assert kinds == ["read_before_write", "nonfinite"]
    [first] = [d for d in compare(case) if d.kind == "read_before_write"]
    assert first.message.startswith("out: program 1 read index (7,) before any program stored it")
    case = _case(course, "strided_views", "split columns")
    _run_reference_kernel(case)
    x = case.buffers["x"]
    x.read_unwritten = (0, 0)
    x.parent[0] += 1
    assert "read_before_write" not in [d.kind for d in compare(case)], "x is read and written in place"


def test_changed_input_and_writes_around_a_view_are_caught(course):
    case = _case(course, "vector_add", "ragged tail")
    _run_reference_kernel(case)
    case.buffers["y"].parent[7] = 42.0
    assert [d.kind for d in compare(case)] == ["input_modified"]
    case = _case(course, "strided_views", "every other column")
    _run_reference_kernel(case)
    x = case.buffers["x"]
    x.parent[1] += 1  # a gap element of parent[:, ::2]
    diagnostics = compare(case)
    assert [d.kind for d in diagnostics] == ["outside_write"]
    assert "parent element 1, outside the view (shape (21, 30), stride (60, 2)" in diagnostics[0].message


def test_positions_map_view_elements_to_the_parent(course):
    case = _case(course, "strided_views", "transposed")
    x = case.buffers["x"]
    view, positions = x.views[0], x.positions[0]
    assert torch.equal(x.parent[positions.reshape(-1)], view.reshape(-1))
    assert np.array_equal(x.view_positions(), np.arange(x.parent.numel()))
    assert x.locate(int(positions[3, 5])) == (0, (3, 5))


def test_the_largest_case_runs_again_at_each_block_size_the_gpu_stage_may_launch(course):
    """The benchmark's default blocks and each tuning configuration's, once each, on the public case of the largest
    output, with its tensors; blocks that are not powers of 2 or too large to interpret are left out."""
    from grader.course import configuration_case_base, with_configuration_cases
    matmul = course.puzzle("matmul")
    configured = with_configuration_cases(matmul, (
        {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64}, {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64},
        {"BLOCK_M": 100}, {"BLOCK_M": 2 ** 17}, {"BLOCK_M": 1024, "BLOCK_N": 1024, "BLOCK_K": 1024}, {"BLOCK_M": 32}))
    added = configured.cases[len(matmul.cases):]
    base = max((s for s in matmul.cases), key=lambda s: s.symbols["M"] * s.symbols["N"])
    # The default launch's blocks first; a configuration's missing blocks are the default's, as the GPU stage's.
    assert [s.name for s in added] == [f"{base.name} (blocks BLOCK_M=128, BLOCK_N=128, BLOCK_K=64)",
                                       f"{base.name} (blocks BLOCK_M=128, BLOCK_N=256, BLOCK_K=64)",
                                       f"{base.name} (blocks BLOCK_M=32, BLOCK_N=128, BLOCK_K=64)"]
    assert len(with_configuration_cases(matmul, ({"BLOCK_M": 2 ** i} for i in range(4, 11)), limit=3).cases) == \
        len(matmul.cases) + 3
    # A kernel with tuning configurations is launched at those alone.
    tuned = with_configuration_cases(matmul, ({"BLOCK_M": 32},), tuned=True)
    assert [s.name for s in tuned.cases[len(matmul.cases):]] == [f"{base.name} (blocks BLOCK_M=32, BLOCK_N=128, "
                                                                  "BLOCK_K=64)"]
    assert all(configuration_case_base(s.name) == base.name for s in added)
    assert configuration_case_base(base.name) is None
    again = make_case(configured, len(matmul.cases) + 1)
    original = make_case(matmul, matmul.cases.index(base))
    assert torch.equal(again.buffers["a"].parent, original.buffers["a"].parent), "the base case's inputs"
    assert again.launches[0].grid[:2] == (-(-base.symbols["M"] // 128), -(-base.symbols["N"] // 256))
    # A block that holds a whole size keeps the case's own: a softmax row still fits its block.
    softmax = course.puzzle("softmax")
    assert with_configuration_cases(softmax, ({"BLOCK_N": 16},)).cases == softmax.cases
