"""The services called directly, with a session, an actor and a clock: each returns a typed,
frozen result whose JSON is the documented shape (the CLI's --json and the API's responses)."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest

from opgov.results.plain import to_json
from tests.conftest import SAMPLE

V1, V2 = SAMPLE / "native_functions.v1.yaml", SAMPLE / "native_functions.v2.yaml"
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)


@pytest.fixture
def engine(any_db_url):
    from opgov.db.engine import make_engine, resolve_url
    from opgov.services.admin import upgrade_database

    done = upgrade_database(any_db_url)
    assert done.before is None and done.after is not None
    engine = make_engine(resolve_url(any_db_url))
    yield engine
    engine.dispose()


def run(engine, actor: str, days: float, use_case, *args, orm: bool = True, **kwargs):
    """Call one service in one transaction, as ``actor``, at ``T0 + days``."""
    from opgov.core.clock import FixedClock
    from opgov.db.engine import transaction
    from opgov.reads.common import Ctx

    with transaction(engine, orm=orm) as session:
        return use_case(Ctx(session, actor, FixedClock(T0 + timedelta(days=days))), *args, **kwargs)


def same_as_the_api(result, kind=None) -> None:
    """The CLI's JSON of a result (the standard library's, opgov.results.plain) is the API's
    (pydantic's, as a route writes it: aliases from the class's config) byte for byte, and a client
    reads it back as the same result."""
    from pydantic import TypeAdapter

    adapter = TypeAdapter(kind or type(result))
    assert to_json(result) == adapter.dump_json(result, indent=2).decode()
    assert to_json(result, indent=None) == adapter.dump_json(result).decode()
    assert adapter.validate_json(to_json(result)) == result


def test_import_and_operator_results(engine):
    from dataclasses import FrozenInstanceError

    from opgov.services.imports import import_snapshot
    from opgov.services.ops import list_ops, show_op
    from opgov.results.imports import ImportResult
    from opgov.results.ops import OperatorDetail, OperatorSummary

    first = run(engine, "bot", 0, import_snapshot, str(V1), label="v1", orm=False)
    second = run(engine, "bot", 1, import_snapshot, str(V2), label="v2", orm=False)
    assert isinstance(first, ImportResult) and first.baseline and first.added
    assert not second.baseline and second.label == "v2"
    with pytest.raises(FrozenInstanceError):
        second.label = "other"

    ops = run(engine, "anyone", 1, list_ops, category="core")
    assert ops and all(isinstance(o, OperatorSummary) and o.category == "core" for o in ops)
    found = run(engine, "anyone", 1, list_ops, q="GLU")
    assert "aten::glu" in [o.name for o in found] and all("glu" in o.name for o in found)

    glu = run(engine, "anyone", 1, show_op, "aten::glu")
    assert isinstance(glu, OperatorDetail)
    assert [h.snapshot for h in glu.history] == ["v1", "v2"]
    assert glu.history[0].imported_at == T0  # a datetime, not a string to slice
    shape = json.loads(to_json(glu))
    assert shape["schema"] == glu.schema and shape["history"][0]["imported_at"] == "2026-01-05T09:00:00Z"
    assert shape["sunset"] is None
    same_as_the_api(glu)
    same_as_the_api(first)


def test_governance_and_lifecycle_results(engine):
    from opgov.core.errors import PolicyRefusal
    from opgov.services.governance import add_member, list_settings, propose, review, show_proposal
    from opgov.services.imports import import_snapshot
    from opgov.services.lifecycle import deprecate, tick
    from opgov.services.ops import show_op
    from opgov.results.lifecycle import LifecycleStepResult, TickResult
    from opgov.results.governance import ProposalView, Settings

    run(engine, "bot", 0, import_snapshot, str(V1), label="v1", orm=False)
    for name, role in (("chair", "maintainer"), ("m2", "maintainer"), ("dev", "developer")):
        run(engine, "chair", 0, add_member, name, role)
    settings = run(engine, "dev", 0, list_settings)
    assert isinstance(settings, Settings) and settings.quorum == 2 and settings.simulation is False

    opened = run(engine, "dev", 0, propose, "aten::glu", "core", "small and everywhere")
    assert isinstance(opened, ProposalView) and opened.status == "open" and opened.quorum == 2
    with pytest.raises(PolicyRefusal):  # a developer may not vote
        run(engine, "dev", 1, review, opened.id, approve=True, comment="mine")
    run(engine, "chair", 1, review, opened.id, approve=True, comment="yes")
    decided = run(engine, "m2", 2, review, opened.id, approve=True, comment="yes")
    assert decided.status == "approved" and decided.approvals == ["chair", "m2"]
    shown = run(engine, "dev", 2, show_proposal, opened.id)
    assert shown.decision is not None and shown.decision.category == "core"
    assert shown.decision.decided_at == T0 + timedelta(days=2)

    step = run(engine, "chair", 3, deprecate, "aten::mish", reason="unused")
    assert isinstance(step, LifecycleStepResult)
    assert (step.from_state, step.to_state) == ("active", "deprecating")
    assert step.family == ["aten::mish.out", "aten::mish_"]  # its torchgen family moves with it
    assert json.loads(to_json(step))["family"] == ["aten::mish.out", "aten::mish_"]
    assert step.next is not None and step.next.possible_from == T0 + timedelta(days=3 + 14)
    as_json = json.loads(to_json(step))
    assert as_json["from"] == "active" and as_json["to"] == "deprecating"
    same_as_the_api(step)
    same_as_the_api(decided)

    mish = run(engine, "dev", 4, show_op, "aten::mish")
    assert mish.sunset == T0 + timedelta(days=3 + 14 + 180)

    due = run(engine, "bot", 20, tick, within_days=0)
    assert isinstance(due, TickResult)
    assert [i.operator for i in due.due] == ["aten::mish", "aten::mish.out", "aten::mish_"]
    assert due.due[0].days_left == 0 and due.applied == []
    same_as_the_api(due)


def test_log_and_exception_results(engine):
    from datetime import date

    from opgov.reads.database import read_log
    from opgov.services.compat import add_exception, list_exceptions
    from opgov.services.imports import import_snapshot
    from opgov.results.admin import EventView
    from opgov.results.compat import ExceptionAdded

    run(engine, "bot", 0, import_snapshot, str(V1), label="v1", orm=False)
    added = run(engine, "alice", 1, add_exception, "aten::_foreach_*", reason="rewrite", expires=date(2026, 3, 1))
    assert isinstance(added, ExceptionAdded) and added.expires_on == date(2026, 3, 1) and not added.expired
    assert json.loads(to_json(added))["expires_on"] == "2026-03-01"
    assert [e.pattern for e in run(engine, "alice", 100, list_exceptions)] == ["aten::_foreach_*"]
    assert run(engine, "alice", 100, list_exceptions)[0].expired

    events = run(engine, "alice", 1, read_log, limit=0)
    assert all(isinstance(e, EventView) for e in events)
    assert [e.action for e in events] == ["snapshot.import", "exception.add"]
    same_as_the_api(added)
    same_as_the_api(events, list[EventView])
    assert [e.action for e in run(engine, "alice", 1, read_log, action="exception.")] == ["exception.add"]
    newest = events[-1].id
    assert [e.id for e in run(engine, "alice", 1, read_log, before_id=newest)] == [events[0].id]


def test_help_does_not_load_the_result_models():
    import subprocess
    import sys

    code = ("import sys\nfrom opgov.cli.main import run\ntry:\n    run(['--help'])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in ('pydantic', 'opgov.results.ops', 'opgov.results.governance', 'fastapi') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "[]"


def test_tokens_service(engine):
    """Tokens with a session, an actor and a clock: the first bootstraps a maintainer, only the
    hash is stored, and revoked, expired or orphaned tokens no longer authenticate."""
    import hashlib

    from sqlalchemy import select

    from opgov.core.errors import Forbidden, NotFound, PolicyRefusal
    from opgov.db.engine import transaction
    from opgov.db.models import ApiToken
    from opgov.services.governance import add_member, list_members, remove_member
    from opgov.reads.database import authenticate
    from opgov.services.tokens import create_token, list_tokens, revoke_token

    first = run(engine, "alice", 0, create_token, "alice")
    assert [(m.name, m.role) for m in run(engine, "alice", 0, list_members)] == [("alice", "maintainer")]
    run(engine, "alice", 0, add_member, "dave", "developer")
    with pytest.raises(Forbidden):
        run(engine, "dave", 0, create_token, "dave")
    with pytest.raises(NotFound):
        run(engine, "alice", 0, create_token, "nobody")
    short = run(engine, "alice", 0, create_token, "dave", expires_days=1)
    assert short.expires_at == T0 + timedelta(days=1)

    def who(token: str, days: float):
        with transaction(engine) as session:
            return authenticate(session, token, T0 + timedelta(days=days))

    assert who(first.token, 0) == ("alice", first.id)
    assert who(short.token, 0.5) == ("dave", short.id)
    assert who(short.token, 1) is None  # expired
    assert who(first.token[:-1] + "x", 0) is None and who("not-a-token", 0) is None
    with transaction(engine) as session:
        hashes = session.scalars(select(ApiToken.token_hash)).all()
    assert hashlib.sha256(first.token.encode()).hexdigest() in hashes and first.token not in hashes

    assert [t.state for t in run(engine, "alice", 2, list_tokens)] == ["active", "expired"]
    assert [t.id for t in run(engine, "dave", 0, list_tokens, member="dave")] == [short.id]
    with pytest.raises(Forbidden):
        run(engine, "dave", 0, list_tokens)
    revoked = run(engine, "alice", 0.1, revoke_token, first.id)
    assert revoked.state == "revoked" and who(first.token, 0.2) is None
    with pytest.raises(PolicyRefusal):
        run(engine, "alice", 0.2, revoke_token, first.id)
    fresh = run(engine, "alice", 0.3, create_token, "dave")
    run(engine, "alice", 0.3, remove_member, "dave")
    assert who(fresh.token, 0.4) is None  # no longer a member
