"""A whole committee and lifecycle story on a simulation database, through every refusal and
transition of the governance policy."""

from __future__ import annotations

import threading
from datetime import datetime, timedelta, timezone

import pytest
from sqlalchemy import func, select

from conftest import REPO, SAMPLE, bad, refused

V1, V2, TAGS = SAMPLE / "native_functions.v1.yaml", SAMPLE / "native_functions.v2.yaml", SAMPLE / "tags.yaml"
REVIEW_2023 = REPO / "data" / "decisions" / "core-aten-review-2023.yaml"
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)


def at(days: float) -> str:
    return (T0 + timedelta(days=days)).isoformat()


# The committee story runs as named steps on one database, in this order: a failing step does not
# hide the steps after it (though they may fail for its reason). Run the steps together.


@pytest.fixture(scope="module")
def committee_db(tmp_path_factory) -> dict:
    return {"url": f"sqlite:///{tmp_path_factory.mktemp('committee') / 'opgov.db'}", "fresh": True}


@pytest.fixture
def committee(make_cli, committee_db):
    """A CLI on the story's simulation database (migrated by the first step that asks)."""
    return make_cli(committee_db["url"], upgrade=committee_db.pop("fresh", False), simulation=True)


def test_committee_1_members(committee):
    """Single-user mode until the first member, who must be a maintainer; roles after that."""
    cli = committee
    cli.ok("import", V1, "--tags-yaml", TAGS, "--label", "v1", now=at(0))
    # single-user mode: anyone may do anything until the first member; that member is a maintainer
    assert "single-user mode" in cli.ok("members", "list").out
    refused(cli, "members", "add", "dave", "--role", "developer", now=at(0), words=["first member"])
    cli.ok("members", "add", "alice", "--role", "maintainer", actor="alice", now=at(0))
    refused(cli, "members", "add", "mallory", "--role", "maintainer", actor="mallory", now=at(0),
            words=["mallory (not a member) may not"])
    for name, role in (("bob", "maintainer"), ("carol", "maintainer"), ("dave", "developer"),
                       ("erin", "developer"), ("syncbot", "bot")):
        cli.ok("members", "add", name, "--role", role, actor="alice", now=at(0))
    bad(cli, "members", "add", "zed", "--role", "emperor", actor="alice", now=at(0), words=["unknown role"])


def test_committee_2_imports_by_role_and_historical_decisions(committee):
    """Bots import, developers do not; the 2023 review is loaded as dated, imported decisions."""
    cli = committee
    # bots import; developers do not
    refused(cli, "import", V2, "--label", "v2", actor="dave", now=at(1), words=["dave (developer) may not"])
    cli.ok("import", V2, "--tags-yaml", TAGS, "--label", "v2", actor="syncbot", now=at(1))
    assert cli.ok("ops", "show", "fused_rms_norm", "--json").json()["needs_review"] is True

    # historical decisions: the 2023 review, dated and marked as imported
    loaded = cli.ok("decisions", "load", REVIEW_2023, "--json", actor="alice", now=at(1)).json()
    assert loaded["recorded"] == loaded["decisions"] > 80
    again = cli.ok("decisions", "load", REVIEW_2023, "--json", actor="alice", now=at(1)).json()
    assert again["recorded"] == 0
    # the review decomposed expm1, but the (newer) snapshots tag it core: on record, not applied
    assert "aten::expm1" in loaded["superseded"]
    expm1 = cli.ok("ops", "show", "aten::expm1", "--json").json()
    assert expm1["category"] == "core" and expm1["category_source"] == "yaml-tag"
    assert expm1["decisions"][0]["category"] == "decomposable" and "superseded" in expm1["decisions"][0]["note"]
    split = cli.ok("ops", "show", "aten::split.Tensor", "--json").json()
    assert split["category"] == "decomposable"
    assert split["decisions"][0]["imported"] is True and split["decisions"][0]["decided_at"].startswith("2023-08-24")
    assert split["decisions"][0]["targets"] == ["aten::split_with_sizes"]


