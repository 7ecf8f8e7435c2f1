"""The corpus of correct kernels (tests/alternatives/) is right by an oracle other than the grader: each
kernel, run by Triton's own interpreter with none of the grader's code, matches PyTorch's reference on every
case of its puzzle (tests/alternatives/against_pytorch.py). A file of its own, so that it runs beside
test_alternatives.py's grading of the same corpus."""
import sys

import pytest

from conftest import in_parallel
from test_alternatives import ALTERNATIVES, ALTERNATIVES_DIR


@pytest.mark.slow
def test_every_alternative_matches_pytorch_outside_the_grader():
    for result, count in in_parallel([sys.executable, str(ALTERNATIVES_DIR / "against_pytorch.py")], ALTERNATIVES):
        assert result.returncode == 0, result.stdout[-5000:] + result.stderr[-2000:]
        assert f"{count} of {count} kernels match PyTorch" in result.stdout
