"""``opgov status``: the database at a glance, from its use case (opgov.usecases.admin), in-process
or of the server with ``--server``."""

from __future__ import annotations

from opgov.cli.app import JsonOpt, app


@app.command("status")
def status(json_out: bool = JsonOpt) -> None:
    """The database at a glance: its revision, snapshots, operators by category, open proposals and
    members."""
    import sys

    from opgov.cli.client import call
    from opgov.cli.runtime import print_json
    from opgov.render.escapes import visible
    from opgov.render.status import status_text
    from opgov.usecases.status import STATUS

    result = call(STATUS)
    if json_out:
        print_json(result)
    else:  # text is data: a control character in a label is shown, never obeyed
        sys.stdout.write(visible(status_text(result)))
