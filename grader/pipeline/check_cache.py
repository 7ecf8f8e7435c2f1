"""What a student's earlier checks learned of a kernel that has not changed since: that the GPU compiler accepted
it, and its performance profile. Kept for their repeated checks on their own machine.

Compiling each kernel for sm_80 and sm_90 is most of what checking an unchanged puzzle costs (about 8 s of one
core for the whole course), and profiling it at its benchmark size most of what the estimate adds. Both depend
only on what they are given: the rebuilt modules' text (a kernel's module can import nothing but triton, math
and its siblings), the kernel's name, each launch's argument types and ints, the targets, and the benchmark's
launch (its puzzle's entry in the course and the configuration asked for), under one version of Triton and of
the grader; the benchmark's tensors are never filled, so the addresses a profile counts come from indices
alone.
`triton-course check` keeps, under a hash of all of that, that the compiler accepted every launch, what the
benchmark's compile asks of an SM, and the profile; a later check with the same hash tells the worker, which
then only interprets the cases. A rejection is never kept (its message comes from the compiler that ran), nor
a profile that failed.

Only a student's own checks use this. A class is graded with nothing of one submission reaching the next, and
a check with hidden cases keeps nothing (the hash of their sizes would sit on disk).
"""
import hashlib
import json
import os
from pathlib import Path

from .load.files import UnreadableFile, read_regular_file
from .protocol import MalformedResult, check_profile, check_resources

ENTRY_BYTES = 1 << 20


def default_folder():
    """Where `triton-course check` keeps what it learned: $TRITON_COURSE_CACHE, else the user's cache folder."""
    if os.environ.get("TRITON_COURSE_CACHE"):
        return Path(os.environ["TRITON_COURSE_CACHE"])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "triton-course" / "checked"


class CheckCache:
    """One small JSON file per kernel as checked, named by the hash of what its compile and profile read."""

    def __init__(self, folder):
        self.folder = Path(folder)

    def key(self, request, course_text=None):
        """The hash of everything the worker's compile and profile read of `request` (a protocol.job)."""
        import triton

        launches = [[_argument(value) for value in launch["args"]]
                    for case in request["cases"] for launch in case["launches"]]
        profile = request.get("profile")
        checked = {"triton": triton.__version__, "grader": _grader_hash(), "modules": request["modules"],
                   "kernel": request["kernel"], "targets": request["targets"], "launches": launches,
                   "profile": profile and {**{k: v for k, v in profile.items() if k != "seconds"},
                                           "course": course_text}}
        return hashlib.sha256(json.dumps(checked, sort_keys=True, default=repr).encode()).hexdigest()

    def recall(self, request, course_text=None):
        """What earlier checks learned of `request` (a protocol.job, whose profile reads `course_text`), told to
        the worker: the request then asks it only for what is not known."""
        key = self.key(request, course_text)
        return Recalled(self, key, self.get(key), request)

    def get(self, key):
        """{"resources": what the benchmark's compile asks of an SM or None, "profile": the profile or None} when
        the compiler accepted this before, or None. An entry that is not what this class writes is ignored."""
        try:
            entry = json.loads(read_regular_file(self.folder / f"{key}.json", ENTRY_BYTES))
            if not isinstance(entry, dict) or set(entry) != {"resources", "profile"}:
                return None
            return {"resources": None if entry["resources"] is None else check_resources(entry["resources"]),
                    "profile": None if entry["profile"] is None else check_profile(entry["profile"])}
        except (UnreadableFile, ValueError, MalformedResult):
            return None

    def put(self, key, resources, profile):
        """Keep that the compile of `key` was accepted, with a profile that did not fail (written whole or not at
        all: checks may run side by side)."""
        if profile is not None and "error" in profile:
            profile = None
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            partial = self.folder / f"{key}.{os.getpid()}.partial"
            partial.write_text(json.dumps({"resources": resources, "profile": profile}))
            partial.replace(self.folder / f"{key}.json")
        except OSError:  # a read-only or full disk: the next check compiles again, nothing else changes
            pass


class Recalled:
    """What a check cache knew of one request (None: nothing), and what it keeps of the request's outcome."""

    def __init__(self, cache, key, entry, request):
        self.cache, self.key, self.entry = cache, key, entry
        if entry:
            request["compiled"] = {"resources": entry["resources"]}
            if entry["profile"] is not None:  # nothing for the worker to profile either
                request.pop("profile", None)

    def complete(self, outcome):
        """The worker's checked outcome with what was known added, and kept where the compiler accepted it."""
        if self.entry and self.entry["profile"] is not None:
            outcome["profile"] = self.entry["profile"]
        elif not outcome["compile"]:
            self.cache.put(self.key, self.entry["resources"] if self.entry else outcome.get("resources"),
                           outcome.get("profile"))
        return outcome


def _argument(value):
    """What the compiler sees of one launch argument: a tensor's dtype (pointers are taken as aligned), a scalar's
    type and value."""
    dtype = getattr(value, "dtype", None)
    if dtype is not None and hasattr(value, "data_ptr"):
        return ["tensor", str(dtype)]
    return [type(value).__name__, value if isinstance(value, (bool, int, float, str)) or value is None else repr(value)]


_GRADER_HASH = None


def _grader_hash():
    """A hash of the grader's pipeline code and of the course's reader (a puzzle's benchmark launch is made from
    its entry there): a new grader compiles and profiles again."""
    global _GRADER_HASH
    if _GRADER_HASH is None:
        digest = hashlib.sha256()
        pipeline = Path(__file__).resolve().parent
        for path in [*sorted(pipeline.rglob("*.py")), pipeline.parent / "course.py"]:
            digest.update(path.read_bytes())
        _GRADER_HASH = digest.hexdigest()
    return _GRADER_HASH
