"""Commands about runtimes: what an engine implements (`runtimes add|list|show|coverage`) and
whether it runs a model (`check-model`)."""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path
from typing import List, Optional

import typer

from opgov.cli.app import CheckFormat, ColumnsOpt, FormatOpt, JsonOpt, TableFormat, app, note_skipped_models
from opgov.cli.runtime import output, print_json, say

runtimes_app = typer.Typer(help="Runtimes: the operators an engine implements, and what that runs.",
                           no_args_is_help=True)
app.add_typer(runtimes_app, name="runtimes")


class MatrixFormat(str, Enum):
    text = "text"
    md = "md"
    json = "json"


class Stage(str, Enum):
    core_aten = "core-aten"
    exported = "exported"


@runtimes_app.command("add")
def runtimes_add(
    runtime: str = typer.Argument(..., metavar="NAME@VERSION"),
    ops: Optional[List[str]] = typer.Option(None, "--ops", metavar="FILE",
                                            help="What it implements (repeatable; the union counts): ExecuTorch's "
                                                 "kernel yaml (functions.yaml), selected_operators.yaml, `opgov "
                                                 "opset build` output, or a list of operators. Default, for an "
                                                 "ExecuTorch release opgov knows: its portable and optimized "
                                                 "kernels."),
    released: Optional[str] = typer.Option(None, "--released", metavar="DATE", help="Its release date."),
    replace: bool = typer.Option(False, "--replace", help="Replace the operators of a registered runtime."),
    served: Optional[List[str]] = typer.Option(None, "--served", metavar="FILE",
                                               help="What it serves outside its kernel registries (repeatable): "
                                                    "ExecuTorch's register_prim_ops.cpp, or a list of operators. "
                                                    "Default, for an ExecuTorch release opgov knows: that "
                                                    "release's prim ops."),
    torch: Optional[str] = typer.Option(None, "--torch", metavar="RELEASE",
                                        help="The PyTorch release its kernels follow (2.12). Default, for an "
                                             "ExecuTorch release opgov knows: its PyTorch pin."),
    torch_pin: Optional[str] = typer.Option(None, "--torch-pin", metavar="FILE",
                                            help="Its PyTorch pin file (ExecuTorch's "
                                                 ".ci/docker/ci_commit_pins/pytorch.txt: release/2.12)."),
    source: Optional[Path] = typer.Option(None, "--source", metavar="DIR",
                                          help="An ExecuTorch source tree (a checkout of a release) to read its "
                                               "kernels, prim ops, PyTorch pin and what each kernel accepts from."),
    json_out: bool = JsonOpt,
) -> None:
    """Register a runtime at a version and the operators it implements.

    `opgov runtimes add executorch@1.3.0` registers an ExecuTorch release opgov knows from its own
    data (0.1.0 to 1.5.1; 1.5.0 and 1.5.1 read from a pre-release tree: kernels, prim ops, PyTorch pin, release date, and each kernel's dtypes
    and argument checks); `--source DIR` reads the same from a source tree of another release.

    An out= kernel (`add.out`) gives the runtime the functional operators of its torchgen family
    (`aten::add.Tensor`), by the latest snapshot's schemas; the operators it serves outside its
    kernels (ExecuTorch's prim ops: `aten::_local_scalar_dense`, `aten::sym_size.int`) are never
    missing; the PyTorch release it follows is what `check-model` checks a model's arguments
    against. Registering the same again changes nothing; another registration of a registered
    runtime is refused (exit 1) without --replace."""
    from opgov.cli.client import ask
    from opgov.core.clock import parse_time
    from opgov.formats.files import read_content
    from opgov.usecases.runtimes import RUNTIMES_ADD

    day = parse_time(released, what="--released").date() if released else None
    result = ask(RUNTIMES_ADD,
        {"torch": "--torch"}, runtime=runtime, ops=[read_content(path) for path in ops or []], released=day,
        replace=replace, served=[read_content(path) for path in served or []], torch=torch,
        torch_pin=read_content(torch_pin) if torch_pin else None, source=str(source) if source else None)
    if json_out:
        print_json(result)
        return
    from opgov.render.runtimes import summary_line

    say(f"{result.outcome} {summary_line(result.runtime)}")
    if result.note:
        say(f"note: {result.note}")
    if result.not_in_registry:
        shown = ", ".join(result.not_in_registry[:5]) + (" …" if len(result.not_in_registry) > 5 else "")
        say(f"note: {len(result.not_in_registry)} kernel(s) the latest snapshot does not hold: {shown}")


@runtimes_app.command("list")
def runtimes_list(json_out: bool = JsonOpt, fmt: FormatOpt = TableFormat.auto, columns: ColumnsOpt = None) -> None:
    """Every registered runtime: kernels, the operators they give, core coverage, and the core
    operators each version gained over the previous version of the same runtime."""
    from opgov.cli.client import call
    from opgov.usecases.runtimes import RUNTIMES_LIST

    out = output(fmt, json_out, columns)
    result = call(RUNTIMES_LIST)
    if out.json:
        print_json(result)
        return
    columns = ["runtime", "released", "kernels", "operators", "core", "gained", "lost"]
    if not result.runtimes:
        out.empty("no runtimes registered (opgov runtimes add NAME@VERSION --ops FILE)", columns)
        return
    out.table(f"core operators of snapshot {result.snapshot}", columns,
              [[s.runtime, s.released or "", s.kernels, s.operators,
                f"{s.core_have}/{s.core_total} ({s.core_share:.0%})",
                f"+{len(s.core_gained)}" if s.previous else "", f"-{len(s.core_lost)}" if s.core_lost else ""]
               for s in result.runtimes])


