"""The leaderboard page in a real browser: Debian's chromium driven by Playwright."""
import json
import shutil

import pytest

from grader.gpu.leaderboard import write_leaderboard

from conftest import ROOT
from test_gpu_stage import _result

pytestmark = pytest.mark.slow
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ARTIFACTS = ROOT / "test-artifacts"


@pytest.fixture(scope="module")
def browser():
    playwright = pytest.importorskip("playwright.sync_api", reason="pip install playwright")
    if not CHROMIUM:
        pytest.skip("no chromium: install it with `apt-get install chromium` (.ci/run does)")
    with playwright.sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=CHROMIUM, args=[
            "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--no-first-run"])
        yield browser
        browser.close()


def test_the_page_shows_the_ranking_and_sorts(browser, tmp_path):
    reference = json.loads((ROOT / "bench" / "results" / "gpu-h200-reference.json").read_text())
    reference["student"] = "reference"
    results = [reference, _result("ada", [1.5, 2.0]), _result("bob", [0.5]),
               _result("cy", [9.0], status="rejected")]
    page = write_leaderboard(results, tmp_path)
    view = browser.new_page(viewport={"width": 1200, "height": 900})
    view.goto(page.as_uri())
    overall = view.locator("#nvidia-h100-overall tbody tr")  # ranked against the H100's students only
    assert [overall.nth(i).locator("td").nth(1).inner_text() for i in range(3)] == ["ada", "bob", "cy"]
    assert "not ranked" in overall.nth(2).inner_text()
    assert view.locator("#nvidia-h200-overall tbody tr").first.locator("td").nth(1).inner_text() == "reference"
    assert "the kernel changed its inputs" in view.locator("#nvidia-h100-vector_add").inner_text()
    assert view.locator("img[alt^='fraction of the roofline']").count() >= 2
    speedup_header = view.locator("#nvidia-h100-overall th", has_text="speed-up")
    speedup_header.click()  # ascending: the unranked first
    assert view.locator("#nvidia-h100-overall tbody tr").first.locator("td").nth(1).inner_text() == "cy"
    speedup_header.click()  # descending
    assert view.locator("#nvidia-h100-overall tbody tr").first.locator("td").nth(1).inner_text() == "ada"
    ARTIFACTS.mkdir(exist_ok=True)
    view.screenshot(path=str(ARTIFACTS / "leaderboard.png"), full_page=True)
