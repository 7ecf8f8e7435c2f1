"""JupyterLab's own visual debugger in a real browser, stopped inside a @triton.jit kernel launched with run().

Triton's interpreter re-compiles the kernel's source under the cell's file name and line numbers, so a
breakpoint set by clicking the kernel cell's gutter is hit by debugpy while run() interprets the kernel: the
Callstack panel shows the kernel's frame at that cell's line, and the Variables panel lists the kernel's locals.

What the Variables panel shows (JupyterLab 4.6): its tree view prints a value only for int, float, bool and str;
for any other object it prints the type's name, so every block of the kernel reads `tensor`. The values are one
click away: the magnifier button of a variable ("Render variable") opens a tab with the variable's repr, which
run() makes readable (`int32[4] [0, 1, 2, 3]`). The table view prints the same repr in its Value column, drawn on a
canvas (screenshot only)."""
import os
import re
import shutil
import time

import pytest

from conftest import ROOT, jupyter_lab

pytestmark = pytest.mark.slow
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ARTIFACTS = ROOT / "test-artifacts"
NOTEBOOK = "debug_kernel.ipynb"

SETUP = """import os
os.environ["TRITON_INTERPRET"] = "1"
import torch
import triton
import triton.language as tl
from grader.notebook import run"""
KERNEL = """@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)"""
BREAKPOINT_LINE = 6  # `x = tl.load(...)`, the line after `mask = offsets < n`
LAUNCH = """x = torch.arange(6, dtype=torch.float32)
y = torch.full((6,), 10.0)
out = torch.zeros(6)
finished = run(add_kernel, (2,), x, y, out, 6, BLOCK=4)
print("launch finished:", finished, out.tolist())"""


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    if not CHROMIUM:
        pytest.skip("no chromium: install it with `apt-get install chromium` (.ci/run does)")
    pytest.importorskip("debugpy", reason="JupyterLab's debugger needs ipykernel's debugpy")
    nbformat = pytest.importorskip("nbformat")
    root = tmp_path_factory.mktemp("debugger")
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in (SETUP, KERNEL, LAUNCH)])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    nbformat.write(notebook, root / NOTEBOOK)
    settings = tmp_path_factory.mktemp("settings")
    (settings / "overrides.json").write_text(
        '{"@jupyterlab/apputils-extension:notification": {"fetchNews": "false", "checkForUpdates": false}}')
    with jupyter_lab(root, settings, env={
            "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}) as served:
        yield served


@pytest.fixture(scope="module")
def page(lab):
    playwright = pytest.importorskip("playwright.sync_api", reason="pip install playwright")
    url, token = lab
    with playwright.sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=CHROMIUM, args=[
            "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--no-first-run"])
        try:
            view = browser.new_page(viewport={"width": 1400, "height": 1000})
            view.goto(f"{url}/lab/tree/{NOTEBOOK}?token={token}")
            view.wait_for_selector(".jp-Notebook .jp-Cell", timeout=60_000)
            view.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=120_000)
            yield view
        finally:
            browser.close()


def _turn_the_debugger_on(view, expect):
    bug = view.locator("[data-jp-item-name='debugger-icon'] jp-button")
    # Disabled ("Select a kernel that supports debugging") until the kernel has answered: a click then is lost.
    expect(bug).to_have_attribute("aria-disabled", "false", timeout=60_000)
    bug.click()
    expect(bug).to_have_attribute("aria-pressed", "true", timeout=30_000)


def _click_the_gutter(view, cell, line):
    """A click in the breakpoint gutter (left of the line numbers) at the height of `line`, as a student does."""
    number = cell.locator(".cm-lineNumbers .cm-gutterElement", has_text=re.compile(rf"^{line}$"))
    row = number.bounding_box()
    gutter = cell.locator(".cm-gutter.cm-breakpoint-gutter").bounding_box()
    view.mouse.click(gutter["x"] + gutter["width"] / 2, row["y"] + row["height"] / 2)


def _debugger_button(view, name):
    """A button of the Callstack panel's toolbar: continue, terminate, step-over, step-in, step-out, evaluate."""
    return view.locator(f"#jp-debugger-sidebar [data-jp-item-name='{name}'] jp-button")


def _stopped_at(view, expect, line):
    top = view.locator(".jp-DebuggerCallstackFrame").first
    expect(top.locator(".jp-DebuggerCallstackFrame-name")).to_have_text("add_kernel", timeout=90_000)
    expect(top.locator(".jp-DebuggerCallstackFrame-location")).to_have_text(
        re.compile(rf"^Cell \[\d+\]:{line}$"), timeout=30_000)


def _locals(view, expect, having):
    """{name: what the Variables panel's tree prints for it} of the selected frame (Locals scope), once the
    tree lists `having` (it is redrawn a moment after the Callstack panel)."""
    tree = view.locator(".jp-DebuggerVariables-body.jp-debuggerVariables-local jp-tree-view")
    expect(tree.locator(":scope > jp-tree-item > .jp-DebuggerVariables-name", has_text=re.compile(rf"^{having}$"))
           ).to_have_count(1, timeout=30_000)
    names = tree.locator(":scope > jp-tree-item > .jp-DebuggerVariables-name").all_inner_texts()
    details = tree.locator(":scope > jp-tree-item").evaluate_all(
        "items => items.map(i => { const d = i.querySelector(':scope > .jp-DebuggerVariables-detail');"
        " return d ? d.textContent : null; })")
    return dict(zip(names, details))


