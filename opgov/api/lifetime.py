"""One server, one lifetime: a worker of ``opgov serve --workers N`` ends when its supervisor does;
and what it takes in for a request it gives back (:func:`give_memory_back`).

The supervisor (uvicorn's, in the process ``opgov serve`` started) names itself in
``OPGOV_SUPERVISOR_PID`` before it starts the workers. A worker whose parent is that process asks
Linux to send it SIGTERM when the parent dies (``prctl(PR_SET_PDEATHSIG)``), and also watches its
parent from a thread (every platform; and the case where the parent died before the request): a
new parent means the supervisor is gone, so the worker stops as on SIGTERM (finishing the requests
in flight) and, if it is still there ``GRACE`` seconds later, exits. A ``kill -9`` of the main
process so no longer leaves workers holding the port.
"""

from __future__ import annotations

import os
import signal
import threading
import time

SUPERVISOR = "OPGOV_SUPERVISOR_PID"
GRACE = 10.0  # seconds a worker has to finish its requests once its supervisor is gone
_PR_SET_PDEATHSIG = 1
_started = False


def follow_supervisor() -> None:
    """In a worker (a process the supervisor ``opgov serve`` named started): end with it, also
    when the supervisor died while this worker was still starting (its parent is then another
    process already: the watch ends it at once). Elsewhere (one process, no supervisor; the
    supervisor itself; a test's application) nothing."""
    global _started
    text = os.environ.get(SUPERVISOR, "")
    if _started or not text.isdigit() or int(text) == os.getpid():
        return
    _started = True
    supervisor = int(text)
    _die_with_parent()
    threading.Thread(target=_watch, args=(supervisor,), name="opgov-supervisor-watch", daemon=True).start()


def _die_with_parent() -> None:
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError):  # not Linux: the watch below does it
        pass


def _watch(supervisor: int, every: float = 0.5) -> None:
    while os.getppid() == supervisor:
        time.sleep(every)
    os.kill(os.getpid(), signal.SIGTERM)  # as the supervisor would stop it: requests in flight finish
    time.sleep(GRACE)
    os._exit(1)


def give_memory_back() -> None:
    """Hand the heap memory Python freed back to the system (glibc's ``malloc_trim``; elsewhere
    nothing): a worker that parsed a large upload does not stay that large."""
    try:
        import ctypes

        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):
        pass
