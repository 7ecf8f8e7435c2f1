"""The class page: what failed most students per puzzle, with an example each; the cases most failed; the
submissions that timed out, crashed or could not be read; figures; every student-made text escaped."""
import re
import shutil

import pytest

from grader.classroom.batch import class_page_path, grade_class
from grader.classroom.class_page import write_class_page

from conftest import ROOT

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ARTIFACTS = ROOT / "test-artifacts"


def report(puzzles, error=None):
    return {"puzzles": puzzles, "points": sum(p["points"] for p in puzzles), "max_points": 10, "error": error}


def vector_add(status, points=0, cases=(), diagnostics=()):
    return {"id": "vector_add", "title": "Vector add", "status": status, "points": points, "max_points": 10,
            "cases": [{"name": name, "status": "fail", "diagnostics": [{"kind": kind, "message": message}]}
                      for name, kind, message in cases],
            "diagnostics": [{"kind": kind, "message": message} for kind, message in diagnostics]}


REPORTS = [
    ("ada", report([vector_add("pass", 10)])),
    ("bob", report([vector_add("fail", cases=[("ragged tail", "out_of_bounds", "bob's lanes past the end")])])),
    ("cy", report([vector_add("fail", cases=[("ragged tail", "out_of_bounds", "cy's lanes past the end"),
                                             ("one element", "mismatch", "cy's wrong sum")])])),
    ("<img src=x onerror=alert(1)>", report([vector_add("error", diagnostics=[("timeout", "no result after 60 s")])])),
    ("eve", report([vector_add("error", diagnostics=[("crash", "the worker was killed by SIGSEGV")])])),
    ("fay", report([], error="fay.py is a FIFO: the grader reads regular files only")),
]


def test_the_page_says_what_failed_most_with_an_example(course, tmp_path):
    page = write_class_page(tmp_path / "class.html", course, ["vector_add"], REPORTS).read_text()
    section = page[page.index('id="puzzle-vector_add"'):page.index('id="unfinished"')]
    assert "1 of 6 students pass (17%)" in section
    kinds = re.findall(r"<tr><td>(\w+)</td><td>[^<]*</td><td class=\"number\">(\d+)</td><td>([^<]*)", section)
    assert kinds[0] == ("out_of_bounds", "2", "bob (case ragged tail)"), "the commonest first, the first student's example"
    assert "bob&#x27;s lanes past the end" in section and "cy&#x27;s lanes" not in section
    cases = re.findall(r'<tr><td>([^<]+)</td><td class="number">(\d+)</td></tr>', section)
    assert cases[0] == ("ragged tail", "2")
    unfinished = page[page.index('id="unfinished"'):]
    for text in ("timeout", "no result after 60 s", "crash", "SIGSEGV", "unreadable", "is a FIFO"):
        assert text in unfinished, text
    assert "<img src=x" not in page and "&lt;img src=x onerror=alert(1)&gt;" in page
    assert page.count('<img src="data:image/png;base64,') == 2


@pytest.mark.slow
def test_a_graded_class_has_its_page_in_a_real_browser(course, tmp_path):
    playwright = pytest.importorskip("playwright.sync_api", reason="pip install playwright")
    if not CHROMIUM:
        pytest.skip("no chromium: install it with `apt-get install chromium` (.ci/run does)")
    submissions = tmp_path / "submissions"
    submissions.mkdir()
    (submissions / "ada.py").write_text((ROOT / "solutions" / "vector_add.py").read_text())
    (submissions / "bob.py").write_text((ROOT / "tests" / "bugs" / "vector_add" / "no_mask.py").read_text())
    (submissions / "<img src=x onerror=alert(1)>.py").write_text((ROOT / "tests" / "bugs" / "vector_add" /
                                                               "no_mask.py").read_text())
    (submissions / "cy.py").write_text("x = (\n")
    grade_class(course, submissions, tmp_path / "grades.csv", ["vector_add", "outer_add"], progress=None)
    page = class_page_path(tmp_path / "grades.csv")
    with playwright.sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        view = browser.new_page(viewport={"width": 1200, "height": 900})
        dialogs = []
        view.on("dialog", lambda dialog: dialogs.append(dialog.message) or dialog.dismiss())
        view.goto(page.as_uri())
        assert view.locator("#summary").inner_text().startswith("4 students")
        sizes = view.eval_on_selector_all("img", "images => images.map(i => i.naturalWidth)")
        assert len(sizes) == 2 and all(width > 100 for width in sizes), "both figures are drawn"
        vector = view.locator("#puzzle-vector_add").inner_text()
        assert "1 of 4 students pass" in vector and "out_of_bounds" in vector and "mask" in vector
        assert "SyntaxError" in view.locator("#unfinished").inner_text()
        assert "<img src=x onerror=alert(1)>" in vector, "the hostile name is shown as text"
        assert dialogs == [], "no student-made script ran"
        ARTIFACTS.mkdir(exist_ok=True)
        view.screenshot(path=str(ARTIFACTS / "class-page.png"), full_page=True)
        browser.close()
