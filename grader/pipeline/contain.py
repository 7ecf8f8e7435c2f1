"""Run a command so that nothing it starts outlives it: `python -m grader.pipeline.contain CMD...`.

Without bubblewrap (whose process namespace ends everything with it), a worker could start a process that
leaves its session, double-forks or sleeps until the grader has moved on. This process makes itself the
child subreaper of what it starts (Linux re-parents every orphan of the command to it, whatever session the
orphan made for itself), runs the command, and when the command ends kills every process left below it.
It exits with the command's status. It imports nothing of the grader and starts in milliseconds.
"""
import ctypes
import os
import signal
import sys

PR_SET_CHILD_SUBREAPER = 36


def children(pid):
    """The pids whose parent is `pid`."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        fields = stat[stat.rindex(b")") + 2:].split()
        if int(fields[1]) == pid:
            found.append(int(entry))
    return found


def kill_descendants():
    """SIGKILL every process below this one until none is left, reaping them."""
    me = os.getpid()
    while True:
        below = children(me)
        if not below:
            return
        for pid in below:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for _ in below:
            try:
                os.waitpid(-1, 0)
            except ChildProcessError:
                break


def _stop(signum, frame):
    kill_descendants()
    os._exit(128 + signum)


def main(argv):
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    signal.signal(signal.SIGTERM, _stop)  # the grader's timeout: end everything below first
    pid = os.fork()
    if pid == 0:
        try:
            os.execvp(argv[0], argv)
        finally:
            os._exit(127)
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            break
        except InterruptedError:
            continue
    kill_descendants()
    code = os.waitstatus_to_exitcode(status)
    if code < 0:  # ended by a signal: end the same way, so that the grader can tell which
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    sys.exit(code)


if __name__ == "__main__":
    main(sys.argv[1:])
