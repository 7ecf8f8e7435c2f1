"""nbgrader integration: a course directory built from the puzzles, and autograding that never trusts the notebook.

`init_course` writes an nbgrader course: nbgrader_config.py and source/<assignment>/ notebooks made from
the puzzle notebooks and the solutions, with nbgrader's cell metadata (locked cells, the kernel as a
solution cell, a locked test cell per puzzle with the puzzle's points).

At autograde time nbgrader would normally run the student's notebook and score the test cells by their
outputs. Instead, `GradeWithTritonCourse` takes the place of nbgrader's Execute: it grades the submitted
notebook with the grader (its kernels read, not run, then compiled and interpreted in the sandboxed worker,
with the instructor's hidden cases) and writes each test cell's output: the report, and the points as the
cell's result (nbgrader's partial credit). Nothing the student wrote runs in nbgrader's process or in a
Jupyter kernel, so no cell can crash, hang or fool the autograder. Under `triton-course nbgrader autograde`
(autograde.py) the kernels were graded ahead, in parallel, and the outputs come from there.
"""
import ast
import hashlib
import html
import json
import numbers
import tempfile
from pathlib import Path

import nbformat
from nbconvert.exporters import NotebookExporter
from nbgrader.nbgraderformat import MetadataValidator
from nbgrader.preprocessors.base import NbGraderPreprocessor
from traitlets import Integer, Unicode

from ..course import guessable_seed, load_course, new_hidden_seed
from ..pipeline.grade import grade_read
from ..pipeline.load import read_submission
from ..pipeline.report import puzzle_text
from ..pipeline.results import printable

TEST_CELL_PREFIX = "check_"


def test_cell_source(puzzle):
    return f'grade("{puzzle.id}", {puzzle.kernel})'


def init_course(directory, course, assignments=None, seed=None):
    """Write an nbgrader course directory; `assignments`: {name: [puzzle ids]} (default: one per puzzle); `seed`:
    the hidden cases' (a random one unless given)."""
    directory = Path(directory)
    seed = new_hidden_seed() if seed is None else seed
    assignments = assignments or {p.notebook.stem: [p.id] for p in course.puzzles}
    for name, puzzle_ids in assignments.items():
        target = directory / "source" / name
        target.mkdir(parents=True, exist_ok=True)
        for puzzle_id in puzzle_ids:
            puzzle = course.puzzle(puzzle_id)
            nbformat.write(source_notebook(puzzle), target / puzzle.notebook.name)
    (directory / "nbgrader_config.py").write_text(CONFIG.format(course=course.path.resolve(), seed=seed))
    return assignments


CONFIG = '''"""nbgrader configuration of the Triton puzzle course (written by `triton-course nbgrader init`)."""
from nbconvert.preprocessors import ClearMetadataPreprocessor
from nbconvert.preprocessors.sanitize import SanitizeHTML
from nbgrader.preprocessors import (AssignLatePenalties, CheckCellMetadata, ClearOutput, IgnorePattern, LimitOutput,
                                    OverwriteCells, OverwriteKernelspec, SaveAutoGrades)

from grader.classroom.nbgrader import DropInvalidCellMetadata, GradeWithTritonCourse, ReadOrExplain

c = get_config()  # noqa: F821 (nbgrader provides it)
c.CourseDirectory.course_id = "triton-puzzles"
c.GradeWithTritonCourse.course_file = "{course}"
# The seed of the hidden cases and inputs: keep this file away from students.
c.GradeWithTritonCourse.hidden_seed = {seed}
# The grader replaces nbgrader's Execute: the submitted notebook is graded, never run.
# HTML a student writes in a markdown cell (a <script>, an onerror=) is escaped in the autograded notebook, which
# the formgrader and the feedback show: nbconvert's SanitizeHTML (bleach) keeps only harmless tags.
c.Autograde.autograde_preprocessors = [GradeWithTritonCourse, SanitizeHTML, IgnorePattern,
                                       ClearMetadataPreprocessor, LimitOutput, SaveAutoGrades, AssignLatePenalties,
                                       CheckCellMetadata]
c.SanitizeHTML.enabled = True
# One student's tampered or duplicated cell metadata stays that student's problem (see DropInvalidCellMetadata).
c.Autograde.sanitize_preprocessors = [ClearOutput, DropInvalidCellMetadata, OverwriteKernelspec, OverwriteCells,
                                      CheckCellMetadata]
# A notebook that cannot be read is graded 0 with its reason, instead of leaving the student out.
c.Autograde.exporter_class = ReadOrExplain
'''