def _render(view, expect, name, expected, screenshot=None):
    """Click the variable's magnifier ("Render variable: NAME"), read the tab it opens, close it, return its text.

    The tab (id jp-debugger-variable-mime-NAME-<notebook>) asks for the variable in the frame that was selected
    when it opened: left open across a Continue it may read "The variable is undefined in the active context."
    (debugpy's frame ids are frame addresses, sometimes reused), so each reading opens a fresh one."""
    item = view.locator(".jp-DebuggerVariables-body.jp-debuggerVariables-local jp-tree-view > jp-tree-item",
                        has=view.locator(":scope > .jp-DebuggerVariables-name", has_text=re.compile(rf"^{name}$")))
    item.hover()
    item.locator(":scope > .jp-DebuggerVariables-renderVariable").click()
    tab = view.locator(f".jp-DebuggerRichVariable[id^='jp-debugger-variable-mime-{name}-']")
    expect(tab).to_contain_text(expected, timeout=30_000)
    text = tab.inner_text().strip()
    if screenshot:
        view.screenshot(path=str(screenshot))
    view.locator(f".lm-TabBar-tab[data-id^='jp-debugger-variable-mime-{name}-'] .lm-TabBar-tabCloseIcon").click()
    expect(tab).to_have_count(0, timeout=10_000)
    return text


def test_the_visual_debugger_stops_inside_a_kernel_launched_with_run(page):
    from playwright.sync_api import expect
    view = page
    started = time.monotonic()
    _turn_the_debugger_on(view, expect)
    kernel_cell = view.locator(".jp-CodeCell", has_text="def add_kernel").first
    _click_the_gutter(view, kernel_cell, BREAKPOINT_LINE)
    expect(view.locator(".jp-DebuggerBreakpoint .jp-DebuggerBreakpoint-line")).to_have_text(
        str(BREAKPOINT_LINE), timeout=30_000)

    view.get_by_role("menuitem", name="Run", exact=True).click()
    view.get_by_text("Run All Cells", exact=True).click()

    # Program 0 stops on the breakpoint, in the kernel's frame, called by run() from the launch cell.
    _stopped_at(view, expect, BREAKPOINT_LINE)
    frames = view.locator(".jp-DebuggerCallstackFrame-name").all_inner_texts()
    assert frames[:3] == ["add_kernel", "launch", "run"], frames
    shown = _locals(view, expect, having="mask")
    # The tree prints a type's name for anything but int/float/bool/str: every block reads "tensor".
    assert {"offsets": "tensor", "mask": "tensor", "x_ptr": "tensor", "BLOCK": "4"}.items() <= shown.items(), shown
    assert "x" not in shown, shown  # the breakpoint's line has not run yet
    seen = {
        "offsets": _render(view, expect, "offsets", "[0, 1, 2, 3]"),
        "mask": _render(view, expect, "mask", "[True, True, True, True]"),
        "x_ptr": _render(view, expect, "x_ptr", "x_ptr"),
    }
    assert seen == {"offsets": "int32[4] [0, 1, 2, 3]", "mask": "int1[4] [True, True, True, True]",
                    "x_ptr": "pointer<fp32> x_ptr + 0"}, seen

    # Next (F10): line 7, where x, the loaded block, is listed.
    _debugger_button(view, "step-over").click()
    _stopped_at(view, expect, BREAKPOINT_LINE + 1)
    shown = _locals(view, expect, having="x")
    assert shown.get("x") == "tensor", shown
    ARTIFACTS.mkdir(exist_ok=True)
    seen["x"] = _render(view, expect, "x", "[0., 1., 2., 3.]", screenshot=ARTIFACTS / "lab-debugger.png")
    assert seen["x"] == "fp32[4] [0., 1., 2., 3.]", seen
    # The table view prints the same reprs in its Value column, on a canvas: a picture only.
    view.locator("#jp-debugger-sidebar [data-jp-item-name='view-VariableTableView'] jp-button").click()
    view.locator("#jp-debugger-sidebar .jp-DebuggerVariables-grid").wait_for(timeout=10_000)
    time.sleep(0.5)  # the grid paints its canvas after it shows
    view.screenshot(path=str(ARTIFACTS / "lab-debugger-table.png"))
    view.locator("#jp-debugger-sidebar [data-jp-item-name='view-VariableTreeView'] jp-button").click()

    # Continue: program 1 stops on the same breakpoint, its last two lanes masked off.
    _debugger_button(view, "continue").click()
    _stopped_at(view, expect, BREAKPOINT_LINE)
    second = {"offsets": _render(view, expect, "offsets", "[4, 5, 6, 7]"),
              "mask": _render(view, expect, "mask", "[True, True, False, False]")}
    assert second == {"offsets": "int32[4] [4, 5, 6, 7]", "mask": "int1[4] [True, True, False, False]"}, second
    view.screenshot(path=str(ARTIFACTS / "lab-debugger-program-1.png"))

    _debugger_button(view, "continue").click()
    output = view.locator(".jp-CodeCell", has_text="finished = run(add_kernel").locator(".jp-OutputArea")
    expect(output).to_contain_text("launch finished: True [10.0, 11.0, 12.0, 13.0, 14.0, 15.0]", timeout=60_000)
    assert time.monotonic() - started < 120
