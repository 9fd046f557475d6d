"""The commands derived whole from their use case's declaration (opgov.usecases: those with a
``render``): ``opgov NAME [--json]``, its help the declaration's summary, its result from
opgov.cli.client (in-process, or the server's with ``--server``), its text the renderer's.

Registering reads the declarations only (names and summaries): ``opgov --help`` imports no model."""

from __future__ import annotations

from opgov.cli.app import JsonOpt, app
from opgov.usecases import USE_CASES, UseCase


def _command(use_case: UseCase):
    def run(json_out: bool = JsonOpt) -> None:
        import sys

        from opgov.cli.client import call
        from opgov.cli.runtime import print_json
        from opgov.render.escapes import visible

        result = call(use_case)
        if json_out:
            print_json(result)
        else:  # text is data: a control character in a label is shown, never obeyed
            sys.stdout.write(visible(use_case.renderer(result)))

    run.__doc__ = use_case.summary + ("\n\n" + use_case.description if use_case.description else "")
    return run


for _use_case in USE_CASES:
    if _use_case.render is not None:
        if " " in _use_case.name or _use_case.request is not None:
            raise ValueError(f"{_use_case.name}: a derived command is one word that takes no request (for now)")
        app.command(_use_case.name)(_command(_use_case))