def source_notebook(puzzle):
    """The puzzle's notebook with nbgrader metadata: read-only text and setup, the solution, a locked test."""
    notebook = nbformat.read(puzzle.notebook, as_version=4)
    for index, cell in enumerate(notebook.cells):
        tags = cell.metadata.get("tags", [])
        if "skeleton" in tags:
            cell.source = _with_solution(cell.source, puzzle)
            cell.metadata["nbgrader"] = _metadata(f"kernel_{puzzle.id}", solution=True)
        elif "check" in tags:
            cell.source = test_cell_source(puzzle)
            cell.metadata["nbgrader"] = _metadata(TEST_CELL_PREFIX + puzzle.id, grade=True, locked=True,
                                                  points=puzzle.points)
        elif cell.cell_type == "markdown" or tags and tags[0] in ("setup", "picture", "reference"):
            cell.metadata["nbgrader"] = _metadata(f"{puzzle.id}_{index}", locked=True)
        if cell.cell_type == "code" and "setup" in tags:
            cell.source = cell.source.replace("from grader.notebook import check", "from grader.notebook import grade")
    return notebook


def _metadata(grade_id, grade=False, solution=False, locked=False, points=None):
    metadata = {"schema_version": 3, "grade_id": grade_id, "grade": grade, "solution": solution, "locked": locked}
    if points is not None:
        metadata["points"] = points
    return metadata


def _with_solution(skeleton, puzzle):
    """The skeleton's header with the solution's body between nbgrader's solution markers."""
    tree = ast.parse(skeleton)
    [kernel] = [node for node in tree.body if isinstance(node, ast.FunctionDef)]
    header = skeleton.splitlines()[:kernel.body[0].lineno - 1]
    while header and header[-1].lstrip().startswith("#"):
        header.pop()  # the skeleton's "YOUR CODE HERE" comment
    text = puzzle.solution.read_text()
    [solution] = [node for node in ast.parse(text).body if isinstance(node, ast.FunctionDef) and
                  node.name == puzzle.kernel]
    lines = text.splitlines()
    first = solution.body[0].lineno
    while first > solution.lineno + 1 and lines[first - 2].strip().startswith("#"):
        first -= 1  # keep the comments just above the first statement
    body = lines[first - 1:solution.end_lineno]
    return "\n".join(header + ["    ### BEGIN SOLUTION"] + body + ["    ### END SOLUTION"])


def puzzles_of(notebook):
    """Puzzle ids of the notebook's test cells."""
    return [cell.metadata["nbgrader"]["grade_id"][len(TEST_CELL_PREFIX):] for cell in notebook.cells
            if cell.metadata.get("nbgrader", {}).get("grade") and
            cell.metadata["nbgrader"].get("grade_id", "").startswith(TEST_CELL_PREFIX)]