def test_committee_3_proposals_and_their_refusals(committee):
    """A proposal opens; every kind of bad or refused proposal is turned away."""
    cli = committee
    # proposals and their refusals
    p1 = cli.ok("propose-core", "aten::fused_rms_norm", "--rationale", "RMSNorm is everywhere in LLMs", "--json",
                actor="dave", now=at(2)).json()
    assert p1["id"] == 1 and p1["status"] == "open"
    refused(cli, "propose-core", "fused_rms_norm", "--rationale", "again", actor="erin", now=at(2),
            words=["proposal 1", "already open"])
    refused(cli, "propose-core", "aten::add.out", "--rationale", "x", actor="dave", now=at(2), words=["out variant"])
    refused(cli, "propose-core", "aten::add_.Tensor", "--rationale", "x", actor="dave", now=at(2), words=["inplace"])
    # the 2023 review decided ceil core (a category the yaml tag placed could be confirmed instead)
    refused(cli, "propose-core", "aten::ceil", "--rationale", "x", actor="dave", now=at(2),
            words=["already core (decided)"])
    bad(cli, "propose-core", "aten::nonexistent", "--rationale", "x", actor="dave", now=at(2),
        words=["unknown operator"])
    bad(cli, "propose-core", "aten::glu", "--rationale", "  ", actor="dave", now=at(2), words=["rationale"])
    refused(cli, "propose-decompose", "aten::hardswish", "--into", "aten::hardswish", "--rationale", "x",
            actor="dave", now=at(2), words=["itself"])
    refused(cli, "propose-decompose", "aten::glu", "--into", "aten::add.Tensor", "--rationale", "x", actor="dave",
            now=at(2), words=["already decomposable"])
    refused(cli, "propose-decompose", "aten::hardswish", "--into", "aten::arange", "--rationale", "x",
            actor="dave", now=at(2), words=["aten::hardswish → aten::arange"])
    refused(cli, "propose-core", "aten::glu", "--rationale", "x", actor="mallory", now=at(2), words=["may not"])


def test_committee_4_votes_reach_quorum(committee):
    """Maintainers vote, never on their own proposal; a later vote replaces an earlier one; quorum decides."""
    cli = committee
    # votes: maintainers only, never their own, a later vote replaces an earlier one, quorum decides
    refused(cli, "review", "1", "--approve", "--comment", "yes", actor="erin", now=at(3), words=["may not"])
    cli.ok("review", "1", "--approve", "--comment", "common in LLMs", actor="alice", now=at(3))
    cli.ok("review", "1", "--reject", "--comment", "on second thought, decompose it", actor="alice", now=at(3))
    cli.ok("review", "1", "--approve", "--comment", "agreed", actor="bob", now=at(3))
    state = cli.ok("proposals", "show", "1", "--json").json()
    assert state["status"] == "open" and state["approvals"] == ["bob"] and state["rejections"] == ["alice"]
    assert len(state["votes"]) == 2
    decided = cli.ok("review", "1", "--approve", "--comment", "keep it whole", "--json", actor="carol", now=at(4)).json()
    assert decided["status"] == "approved"
    refused(cli, "review", "1", "--approve", "--comment", "late", actor="alice", now=at(5), words=["approved"])
    shown = cli.ok("ops", "show", "aten::fused_rms_norm", "--json").json()
    assert shown["category"] == "core" and shown["needs_review"] is False
    decision = shown["decisions"][-1]
    assert decision["rationale"] == "RMSNorm is everywhere in LLMs"
    assert sorted(decision["decided_by"]) == ["bob", "carol"] and decision["imported"] is False
    assert decision["decided_at"].startswith(at(4)[:10])
    assert "RMSNorm is everywhere" in cli.ok("ops", "show", "aten::fused_rms_norm").out


def test_committee_5_decomposition_into_core_is_accepted(committee):
    """A decomposition into (transitively) core operators is accepted and recorded as a rule."""
    cli = committee
    # the proposer may not review; a decomposition into (transitively) core operators is accepted
    # split.Tensor is not core, but decomposes into core (split_with_sizes): accepted
    p2 = cli.ok("propose-decompose", "aten::hardswish", "--into",
                "aten::clamp,aten::add.Tensor,aten::mul.Tensor,aten::div.Tensor,aten::split.Tensor",
                "--rationale", "exact rewrite", "--json", actor="alice", now=at(5)).json()
    refused(cli, "review", str(p2["id"]), "--approve", "--comment", "mine", actor="alice", now=at(5),
            words=["may not review"])
    cli.ok("review", str(p2["id"]), "--approve", "--comment", "ok", actor="bob", now=at(5))
    cli.ok("review", str(p2["id"]), "--approve", "--comment", "ok", actor="carol", now=at(5))
    assert cli.ok("ops", "show", "aten::hardswish", "--json").json()["category"] == "decomposable"
    rules = {r["operator"]: r for r in cli.ok("decomps", "list", "--json").json()}
    assert rules["aten::hardswish"]["source"] == "decision" and "aten::split.Tensor" in rules["aten::hardswish"]["into"]
    # taking a decomposition target out of core is refused with the path
    refused(cli, "propose-custom", "aten::sigmoid", "--rationale", "x", actor="alice", now=at(5),
            words=["aten::glu → aten::sigmoid"])


