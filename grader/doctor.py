"""`triton-course doctor`: the versions that matter for grading, and the known bad combinations."""
import os
import platform
import shutil
from importlib import metadata
from pathlib import Path

SUPPORTED_TRITON = ((3, 6), (3, 9))


def _version(package):
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def _release(version):
    return tuple(int(part) for part in version.split("+")[0].split(".")[:2] if part.isdigit())


def diagnose_environment():
    """(lines describing the environment, warnings)."""
    versions = {"python": platform.python_version(), "torch": _version("torch"), "triton": _version("triton"),
                "numpy": _version("numpy")}
    lines = [f"{name:8} {version or 'not installed'}" for name, version in versions.items()]
    warnings = [f"{name} is not installed: run `make demo` or `pip install -e .`"
                for name, version in versions.items() if version is None]
    gpu = "none (kernels are graded in Triton's interpreter on the CPU)"
    if versions["torch"]:
        import torch
        if torch.cuda.is_available():
            gpu = f"{torch.cuda.get_device_name(0)} (CUDA {torch.version.cuda})"
    lines.append(f"{'gpu':8} {gpu}")
    lines.append(f"{'TRITON_INTERPRET':8} {os.environ.get('TRITON_INTERPRET', 'unset')} "
                 "(the grader interprets kernels either way)")
    if versions["triton"]:
        triton = _release(versions["triton"])
        if triton < (3, 3):
            warnings.append(f"Triton {versions['triton']} is older than 3.3: its interpreter copies non-contiguous "
                            "CUDA tensors with .cpu(), a contiguous copy used with the original strides, which "
                            "corrupts views (split columns, transposes). Upgrade: pip install 'triton>=3.6'.")
        if not SUPPORTED_TRITON[0] <= triton <= SUPPORTED_TRITON[1]:
            warnings.append(f"Triton {versions['triton']} is outside the supported 3.6 to 3.9.")
        if triton == (3, 6) and versions["numpy"] and _release(versions["numpy"]) >= (2, 4):
            warnings.append("Triton 3.6 with numpy >= 2.4 fails on `for i in range(0, n, BLOCK)` with a runtime n "
                            "in the interpreter: pip install 'numpy<2.4'.")
        ptxas = Path(__import__("triton").__file__).parent / "backends" / "nvidia" / "bin" / "ptxas"
        if not ptxas.exists() and not shutil.which("ptxas"):
            warnings.append("ptxas was not found: the compile check for NVIDIA targets cannot run.")
    return lines, warnings
