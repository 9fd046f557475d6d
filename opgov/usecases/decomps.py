"""Decomposition rules (the list, loading a rules file, importing torch's table), their checks and
the build-your-own opset."""

from __future__ import annotations

from opgov.usecases.declaration import MODELS, UseCase

REQUESTS = "opgov.usecases.requests.decomps"
SERVICES = "opgov.services.decompositions"
REPORTS = "opgov.results.decomps"

DECLARED: tuple[UseCase, ...] = (
    UseCase("decomps list", group="decompositions", result=f"list[{MODELS}:RuleView]", service=f"{SERVICES}:list_rules", orm=False,
            method="GET", path="/api/v1/decomps",
            summary="Every rule (operator → targets) with where it came from, by operator."),
    UseCase("check-decomps", group="decompositions", request=f"{REQUESTS}:DecompsCheck", result=f"{REPORTS}:ViolationsReport",
            service=f"{SERVICES}:check_report", orm=False, method="GET", path="/api/v1/decomps/check",
            summary="Every rule of a non-core operator ends in core operators; no cycles; no dead targets; drift.",
            description="What `opgov check-decomps` prints (`errors` > 0 is what makes it exit 1). Writes nothing."),
    UseCase("decomps load", group="decompositions", request=f"{REQUESTS}:RulesFile", result=f"{MODELS}:RulesLoaded",
            service=f"{SERVICES}:load_rules_upload", writes=True, orm=False, method="POST", path="/api/v1/decomps",
            status=201, summary="Record the rules of an uploaded rules file (maintainers).",
            description="Refused (409, nothing recorded) when a rule would make a decomposition produce a non-core "
                        "operator, a cycle or a deprecated target; a committee decision's rule is kept over a file's "
                        "(decision > file > torch)."),
    UseCase("decomps import-torch", group="decompositions", request=f"{REQUESTS}:TorchImportRequest", result=f"{MODELS}:TorchRulesImported",
            service=f"{SERVICES}:import_torch", writes=True, transactions=True, orm=False, method="POST",
            path="/api/v1/decomps/import-torch",
            summary="Record the rules of torch.export's default decomposition table, traced on the server "
                    "(maintainers).",
            description="The server needs torch installed. Other writes go on while torch traces: the role and "
                        "the names are checked first, in a transaction of their own."),
    UseCase("decomps closure", group="decompositions", request=f"{REQUESTS}:ClosureQuery",
            result="opgov.results.closure:ClosureReport", service="opgov.services.closure:closure_report",
            orm=False, method="GET", path="/api/v1/decomps/closure",
            summary="The closure proof: does each operator of torch's default decomposition table end only in core "
                    "operators, following the table as traced?",
            description="From the facts `decomps import-torch` recorded. Each item: `op`, `closed`, `ends_in` (the "
                        "operators it ends in) and, when not closed, `why`. `against`: the change from another "
                        "closure (operators that stopped or started closing: a finding)."),
    UseCase("opset build", group="reports", request=f"{REQUESTS}:OpsetRequest", result=f"{REPORTS}:OpsetReport",
            light=True,
            service=f"{SERVICES}:opset_report", orm=False, method="GET", path="/api/v1/opset",
            formats=(("text", "text/plain"), ("selective-build", "application/yaml"), ("python", "text/x-python")),
            summary="The operators a backend must implement after the chosen decompositions.",
            description="JSON, or what `opgov opset build --format text|selective-build|python` prints (the "
                        "selective-build yaml with the out= variants ExecuTorch's kernels implement)."),
)
