"""course.yml is read into puzzles, and every malformation fails with the file, the key path and the fix."""
import textwrap

import pytest
import yaml

from grader.course import CourseError, load_course

from conftest import ROOT


def test_the_course_loads_in_order(course):
    assert [p.id for p in course.puzzles] == [
        "vector_add", "outer_add", "strided_views", "row_sum", "softmax", "online_softmax", "layer_norm", "matmul",
        "matmul_epilogue", "softmax_backward", "attention", "causal_attention"]
    vector_add = course.puzzle("vector_add")
    assert vector_add.kernel == "add_kernel"
    assert vector_add.params == ("x_ptr", "y_ptr", "out_ptr", "n_elements", "BLOCK_SIZE")
    assert vector_add.blocks == ("BLOCK_SIZE",)
    assert vector_add.signature() == "add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr)"
    assert len(vector_add.cases) >= 5
    assert vector_add.grid[0]({"N": 1000, "BLOCK_SIZE": 256}) == 4


def test_a_course_file_of_some_puzzles_reads_back_as_those_puzzles(course):
    """What a sandboxed worker is given of the course: the entries of the puzzles it profiles, nothing else."""
    part = load_course(course.path, text=course.text_for(["matmul", "vector_add", "matmul"]))
    assert [puzzle.id for puzzle in part.puzzles] == ["matmul", "vector_add"]
    for puzzle in part.puzzles:
        whole = course.puzzle(puzzle.id)
        for name in puzzle.__dataclass_fields__:  # the functions are made anew from the same source
            if name not in ("reference", "benchmark"):
                assert getattr(puzzle, name) == getattr(whole, name), (puzzle.id, name)
        for name in puzzle.benchmark.__dataclass_fields__:
            if name != "baseline":
                assert getattr(puzzle.benchmark, name) == getattr(whole.benchmark, name), (puzzle.id, name)


def test_unknown_puzzle_lists_the_known_ones(course):
    with pytest.raises(KeyError, match="vector_add, outer_add, strided_views, row_sum"):
        course.puzzle("sotfmax")


def _course_with(tmp_path, edit):
    data = yaml.safe_load((ROOT / "course.yml").read_text())
    edit(data)
    for puzzle in data["puzzles"]:
        for key in ("notebook", "solution"):
            puzzle[key] = str(ROOT / puzzle[key])
    path = tmp_path / "course.yml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


MALFORMED = [
    ("missing key", lambda d: d["puzzles"][0].pop("kernel"), "puzzles[0] (vector_add)", "missing key 'kernel'"),
    ("unknown key", lambda d: d["puzzles"][1].update(pionts=3), "puzzles[1] (outer_add)", "unknown key 'pionts'"),
    ("duplicate id", lambda d: d["puzzles"][1].update(id="vector_add"), "puzzles[1] (vector_add).id",
     "duplicate puzzle id"),
    ("bad id", lambda d: d["puzzles"][0].update(id="Vector Add"), "puzzles[0] (Vector Add).id", "lowercase"),
    ("negative points", lambda d: d["puzzles"][0].update(points=-1), "puzzles[0] (vector_add).points",
     "positive number"),
    ("unknown name in grid", lambda d: d["puzzles"][0]["launch"].update(grid=["cdiv(K, BLOCK_SIZE)"]),
     "puzzles[0] (vector_add).launch.grid[0]", "'K' in 'cdiv(K, BLOCK_SIZE)' is not a size"),
    ("syntax error in an argument", lambda d: d["puzzles"][2]["launch"]["args"].update(stride_m="x.stride(0"),
     "puzzles[2] (strided_views).launch.args.stride_m", "invalid expression"),
    ("block not a power of two", lambda d: d["puzzles"][0]["cases"][0].update(BLOCK_SIZE=100),
     "puzzles[0] (vector_add).cases[0] (ragged tail).BLOCK_SIZE", "powers of 2"),
    ("missing size in a case", lambda d: d["puzzles"][0]["cases"][0].pop("N"),
     "puzzles[0] (vector_add).cases[0]", "missing key 'N'"),
    ("bfloat16 case", lambda d: d["puzzles"][0]["cases"][0].update(dtype="bfloat16"),
     "puzzles[0] (vector_add).cases[0] (ragged tail).dtype", "bfloat16 arithmetic is wrong"),
    ("layout without strided tensors", lambda d: d["puzzles"][0]["cases"][0].update(layout="transposed"),
     "puzzles[0] (vector_add).cases[0] (ragged tail).layout", "strided: true"),
    ("contiguous names a tensor that is not strided", lambda d: d["puzzles"][4]["cases"][0].update(
        layout="padded_rows", contiguous=["y"]), "puzzles[4] (softmax).cases[0] (ragged row).contiguous",
     "the puzzle's strided tensors (x, out)"),
    ("contiguous in a contiguous case", lambda d: d["puzzles"][4]["cases"][0].update(contiguous=["out"]),
     "puzzles[4] (softmax).cases[0] (ragged row).contiguous", "layout contiguous has none to keep"),
    ("split widths that do not add up", lambda d: d["puzzles"][2]["cases"][1].update(split=[2, 3]),
     "puzzles[2] (strided_views).cases[1] (split columns).split", "add up to 5"),
    ("reference with the wrong parameters", lambda d: d["puzzles"][0].update(reference="def f(a, b):\n    return a\n"),
     "puzzles[0] (vector_add).reference", "tensors (without those computed by init) are (x, y)"),
    ("reference that does not parse", lambda d: d["puzzles"][0].update(reference="def f(x, y:\n"),
     "puzzles[0] (vector_add).reference", "line 1"),
    ("no output tensor", lambda d: d["puzzles"][0]["tensors"]["out"].update(role="input"),
     "puzzles[0] (vector_add).tensors", "nothing to check"),
    ("missing notebook file", lambda d: d["puzzles"][0].update(notebook="puzzles/nope.ipynb"),
     "puzzles[0] (vector_add).notebook", "does not exist"),
    ("block that is not a parameter", lambda d: d["puzzles"][0]["launch"].update(blocks=["BLOCK_SIZE", "B2"]),
     "puzzles[0] (vector_add).launch.blocks", "block 'B2' is not a kernel parameter"),
    ("fits with an unknown block", lambda d: d["puzzles"][4]["launch"].update(fits={"N": "BLOCK_K"}),
     "puzzles[4] (softmax).launch.fits", "must map a size of the puzzle to one of its blocks"),
    ("a case whose block does not hold its size", lambda d: d["puzzles"][4]["cases"][0].update(N=5000),
     "puzzles[4] (softmax).cases[0] (ragged row)", "BLOCK_N=1024 does not hold N=5000"),
]


