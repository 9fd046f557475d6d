"""A request's budget of processing time: what bounds a request's CPU, whatever its input.

The service gives each request a budget (``opgov serve``: ``OPGOV_REQUEST_SECONDS``, from the moment
its body has arrived); the loops whose work grows with the input (the operators of a model check,
the nodes of a serialized program, the entries of a registry) call :func:`spend` as they go, and
past the budget the request is refused as :class:`~opgov.core.errors.TooCostly`, in words, instead
of holding a worker for as long as its input takes. Outside a request (the CLI, tests) there is no
budget and :func:`spend` costs a context-variable read."""

from __future__ import annotations

import time
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from opgov.core.errors import TooCostly


@dataclass
class Budget:
    seconds: float
    started: float | None = None  # monotonic; None until the request's processing starts

    def start(self) -> None:
        if self.started is None:
            self.started = time.monotonic()

    def check(self) -> None:
        if self.started is None:
            self.start()
        elif time.monotonic() - self.started > self.seconds:
            raise TooCostly(f"this request needs more than its {self.seconds:g} s of processing time; "
                            "send less at once (fewer operators, a smaller file), or run it on the command line")


_BUDGET: ContextVar[Budget | None] = ContextVar("opgov_budget", default=None)


def spend() -> None:
    """Raise :class:`TooCostly` when the running request has spent its budget."""
    budget = _BUDGET.get()
    if budget is not None:
        budget.check()


@contextmanager
def budgeted(budget: Budget):
    """Run the block (and what it calls, in this context) within ``budget``."""
    token = _BUDGET.set(budget)
    try:
        yield budget
    finally:
        _BUDGET.reset(token)
