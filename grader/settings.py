"""Every tolerance, limit and cap of the grader, in one place, each with its default and a line of help."""
from dataclasses import dataclass, field


def _setting(default, help):
    if isinstance(default, dict):
        return field(default_factory=lambda: dict(default), metadata={"help": help})
    return field(default=default, metadata={"help": help})


@dataclass(frozen=True)
class Tolerance:
    atol: float
    rtol: float


@dataclass(frozen=True)
class Settings:
    tolerances: dict = _setting(
        {"float32": Tolerance(atol=1e-5, rtol=1e-5), "float16": Tolerance(atol=1e-3, rtol=1e-3)},
        "Default |got - expected| <= atol + rtol * |expected| per dtype; a puzzle may override it.")
    mismatch_rows: int = _setting(5, "Rows of index | got | expected shown in a mismatch report.")
    offsets_shown: int = _setting(8, "Offending element offsets listed in an out-of-bounds report.")
    compile_targets: tuple = _setting((80, 90), "NVIDIA compute capabilities every kernel is compiled for: the "
                                                "newest to the end, ptxas included, the others through their "
                                                "TritonGPU passes.")
    kernel_output_chars: int = _setting(2000, "Characters of a kernel's own printing kept in a failure report.")
    puzzle_timeout_s: float = _setting(60.0, "Wall-clock limit for compiling and running one puzzle's cases.")
    estimate_gpu: str = _setting("H100", "GPU the performance estimate is made for: H100, H200 or A100 (its "
                                         "kernel compiled for that GPU's compute capability).")
    profile_timeout_s: float = _setting(10.0, "Wall-clock limit for interpreting a passing kernel's sampled "
                                              "programs at its benchmark size (the performance estimate).")
    memory_limit_bytes: int = _setting(8 * 2 ** 30, "Address-space limit of the worker process.")
    cpu_limit_s: int = _setting(1800, "CPU-time limit of one worker process.")
    file_limit_bytes: int = _setting(256 * 2 ** 20, "Largest file the worker may write.")
    output_cap_bytes: int = _setting(2 ** 20, "Output of the worker kept (what a kernel prints), the rest dropped.")
    source_file_bytes: int = _setting(256 * 2 ** 10, "Largest .py file of a submission read (parsing takes about "
                                                       "400 times its size in memory).")
    notebook_file_bytes: int = _setting(64 * 2 ** 20, "Largest notebook read (outputs and images included).")
    code_chars: int = _setting(256 * 2 ** 10, "Most characters of code parsed from one file or notebook.")
    syntax_depth: int = _setting(200, "Deepest nesting of Python syntax read (a chain `a.b.c` or a sum `1 + 2 + 3` "
                                      "nests one level a term), as deep as Python nests parentheses.")
    submission_files: int = _setting(200, "Most .py and .ipynb files read from one submission folder.")
    submission_bytes: int = _setting(64 * 2 ** 20, "Most bytes read from one submission folder, its files together "
                                                   "(a class's submissions are read in the grader's own process).")
    submission_code_chars: int = _setting(2 ** 20, "Most characters of code parsed from one submission, its files "
                                                   "together.")
    result_file_bytes: int = _setting(256 * 2 ** 20, "Largest result file read back from a worker.")
    process_limit: int = _setting(64, "Processes the worker and what it starts may run at once (the compiler's "
                                      "assembler among them).")


DEFAULT = Settings()
