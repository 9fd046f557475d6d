"""The lifecycle: its steps, the tick, and the upgraders' 180-day timers the tick reports."""

from __future__ import annotations

from opgov.results.lifecycle import LifecycleStepResult, TickResult, UpgraderTimers
from opgov.usecases.declaration import UseCase, lazy
from opgov.usecases.requests.lifecycle import (
    DeprecateRequest, StepRequest, TickRequest, TimersQuery, UndeprecateRequest,
)


DEPRECATE = UseCase(
    "deprecate", request=DeprecateRequest, result=LifecycleStepResult,
    service=lazy("opgov.services.lifecycle", "deprecate"), writes=True, method="POST",
    path="/api/v1/operators/{name}/deprecate", summary="active → deprecating (maintainers).")

MARK_DEPRECATED = UseCase(
    "mark-deprecated", request=StepRequest, result=LifecycleStepResult,
    service=lazy("opgov.services.lifecycle", "mark_deprecated"), writes=True, method="POST",
    path="/api/v1/operators/{name}/mark-deprecated",
    summary="deprecating → deprecated, no sooner than deprecating_days after.")

DELETE = UseCase(
    "delete", request=StepRequest, result=LifecycleStepResult,
    service=lazy("opgov.services.lifecycle", "delete"), writes=True, method="POST",
    path="/api/v1/operators/{name}/delete", summary="deprecated → deleted, no sooner than deprecated_days after.")

UNDEPRECATE = UseCase(
    "undeprecate", request=UndeprecateRequest, result=LifecycleStepResult,
    service=lazy("opgov.services.lifecycle", "undeprecate"), writes=True, method="POST",
    path="/api/v1/operators/{name}/undeprecate", summary="Back to active from deprecating or deprecated.")

TICK = UseCase(
    "tick", group="lifecycle", request=TickRequest, result=TickResult,
    service=lazy("opgov.services.lifecycle", "tick"), writes=True, method="POST",
    path="/api/v1/tick",
    summary="Lifecycle transitions due now (and within `within_days`); `apply` performs the due ones.")

UPGRADERS_TIMERS = UseCase(
    "upgraders timers", request=TimersQuery, result=UpgraderTimers,
    service=lazy("opgov.services.lifecycle", "upgrader_timers"), orm=False, method="GET", path="/api/v1/upgraders/timers",
    summary="Upgraders that may be replaced now (180 days after their version bump), and those that may "
            "within `within_days`: what `opgov tick` reports besides the lifecycle.")

DECLARED: tuple[UseCase, ...] = (DEPRECATE, MARK_DEPRECATED, DELETE, UNDEPRECATE, TICK, UPGRADERS_TIMERS)
