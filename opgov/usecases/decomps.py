"""Decomposition rules (the list, loading a rules file, importing torch's table), their check and
the build-your-own opset."""

from __future__ import annotations

from opgov.results.decomps import OpsetReport, RuleView, RulesLoaded, TorchRulesImported, ViolationsReport
from opgov.usecases.declaration import UseCase, lazy
from opgov.usecases.requests.decomps import DecompsCheck, OpsetRequest, RulesFile, TorchImportRequest


DECOMPS_LIST = UseCase(
    "decomps list", group="decompositions", result=list[RuleView], service=lazy("opgov.services.decomps", "list_rules"), orm=False,
    method="GET", path="/api/v1/decomps",
    summary="Every rule (operator → targets) with where it came from, by operator.")

CHECK_DECOMPS = UseCase(
    "check-decomps", group="decompositions", request=DecompsCheck, result=ViolationsReport,
    service=lazy("opgov.services.decomps", "check_report"), orm=False, method="GET", path="/api/v1/decomps/check",
    summary="Every rule of a non-core operator ends in core operators; no cycles; no dead targets; drift.",
    description="What `opgov check-decomps` prints (`errors` > 0 is what makes it exit 1). Writes nothing.")

DECOMPS_LOAD = UseCase(
    "decomps load", group="decompositions", request=RulesFile, result=RulesLoaded,
    service=lazy("opgov.services.decomps", "load_rules_upload"), writes=True, orm=False, method="POST", path="/api/v1/decomps",
    status=201, summary="Record the rules of an uploaded rules file (maintainers).",
    description="Refused (409, nothing recorded) when a rule would make a decomposition produce a non-core "
                "operator, a cycle or a deprecated target; a committee decision's rule is kept over a file's "
                "(decision > file > torch).")

DECOMPS_IMPORT_TORCH = UseCase(
    "decomps import-torch", group="decompositions", request=TorchImportRequest, result=TorchRulesImported,
    service=lazy("opgov.services.decomps", "import_torch"), writes=True, orm=False, method="POST",
    path="/api/v1/decomps/import-torch",
    summary="Record the rules of torch.export's default decomposition table, traced on the server "
            "(maintainers).",
    description="The server needs torch installed. Other writes go on while torch traces: the role and "
                "the names are checked first, in a transaction of their own.")

OPSET_BUILD = UseCase(
    "opset build", group="reports", request=OpsetRequest, result=OpsetReport,
    service=lazy("opgov.services.decomps", "opset_report"), orm=False, method="GET", path="/api/v1/opset",
    summary="The operators a backend must implement after the chosen decompositions.",
    description="JSON, or what `opgov opset build --format text|selective-build|python` prints (the "
                "selective-build yaml with the out= variants ExecuTorch's kernels implement).")

DECLARED: tuple[UseCase, ...] = (DECOMPS_LIST, CHECK_DECOMPS, DECOMPS_LOAD, DECOMPS_IMPORT_TORCH, OPSET_BUILD)
