"""Runtimes (what an engine implements, the coverage matrix) and the checks of models against them."""

from __future__ import annotations

from opgov.results.runtimes import (
    CoverageMatrix, ExportCheck, ModelCheckReport, RuntimeAdded, RuntimeDetail, RuntimeList, RuntimeModelCheck,
)
from opgov.usecases.declaration import UseCase, lazy
from opgov.usecases.requests.runtimes import (
    CoverageQuery, ExportCheckRequest, ModelCheckUpload, RuntimeRef, RuntimeUpload,
)


RUNTIMES_LIST = UseCase("runtimes list", result=RuntimeList, service=lazy("opgov.services.runtimes", "list_runtimes"), orm=False,
                        method="GET", path="/api/v1/runtimes",
                        summary="Every registered runtime, oldest version first: kernels, core coverage, gains over the previous "
                                "version.")
CHECK_MODEL = UseCase("check-model", request=ModelCheckUpload, result=ModelCheckReport | RuntimeModelCheck,
                      service=lazy("opgov.services.runtimes", "check_model"),
                      orm=False, method="POST", path="/api/v1/check-model", writes=False, group="checks",
                      summary="Can a runtime run a model?",
                      description="With `runtime` a registered `NAME@VERSION`: a runtime check (`runs`; the missing operators "
                                  "and how each lowers by the rules on record; deprecations; the earliest version that runs "
                                  "it). Otherwise a check against the registry and, with `runtime` a snapshot label, that "
                                  "snapshot: `ok` is false on deleted, deprecated or missing operators. The model is a "
                                  "multipart form (`models`: .pt2 archives, selected_operators.yaml, op lists; several give "
                                  "their union), or the JSON body `{operators, runtime}`. Writes nothing.")
DECLARED: tuple[UseCase, ...] = (
    UseCase("runtimes add", request=RuntimeUpload, result=RuntimeAdded,
            service=lazy("opgov.services.runtimes", "add_runtime"), orm=False, writes=True, method="POST", path="/api/v1/runtimes", status=201,
            summary="Register a runtime at a version with the operators of the uploaded files (their union; "
                    "maintainers).",
            description="The same operators again change nothing; others are refused (409) without `replace`."),
    RUNTIMES_LIST,
    UseCase("runtimes coverage", request=CoverageQuery, result=CoverageMatrix,
            service=lazy("opgov.services.runtimes", "coverage"), orm=False, method="GET", path="/api/v1/runtimes/coverage",
            summary="Core operators × registered runtimes, and which of the bundled models each runtime runs.",
            description="The models are those of `OPGOV_MODELS_DIR` on the server, else the corpora opgov ships. `format` md or "
                        "text answers the matrix as `opgov runtimes coverage --format md|text` prints it."),
    UseCase("runtimes show", request=RuntimeRef, result=RuntimeDetail,
            service=lazy("opgov.services.runtimes", "show_runtime"), orm=False, method="GET", path="/api/v1/runtimes/{runtime}",
            summary="One runtime (`NAME@VERSION`): its sources, kernels, the functional operators they give, the "
                    "core operators it lacks."),
    CHECK_MODEL,
    UseCase("export-check", request=ExportCheckRequest, result=ExportCheck,
            service=lazy("opgov.services.runtimes", "export_check"), orm=False, method="POST", path="/api/v1/export-check",
            writes=False, group="checks", commands=(),
            summary="The export-time check (the Python entry point `opgov.export_check`).",
            description="The program's deprecating operators (warn), deprecated or deleted ones (stop), with dates "
                        "and replacements, and which registered runtimes run it; with `runtime` and the program's "
                        "`calls`, each call checked argument by argument against the torch release that runtime "
                        "follows (`arguments`, as check-model's). Writes nothing."),
)
