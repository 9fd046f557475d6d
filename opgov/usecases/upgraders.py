"""Operator upgraders and the version bumps they came with."""

from __future__ import annotations

from opgov.results.upgraders import UpgraderAdded, UpgraderList, UpgraderView
from opgov.usecases.declaration import UseCase, lazy
from opgov.usecases.requests.upgraders import UpgraderName, UpgraderRequest


UPGRADERS_LIST = UseCase(
    "upgraders list", result=UpgraderList, service=lazy("opgov.services.upgraders", "list_upgraders"), orm=False,
    method="GET", path="/api/v1/upgraders",
    summary="Every recorded upgrader, the recorded version bumps, and the current operator version.")

UPGRADERS_SHOW = UseCase(
    "upgraders show", request=UpgraderName, result=UpgraderView,
    service=lazy("opgov.services.upgraders", "show_upgrader"), orm=False, method="GET", path="/api/v1/upgraders/{name}",
    summary="One upgrader by name (`<name>_<overload>_<start>_<end>`).")

UPGRADERS_ADD = UseCase(
    "upgraders add", request=UpgraderRequest, result=UpgraderAdded,
    service=lazy("opgov.services.upgraders", "add_upgrader"), orm=False, writes=True, method="POST", path="/api/v1/upgraders",
    status=201, summary="Record an upgrader and the version bump it came with.",
    description="Replacing one is refused (409) until 180 days after its bump.")

DECLARED: tuple[UseCase, ...] = (UPGRADERS_LIST, UPGRADERS_SHOW, UPGRADERS_ADD)
