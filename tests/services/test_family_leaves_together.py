"""A family moves through the lifecycle together in every path, also after the registry dropped
its members: the cholesky case (a release removed cholesky and cholesky.out together)."""

from __future__ import annotations

import json

from tests.api.test_api_serve import opgov


def _without_cholesky(source, target):
    text = source.read_text(encoding="utf-8")
    start = text.index("- func: cholesky.out(")
    end = text.index("- func: cholesky_solve.out(")
    target.write_text(text[:start] + text[end:], encoding="utf-8")
    (target.parent / "tags.yaml").write_text((source.parent / "tags.yaml").read_text(encoding="utf-8"),
                                             encoding="utf-8")
    return target


def _state(db: str, op: str) -> str:
    return json.loads(opgov(db, "ops", "show", op, "--json"))["lifecycle"]


def test_deleting_a_dropped_family_deletes_every_member(tmp_path, pytorch_release):
    folder = pytorch_release("2.12.0")
    (tmp_path / "next").mkdir()
    later = _without_cholesky(folder / "native_functions.yaml", tmp_path / "next" / "native_functions.yaml")
    for how in ("delete", "tick"):
        db = f"sqlite:///{tmp_path / f'{how}.db'}"
        opgov(db, "db", "upgrade", "--simulation")
        opgov(db, "import", str(folder / "native_functions.yaml"), "--label", "2.12.0", now="2026-01-01T00:00Z")
        opgov(db, "deprecate", "aten::cholesky", "--reason", "use linalg_cholesky",
              "--replacement", "aten::linalg_cholesky", now="2026-01-02T00:00Z")
        assert _state(db, "aten::cholesky.out") == "deprecating"  # the family moved together
        opgov(db, "mark-deprecated", "aten::cholesky", now="2026-01-20T00:00Z")
        opgov(db, "import", str(later), "--label", "2.12.1", now="2026-02-01T00:00Z")  # the release drops both
        if how == "delete":
            opgov(db, "delete", "aten::cholesky", "--reason", "gone from the registry", now="2026-08-01T00:00Z")
        else:
            opgov(db, "tick", "--apply", now="2026-08-01T00:00Z")
        assert (_state(db, "aten::cholesky"), _state(db, "aten::cholesky.out")) == ("deleted", "deleted"), how
        report = json.loads(opgov(db, "check-bc", "2.12.0", "2.12.1", "--format", "json", now="2026-08-02T00:00Z"))
        assert not [f for f in report["findings"] if f["operator"].startswith("aten::cholesky")
                    and not f["operator"].startswith(("aten::cholesky_", )) and f["severity"] == "error"], how
