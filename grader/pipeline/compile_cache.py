"""What the GPU compiler said of a kernel before, kept for a student's repeated checks on their own machine.

Compiling each kernel for sm_80 and sm_90 is most of what checking an unchanged puzzle costs (about 8 s of
one core for the whole course). The compiler's verdict depends only on what it is given: the rebuilt
modules' text (a kernel's module can import nothing but triton, math and its siblings), the kernel's name,
each launch's argument types and ints, the targets, and, for the performance estimate, the benchmark's
launch (the course's text and the configuration asked for), under one version of Triton and of the grader.
`triton-course check` keeps, under a hash of all of that, that the compiler accepted every launch and what
the benchmark's compile asks of an SM; a later check with the same hash tells the worker so, and the worker
only interprets. A rejection is never kept: its message comes from the compiler that ran.

Only a student's own checks use this. A class is graded with nothing of one submission reaching the next,
and a check with hidden cases keeps nothing (the hash of their sizes would sit on disk).
"""
import hashlib
import json
import os
from pathlib import Path

from .load.files import UnreadableFile, read_regular_file
from .protocol import MalformedResult, check_resources

ENTRY_BYTES = 4096


def default_folder():
    """Where `triton-course check` keeps what it compiled: $TRITON_COURSE_CACHE, else the user's cache folder."""
    if os.environ.get("TRITON_COURSE_CACHE"):
        return Path(os.environ["TRITON_COURSE_CACHE"])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "triton-course" / "compiled"


class CompileCache:
    """The compiler's acceptances, one small JSON file each, named by the hash of what was compiled."""

    def __init__(self, folder):
        self.folder = Path(folder)

    def key(self, request, course_text=None):
        """The hash of everything the worker's compile reads of `request` (a protocol.job)."""
        import triton

        launches = [[_argument(value) for value in launch["args"]]
                    for case in request["cases"] for launch in case["launches"]]
        profile = request.get("profile")
        compiled = {"triton": triton.__version__, "grader": _grader_hash(), "modules": request["modules"],
                    "kernel": request["kernel"], "targets": request["targets"], "launches": launches,
                    "profile": profile and {**{k: v for k, v in profile.items() if k != "seconds"},
                                            "course": course_text}}
        return hashlib.sha256(json.dumps(compiled, sort_keys=True, default=repr).encode()).hexdigest()

    def get(self, key):
        """{"resources": what the benchmark's compile asks of an SM, or None} when this was accepted before, or None.
        An entry that is not what this class writes is ignored."""
        try:
            entry = json.loads(read_regular_file(self.folder / f"{key}.json", ENTRY_BYTES))
            if not isinstance(entry, dict) or set(entry) != {"resources"}:
                return None
            return {"resources": None if entry["resources"] is None else check_resources(entry["resources"])}
        except (UnreadableFile, ValueError, MalformedResult):
            return None

    def put(self, key, resources):
        """Keep that the compile of `key` was accepted (written whole or not at all: checks may run side by side)."""
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            partial = self.folder / f"{key}.{os.getpid()}.partial"
            partial.write_text(json.dumps({"resources": resources}))
            partial.replace(self.folder / f"{key}.json")
        except OSError:  # a read-only or full disk: the next check compiles again, nothing else changes
            pass


def _argument(value):
    """What the compiler sees of one launch argument: a tensor's dtype (pointers are taken as aligned), a scalar's
    type and value."""
    dtype = getattr(value, "dtype", None)
    if dtype is not None and hasattr(value, "data_ptr"):
        return ["tensor", str(dtype)]
    return [type(value).__name__, value if isinstance(value, (bool, int, float, str)) or value is None else repr(value)]


_GRADER_HASH = None


def _grader_hash():
    """A hash of the grader's pipeline code: a new grader compiles again."""
    global _GRADER_HASH
    if _GRADER_HASH is None:
        digest = hashlib.sha256()
        for path in sorted(Path(__file__).resolve().parent.rglob("*.py")):
            digest.update(path.read_bytes())
        _GRADER_HASH = digest.hexdigest()
    return _GRADER_HASH