class DropInvalidCellMetadata(NbGraderPreprocessor):
    """Takes the place of nbgrader's DeduplicateIds at autograde time. That one empties the metadata of a cell
    whose grade id repeats, and an empty or tampered schema then makes nbgrader stop autograding the whole
    class. Here metadata that does not validate is rebuilt from its grade id (OverwriteCells then restores
    the instructor's cell of that id from the gradebook, flags and points included), and a cell with no
    usable grade id, or one that repeats an id kept already (the last cell of an id wins, as in nbgrader),
    loses its metadata entirely: it becomes a plain cell of the student's."""

    def preprocess(self, nb, resources):
        validator, kept = MetadataValidator(), set()
        for cell in reversed(nb.cells):
            if "nbgrader" not in cell.get("metadata", {}):
                continue
            metadata = self._valid(validator, cell)
            graded = metadata and (metadata["grade"] or metadata["solution"] or metadata["locked"])
            if metadata is None or graded and metadata["grade_id"] in kept:
                del cell.metadata["nbgrader"]
                continue
            cell.metadata["nbgrader"] = metadata
            if graded:
                kept.add(metadata["grade_id"])
        return nb, resources

    def _valid(self, validator, cell):
        """The cell's metadata, or the same rebuilt from its grade id, or None."""
        try:
            validator.validate_cell(cell)
            return cell.metadata["nbgrader"]
        except Exception as error:  # any shape a student can give it
            self.log.warning("Cell metadata that does not validate (%s) is rebuilt from its grade id", error)
        metadata = cell.metadata["nbgrader"]
        if not isinstance(metadata, dict) or not isinstance(metadata.get("grade_id"), str):
            return None
        rebuilt = {"schema_version": validator.schema_version, "grade_id": metadata["grade_id"],
                   **{flag: metadata.get(flag) is True for flag in ("grade", "solution", "locked")}}
        if rebuilt["grade"]:
            rebuilt["points"] = 0  # OverwriteCells puts the instructor's points back
        try:
            validator.validate_cell(nbformat.from_dict({**cell, "metadata": {"nbgrader": rebuilt}}))
        except Exception:
            return None
        return nbformat.from_dict(rebuilt)


class ReadOrExplain(NotebookExporter):
    """nbgrader's exporter at autograde time, except for a submitted notebook that cannot be read (not JSON,
    not UTF-8, not a notebook): nbgrader would drop the student from the gradebook; here it becomes a notebook
    that says why, graded 0, and its feedback tells the student what to do."""

    def from_file(self, file_stream, resources=None, **kw):
        try:
            notebook = _gradable(file_stream.read())
        except Exception as error:  # whatever the file holds
            reason = html.escape(printable(f"{type(error).__name__}: {error}")[:300])
            notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(
                f"**This notebook could not be read, so it was graded 0** ({reason}). Open it in JupyterLab, "
                "check that your work is there, save it and submit it again.")])
        return self.from_notebook_node(notebook, resources=resources, **kw)


def _gradable(text):
    """The notebook in `text` as nbformat 4, with what nbformat requires and JupyterLab does without filled in (a
    byte-order mark dropped, empty metadata); raises for one nbgrader could not write back (a cell whose source is
    not text, a lone surrogate), which would stop its autograde with a traceback and no feedback. What else
    nbformat's schema would refuse (cell ids in an older minor version, a stream output without its name) nbgrader
    reads and writes back, and so does the grader."""
    if isinstance(text, bytes):
        text = text.decode("utf-8")
    data = json.loads(text.lstrip("\ufeff"))
    if isinstance(data, dict):
        data.setdefault("metadata", {})
        for cell in data.get("cells") if isinstance(data.get("cells"), list) else []:
            if isinstance(cell, dict):
                cell.setdefault("metadata", {})
    notebook = nbformat.reads(json.dumps(data), as_version=4)
    for number, cell in enumerate(notebook.cells, start=1):
        if not isinstance(cell.get("source"), str):
            raise ValueError(f"cell {number} has no text as its source")
    nbformat.writes(notebook).encode("utf-8")
    return notebook


NO_HIDDEN_SEED = ("nbgrader_config.py sets no c.GradeWithTritonCourse.hidden_seed: the hidden cases need a seed that "
                  "students cannot guess (`triton-course nbgrader init` writes a random one)")