def test_committee_6_quorum_rejections_close_a_proposal(committee):
    """Quorum rejections close a proposal and change nothing."""
    cli = committee
    # rejection: quorum rejections close a proposal
    p3 = cli.ok("propose-custom", "aten::gelu", "--rationale", "needs special handling", "--json",
                actor="erin", now=at(6)).json()
    cli.ok("review", str(p3["id"]), "--reject", "--comment", "no", actor="bob", now=at(6))
    closed = cli.ok("review", str(p3["id"]), "--reject", "--comment", "no", "--json", actor="carol", now=at(6)).json()
    assert closed["status"] == "rejected"
    assert cli.ok("ops", "show", "aten::gelu", "--json").json()["category"] != "custom"


def test_committee_7_withdrawal(committee):
    """A proposer withdraws their own proposal; a maintainer any."""
    cli = committee
    # withdrawal: one's own, or any as a maintainer
    p4 = cli.ok("propose-core", "aten::glu", "--rationale", "changed my mind", "--json", actor="dave",
                now=at(6)).json()
    refused(cli, "withdraw", str(p4["id"]), actor="erin", now=at(6), words=["only their own"])
    cli.ok("withdraw", str(p4["id"]), actor="dave", now=at(6))
    refused(cli, "withdraw", str(p4["id"]), actor="dave", now=at(6), words=["withdrawn"])
    bad(cli, "withdraw", "999", actor="dave", now=at(6), words=["unknown proposal 999"])
    assert [p["id"] for p in cli.ok("proposals", "--open", "--json").json()] == []
    assert len(cli.ok("proposals", "--json").json()) == 4


def test_committee_8_settings_are_logged_and_for_maintainers(committee):
    """Only maintainers change settings, and each change is logged."""
    cli = committee
    # settings are logged; only maintainers change them
    refused(cli, "config", "set", "quorum", "3", actor="dave", now=at(6))
    cli.ok("config", "set", "quorum", "3", actor="alice", now=at(6))
    assert any(e["action"] == "config.set" for e in cli.ok("log", "--json").json())
    cli.ok("config", "set", "quorum", "2", actor="alice", now=at(6))


def test_lifecycle_story(cli):
    cli.ok("import", V1, "--label", "v1", now=at(0))
    cli.ok("members", "add", "alice", "--role", "maintainer", actor="alice", now=at(0))
    cli.ok("members", "add", "syncbot", "--role", "bot", actor="alice", now=at(0))
    cli.ok("members", "add", "dave", "--role", "developer", actor="alice", now=at(0))
    cli.ok("decisions", "load", REVIEW_2023, actor="alice", now=at(0))  # aten::roll is core by decision

    refused(cli, "deprecate", "aten::roll", "--reason", "superseded", actor="alice", now=at(1),
            words=["core", "--replacement"])
    refused(cli, "deprecate", "aten::glu", "--reason", "old", actor="dave", now=at(1), words=["may not"])
    refused(cli, "mark-deprecated", "aten::glu", actor="alice", now=at(1), words=["it is active"])
    cli.ok("deprecate", "aten::roll", "--reason", "superseded", "--replacement", "aten::permute", actor="alice",
           now=at(1))
    refused(cli, "deprecate", "aten::roll", "--reason", "again", "--replacement", "aten::permute", actor="alice",
            now=at(2), words=["already deprecating"])
    early = refused(cli, "mark-deprecated", "aten::roll", actor="alice", now=at(14),
                    words=[at(15)[:10], "(1 day left)"])
    assert "UTC" in early.err
    refused(cli, "delete", "aten::roll", actor="alice", now=at(30), words=["next step is deprecated"])

    preview = cli.ok("tick", "--within", "30", "--json", now=at(10)).json()
    # roll.out, which only roll's autogen: declares, moves with it (one family, one timer)
    assert preview["due"] == [] and [i["operator"] for i in preview["within"]] == ["aten::roll", "aten::roll.out"]
    cli.ok("mark-deprecated", "aten::roll", actor="alice", now=at(15))
    refused(cli, "delete", "aten::roll", actor="alice", now=at(15 + 179), words=[at(15 + 180)[:10]])
    refused(cli, "tick", "--apply", actor="dave", now=at(200), words=["may not"])
    due = cli.ok("tick", "--apply", "--json", actor="syncbot", now=at(15 + 180)).json()
    assert [i["operator"] for i in due["applied"]] == ["aten::roll", "aten::roll.out"]
    assert cli.ok("tick", "--apply", "--json", actor="syncbot", now=at(200)).json()["applied"] == []
    shown = cli.ok("ops", "show", "aten::roll", "--json").json()
    assert shown["lifecycle"] == "deleted"
    assert [(s["from"], s["to"], s["actor"]) for s in shown["lifecycle_steps"]] == [
        ("active", "deprecating", "alice"), ("deprecating", "deprecated", "alice"), ("deprecated", "deleted", "syncbot")]
    refused(cli, "undeprecate", "aten::roll", "--reason", "oops", actor="alice", now=at(201), words=["deleted"])
    refused(cli, "propose-core", "aten::roll", "--rationale", "x", actor="alice", now=at(201), words=["deleted"])

    cli.ok("deprecate", "aten::glu", "--reason", "rarely used", actor="alice", now=at(201))
    cli.ok("undeprecate", "aten::glu", "--reason", "users objected", actor="alice", now=at(202))
    assert cli.ok("ops", "show", "aten::glu", "--json").json()["lifecycle"] == "active"
    bad(cli, "undeprecate", "aten::glu", "--reason", "", actor="alice", now=at(203))

    # the two periods are settings
    cli.ok("config", "set", "deprecating_days", "30", actor="alice", now=at(203))
    cli.ok("deprecate", "aten::glu", "--reason", "rarely used", actor="alice", now=at(203))
    refused(cli, "mark-deprecated", "aten::glu", actor="alice", now=at(203 + 20), words=["10 days left"])

    log = cli.ok("log", "aten::roll", "--json").json()
    assert [e["action"] for e in log][-3:] == ["lifecycle.deprecating", "lifecycle.deprecated", "lifecycle.deleted"]


