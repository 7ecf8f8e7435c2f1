"""The package declares what it imports: installed without the test extras (an instructor's `pip install`, a
Dask worker on another machine), every module of the grader finds its imports."""
import ast
import re
import sys
import tomllib
from importlib.metadata import PackageNotFoundError, packages_distributions, requires

import pytest
from packaging.requirements import Requirement

from conftest import ROOT

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def canonical(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def installed_with(requirements):
    """The distributions `requirements` install, with everything they require in turn (no extras of theirs)."""
    found, pending = set(), [Requirement(r).name for r in requirements]
    while pending:
        name = canonical(pending.pop())
        if name in found:
            continue
        found.add(name)
        try:
            needs = requires(name) or []
        except PackageNotFoundError:
            continue
        pending += [Requirement(r).name for r in needs
                    if Requirement(r).marker is None or Requirement(r).marker.evaluate({"extra": ""})]
    return found


def imported_distributions(paths):
    """{distribution: a file importing it} of the third-party modules `paths` import."""
    distributions = packages_distributions()
    found = {}
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module] if isinstance(node, ast.ImportFrom) and node.level == 0 else [])
            for name in names:
                top = name.split(".")[0]
                if top not in sys.stdlib_module_names and top != "grader":
                    for distribution in distributions.get(top, [top]):
                        found.setdefault(canonical(distribution), path.relative_to(ROOT))
    return found


NBGRADER_SIDE = {ROOT / "grader" / "classroom" / name for name in ("nbgrader.py", "autograde.py")}


def test_every_import_of_the_grader_comes_with_its_dependencies():
    core = [p for p in (ROOT / "grader").rglob("*.py") if p not in NBGRADER_SIDE]
    base = installed_with(PYPROJECT["dependencies"])
    missing = {d: str(p) for d, p in imported_distributions(core).items() if d not in base}
    assert not missing, f"imported but not declared in pyproject's dependencies: {missing}"


def test_the_nbgrader_side_comes_with_its_extra():
    try:
        requires("nbgrader")
    except PackageNotFoundError:
        pytest.skip("the nbgrader extra is not installed here: what it requires is unknown")
    with_nbgrader = installed_with(PYPROJECT["dependencies"] + PYPROJECT["optional-dependencies"]["nbgrader"])
    missing = {d: str(p) for d, p in imported_distributions(NBGRADER_SIDE).items() if d not in with_nbgrader}
    assert not missing, f"imported by the nbgrader side but not declared in its extra: {missing}"