class GradeWithTritonCourse(NbGraderPreprocessor):
    """Grades a submitted notebook with the course grader and writes its test cells' outputs."""

    course_file = Unicode("", help="The course.yml the puzzles come from.").tag(config=True)
    hidden_seed = Integer(None, allow_none=True, help="Seed of the hidden cases and of the inputs at grading time "
                                                      "(triton-course nbgrader init writes a random one).").tag(config=True)

    def preprocess(self, nb, resources):
        if self.hidden_seed is None:
            raise ValueError(NO_HIDDEN_SEED)
        if guessable_seed(self.hidden_seed):
            self.log.warning("c.GradeWithTritonCourse.hidden_seed: %s", guessable_seed(self.hidden_seed))
        course = load_course(self.course_file or None)
        puzzle_ids = [pid for pid in puzzles_of(nb) if any(p.id == pid for p in course.puzzles)]
        if not puzzle_ids:  # no test cell left (ReadOrExplain's notebook): nothing to grade, nothing to write
            return nb, resources
        root = Path(resources.get("metadata", {}).get("path") or ".").resolve()
        with tempfile.TemporaryDirectory(prefix="triton-course-nbgrader-") as scratch:
            # The student's .py files beside the notebook are what its imports find (`from helpers import ...`).
            submission = read_graded_notebook(course, nb, scratch, puzzle_ids, root, _notebook_name(resources))
        key = graded_key(course, submission, puzzle_ids, self.hidden_seed)
        outputs = graded_ahead(key, course, puzzle_ids)
        if outputs is None:
            self.log.info("Grading %s here: it was not graded ahead", _which(resources))
            # The worker must not see the course directory (gradebook, other students) nor the submissions.
            report = grade_read(course, submission, puzzle_ids, hidden=[root, Path.cwd()], hidden_seed=self.hidden_seed)
            outputs = test_cell_outputs(report)
        else:
            self.log.info("%s was graded ahead", _which(resources))
        for cell in nb.cells:
            grade_id = cell.metadata.get("nbgrader", {}).get("grade_id", "")
            if cell.cell_type == "code" and grade_id[len(TEST_CELL_PREFIX):] in outputs:
                output = outputs[grade_id[len(TEST_CELL_PREFIX):]]
                cell.outputs = [
                    nbformat.v4.new_output("stream", name="stdout", text=output["text"]),
                    nbformat.v4.new_output("execute_result", data={"text/plain": f"{output['points']:g}"},
                                           execution_count=None)]
        return nb, resources


def _notebook_name(resources):
    return f"{resources.get('nbgrader', {}).get('notebook') or resources.get('metadata', {}).get('name')}.ipynb"


def _which(resources):
    about = resources.get("nbgrader", {})
    return f"{about.get('student', '?')}/{about.get('assignment', '?')}/{about.get('notebook', '?')}"


def read_graded_notebook(course, nb, scratch, puzzle_ids, folder, name):
    """The Submission of what the grader reads of a notebook named `name` (its file's name, which the feedback
    names): its cells' kinds and code. Outputs, metadata and markdown change no verdict, so a notebook graded
    ahead and the same notebook after nbgrader's clean-up are the same bytes, named alike."""
    cells = [{"cell_type": "code", "source": cell.source} if cell.cell_type == "code" else
             {"cell_type": "markdown", "source": ""} for cell in nb.cells]
    path = Path(scratch) / Path(name).name
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    return read_submission(path, course, puzzle_ids, modules_from=folder)


def graded_key(course, submission, puzzle_ids, hidden_seed):
    """A digest of everything a notebook's grade depends on."""
    def files(read):
        return [[f.path.name, f.problem, hashlib.sha256(f.data or b"").hexdigest()] for f in read]
    what = [files(submission.files), files(submission.siblings), list(puzzle_ids), hidden_seed,
            hashlib.sha256(course.path.read_bytes()).hexdigest()]
    return hashlib.sha256(json.dumps(what).encode()).hexdigest()


def test_cell_outputs(report):
    """{puzzle id: {"text": the report of the puzzle, "points": its points}}: what the test cells show."""
    return {p.id: {"text": puzzle_text(p) + "\n", "points": p.points} for p in report.puzzles}


# Test cell outputs graded ahead, by digest (graded_key): filled by `triton-course nbgrader autograde` in the
# process where it runs nbgrader's autograde (autograde.py), handed over through that process's standard input,
# never through a file that anything else could write.
GRADED_AHEAD = {}


def graded_ahead(key, course, puzzle_ids):
    """The test cell outputs graded ahead under `key`, or None (none, or not what a report looks like)."""
    outputs = GRADED_AHEAD.get(key)
    valid = isinstance(outputs, dict) and set(outputs) == set(puzzle_ids) and all(
        isinstance(o, dict) and isinstance(o.get("text"), str) and isinstance(o.get("points"), numbers.Real)
        and not isinstance(o["points"], bool) and 0 <= o["points"] <= course.puzzle(pid).points
        for pid, o in outputs.items())
    return outputs if valid else None