@runtimes_app.command("show")
def runtimes_show(runtime: str = typer.Argument(..., metavar="NAME@VERSION"), json_out: bool = JsonOpt) -> None:
    """One runtime: where its operators came from, what it gained, the core operators it lacks."""
    from opgov.cli.client import ask
    from opgov.render.runtimes import render_detail
    from opgov.usecases.runtimes import RUNTIMES_SHOW

    result = ask(RUNTIMES_SHOW, runtime=runtime)
    if json_out:
        print_json(result)
    else:
        sys.stdout.write(render_detail(result))


@runtimes_app.command("coverage")
def runtimes_coverage(
    models: Optional[str] = typer.Option(None, "--models", metavar="CORPUS", callback=note_skipped_models,
                                         help="A corpus JSON, a .pt2 archive, a folder of *_ops.json corpora and .pt2 archives, or a shipped corpus by name (shipped, torchvision, transformers): which models "
                                              "each runtime runs."),
    stage: Stage = typer.Option(Stage.core_aten, "--stage",
                                help="The models' operators after torch.export's core ATen decompositions "
                                     "(what an edge runtime receives), or as exported."),
    fmt: MatrixFormat = typer.Option(MatrixFormat.text, "--format"),
    out: Optional[Path] = typer.Option(None, "--out", metavar="PATH", help="Write to a file instead of stdout."),
) -> None:
    """The coverage matrix: core operators × registered runtimes (oldest version first), and
    which models each runtime runs. `--format md` has the whole matrix; `json` everything."""
    from opgov.core.errors import BadInput
    from opgov.cli.client import ask
    from opgov.render.runtimes import render_matrix
    from opgov.usecases.runtimes import RUNTIMES_COVERAGE

    if out is not None and (out.is_dir() or not out.parent.is_dir()):
        raise BadInput(f"--out {out}: " + ("is a directory" if out.is_dir() else f"no directory {out.parent}"))
    result = ask(RUNTIMES_COVERAGE, stage=stage.value, models=models)  # --models: with --db only
    text = render_matrix(result, fmt.value)
    if out is None:
        sys.stdout.write(text)
        return
    from opgov.formats.atomic import atomic_write_text

    try:
        atomic_write_text(out, text)
    except OSError as err:
        raise BadInput(f"--out {out}: cannot write ({err.strerror or err})") from None
    say(f"wrote {out}")


@app.command("check-model")
def check_model_cmd(
    models: List[str] = typer.Argument(..., metavar="MODEL...",
                                       help="A torch.export archive (.pt2), a selected_operators.yaml, a file "
                                            "of operators (one a line, or a JSON list), or CORPUS#model; "
                                            "several: their union."),
    runtime: Optional[str] = typer.Option(None, "--runtime", metavar="RUNTIME",
                                          help="A registered runtime NAME@VERSION, or the snapshot the "
                                               "runtime was built from."),
    fmt: CheckFormat = typer.Option(CheckFormat.text, "--format"),
) -> None:
    """Can a runtime run this model? Against a registered runtime (NAME@VERSION): the operators it
    lacks, how each would lower by the rules on record, deprecations, the earliest version that
    runs it (exit 1 when it does not run). Otherwise: deleted, deprecated or missing operators
    against the registry and a snapshot (exit 1)."""
    from pathlib import Path

    from opgov.cli.client import call
    from opgov.usecases.runtimes import CHECK_MODEL

    if all(Path(spec).is_file() for spec in models):  # read here, and sent as they are with --server
        from opgov.formats.files import read_content

        request = CHECK_MODEL.ask(models=[read_content(spec) for spec in models], runtime=runtime)
    else:  # CORPUS#model: a corpus on this machine (with --db only)
        from opgov.formats.corpus import resolve_model_ops

        for spec in models:
            if "#" not in spec and not Path(spec).is_file():
                resolve_model_ops(spec)  # says what it is not
        request = CHECK_MODEL.ask(specs=list(models), runtime=runtime)
    checked = call(CHECK_MODEL, request)
    from opgov.results.runtimes import RuntimeModelCheck

    if isinstance(checked, RuntimeModelCheck):
        from opgov.render.runtimes import render_check

        sys.stdout.write(render_check(checked, fmt.value))
        if not checked.runs:
            raise typer.Exit(1)
        return
    if fmt.value == "json":  # the whole answer, the arguments of each call included
        from opgov.results.plain import to_json

        sys.stdout.write(to_json(checked) + "\n")
        if not checked.ok:
            raise typer.Exit(1)
        return
    from opgov.core.corpus import Finding, ModelCheck
    from opgov.render.decomps_text import render_model_check
    from opgov.render.model_args import arguments_github, arguments_text

    def back(found) -> tuple:
        return tuple(Finding(f.rule, f.op, f.message, f.replacement, f.date) for f in found)

    result = ModelCheck(ops=tuple(checked.operators), errors=back(checked.errors), warnings=back(checked.warnings),
                        notes=back(checked.notes), earliest_snapshot=checked.earliest_snapshot,
                        snapshots_checked=checked.snapshots_checked)
    text = render_model_check(result, fmt.value)
    extra = arguments_github(checked.arguments) if fmt.value == "github" else arguments_text(checked.arguments)
    if extra:
        text = (text if text.endswith("\n") or not text else text + "\n") + "\n".join(extra)
    if text:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
    if not checked.ok:
        raise typer.Exit(1)