@pytest.mark.parametrize("edit,key_path,message", [m[1:] for m in MALFORMED], ids=[m[0] for m in MALFORMED])
def test_malformed_course_names_the_key_path(tmp_path, edit, key_path, message):
    path = _course_with(tmp_path, edit)
    with pytest.raises(CourseError) as error:
        load_course(path)
    assert str(error.value).startswith(f"{path}: {key_path}"), str(error.value)
    assert message in str(error.value)


def test_yaml_syntax_error_gives_the_line(tmp_path):
    path = tmp_path / "course.yml"
    path.write_text(textwrap.dedent("""\
        puzzles:
          - id: a
            title: [unclosed
        """))
    with pytest.raises(CourseError, match=r"course.yml: line \d+, column \d+: not valid YAML"):
        load_course(path)


def test_missing_course_file_says_how_to_choose_one(tmp_path):
    with pytest.raises(CourseError, match="cannot read the course file.*--course PATH"):
        load_course(tmp_path / "nope.yml")


def test_groups_share_out_the_points(course):
    strided = course.puzzle("strided_views")
    assert strided.groups == {"contiguous": 5, "views": 10}
    assert {c.group for c in strided.cases} == {"contiguous", "views"}
    assert course.puzzle("softmax").groups == {"all": 15}


def test_groups_must_add_up_and_be_used(tmp_path):
    def bad_sum(data):
        data["puzzles"][0]["groups"] = {"tail": 4, "blocks": 4, "float16": 1}
    with pytest.raises(CourseError, match="add up to 9, not to the puzzle's 10"):
        load_course(_course_with(tmp_path, bad_sum))

    def unknown_group(data):
        data["puzzles"][0]["cases"][0]["group"] = "tails"
    with pytest.raises(CourseError, match=r"cases\[0\] \(ragged tail\).group: expected one of the puzzle's groups"):
        load_course(_course_with(tmp_path, unknown_group))


def test_hidden_cases_keep_constexpr_sizes_and_change_the_others(course):
    from grader.course import with_hidden_cases
    attention = with_hidden_cases(course.puzzle("attention"), seed=11)
    count = len(course.puzzle("attention").cases)
    public, hidden = attention.cases[:count], attention.cases[count:]
    assert len(hidden) == len(public) and all(c.hidden and c.describe() == "" for c in hidden)
    assert [c.symbols["D"] for c in hidden] == [c.symbols["D"] for c in public], "D is the constexpr HEAD_DIM"
    assert [c.symbols["N"] for c in hidden] != [c.symbols["N"] for c in public]
    assert with_hidden_cases(course.puzzle("attention"), seed=11).cases == attention.cases, "reproducible"


def test_hidden_cases_run_their_programs_shuffled(course, tmp_path):
    """A kernel that builds on what the program before it stored, only in float16 (the one shuffled public case is
    float32), passes every public case; the hidden float16 case, shuffled, shows it."""
    from grader.course import with_hidden_cases
    from grader.pipeline.grade import grade_submission
    for puzzle in course.puzzles:
        hidden = with_hidden_cases(puzzle, seed=5).cases[len(puzzle.cases):]
        assert hidden and {case.order for case in hidden} == {"shuffled"}, puzzle.id
    path = tmp_path / "vector_add.py"
    path.write_text((ROOT / "solutions" / "vector_add.py").read_text().replace(
        "    tl.store(out_ptr + offsets, x + y, mask=mask)",
        "    result = x + y\n"
        "    if x_ptr.dtype.element_ty == tl.float16:  # the last element the program before stored: 0 where it ran\n"
        "        if pid > 0:\n"
        "            last = pid * BLOCK_SIZE - 1\n"
        "            result += tl.load(out_ptr + last) - (tl.load(x_ptr + last) + tl.load(y_ptr + last))\n"
        "    tl.store(out_ptr + offsets, result, mask=mask)"))
    public = grade_submission(course, path, ["vector_add"]).puzzle("vector_add")
    assert public.status == "pass", [d.message for d in public.diagnostics]
    hidden = grade_submission(course, path, ["vector_add"], hidden_seed=8).puzzle("vector_add")
    assert hidden.status == "fail" and all(case.hidden for case, result in zip(
        with_hidden_cases(course.puzzle("vector_add"), 8).cases, hidden.cases) if result.status != "pass")


def test_hidden_cases_keep_a_whole_row_in_one_block(course):
    """Softmax holds a row in one block (launch.fits: N -> BLOCK_N): a hidden case that grows the row grows the
    block, or the course's own solution would fail it."""
    from grader.course import with_hidden_cases
    for puzzle_id in ("softmax", "softmax_backward"):
        for seed in range(20):
            for case in with_hidden_cases(course.puzzle(puzzle_id), seed).cases:
                assert case.symbols["BLOCK_N"] >= (max(case.split) if case.split else case.symbols["N"]), case