def test_claimed_time_only_on_simulation_database(make_cli, sqlite_url):
    cli = make_cli(sqlite_url)  # a real database
    cli.ok("import", V1, "--label", "v1")
    refused(cli, "deprecate", "aten::glu", "--reason", "x", now=at(0), words=["simulation"])
    cli.ok("ops", "list", now=at(0))  # reading with a claimed time is harmless
    cli.ok("deprecate", "aten::glu", "--reason", "x")


def _concurrent(fns):
    barrier = threading.Barrier(len(fns))
    errors = []

    def run(fn):
        barrier.wait()
        try:
            fn()
        except Exception as err:  # noqa: BLE001
            errors.append(err)

    threads = [threading.Thread(target=run, args=(fn,)) for fn in fns]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


def test_concurrent_votes_and_ticks(make_cli, any_db_url):
    """Maintainers voting, or bots ticking, at the same moment never lose a vote or apply a
    transition twice."""
    from opgov.core.clock import FixedClock
    from opgov.db.engine import make_engine, resolve_url, transaction
    from opgov.db.models import Decision, LifecycleStep, Vote
    from opgov.reads.common import Ctx
    from opgov.services.governance import review
    from opgov.services.lifecycle import tick

    cli = make_cli(any_db_url, simulation=True)
    cli.ok("import", V1, "--label", "v1", now=at(0))
    voters = ["m1", "m2", "m3", "m4"]
    cli.ok("config", "set", "quorum", str(len(voters)), now=at(0))  # decided only if no vote is lost
    for name in ["chair"] + voters + ["bot1", "bot2"]:
        cli.ok("members", "add", name, "--role", "bot" if name.startswith("bot") else "maintainer", actor="chair",
               now=at(0))
    proposals = [cli.ok("propose-core", op, "--rationale", "r", "--json", actor="chair", now=at(0)).json()["id"]
                 for op in ("aten::glu", "aten::mish", "aten::hardswish")]
    for op in ("aten::clamp_min", "aten::baddbmm", "aten::glu"):
        cli.ok("deprecate", op, "--reason", "r", actor="chair", now=at(0))

    engine = make_engine(resolve_url(any_db_url), create=True)
    try:
        def vote(voter, pid):
            def go():
                with transaction(engine) as session:
                    review(Ctx(session, voter, FixedClock(T0 + timedelta(days=1))), pid, approve=True, comment="yes")
            return go

        errors = _concurrent([vote(v, pid) for pid in proposals for v in voters])
        assert errors == []

        def ticker(bot):
            def go():
                with transaction(engine) as session:
                    tick(Ctx(session, bot, FixedClock(T0 + timedelta(days=20))), apply=True)
            return go

        assert _concurrent([ticker("bot1"), ticker("bot2"), ticker("bot1"), ticker("bot2")]) == []
        with transaction(engine) as session:
            assert session.scalar(select(func.count()).select_from(Vote)) == len(proposals) * len(voters)
            decisions = session.scalars(select(Decision.proposal_id)).all()
            assert sorted(decisions) == sorted(proposals)  # each decided exactly once
            from opgov.db.models import Operator

            steps = session.execute(select(Operator.qualname).join(LifecycleStep, LifecycleStep.operator_id == Operator.id)
                                    .where(LifecycleStep.to_state == "deprecated")).scalars().all()
            # each operator moved once, with its torchgen family (in-place, out=) moving alongside
            assert len(steps) == len(set(steps))
            assert {"aten::clamp_min", "aten::baddbmm", "aten::glu"} <= set(steps)
            assert {"aten::glu.out", "aten::baddbmm.out"} <= set(steps)
    finally:
        engine.dispose()
