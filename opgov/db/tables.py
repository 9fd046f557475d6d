"""The database schema as SQLAlchemy Core tables.

This is the one definition of opgov's schema. :mod:`opgov.db.models` maps ORM classes onto these
tables for the services that work with objects; the hot paths (``opgov import``,
``opgov sync-yaml --check``) use the tables directly and never import ``sqlalchemy.orm``, which
costs about as much time as reading native_functions.yaml. Alembic migrations
(``migrations/versions``) are the only way the schema is created or changed;
``tests/db/test_migrations.py`` checks that they produce exactly these tables.
"""

from __future__ import annotations

from datetime import datetime, timezone

from sqlalchemy import (JSON, Boolean, Column, Date, DateTime, ForeignKey, Index, Integer, LargeBinary, MetaData,
                        String, Table, Text, TypeDecorator, UniqueConstraint)


class UTCDateTime(TypeDecorator):
    """Timezone-aware UTC in, timezone-aware UTC out, on SQLite (naive storage) and PostgreSQL."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("opgov stores timezone-aware UTC datetimes only")
        value = value.astimezone(timezone.utc)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=timezone.utc)
        return value.astimezone(timezone.utc)


metadata = MetaData()


def _id() -> Column:
    return Column("id", Integer, primary_key=True)


# --- registry: snapshots, operators, schema history, the event log (revision 0001) -------------

snapshots = Table(
    "snapshots", metadata, _id(),
    Column("label", String(200), nullable=False, unique=True),
    Column("source", Text, nullable=False),
    Column("content_hash", String(64), nullable=False),
    Column("imported_at", UTCDateTime, nullable=False),
    Column("actor", String(200), nullable=False),
    Column("operator_count", Integer, nullable=False),
    # counts per category and lifecycle right after the import, for trends
    Column("stats", JSON, nullable=False, default=dict),
    # its place in history, 1 = the oldest (revision 0009): imports append, and a release stored
    # with `import --historical` takes the place of the oldest newer release, which moves up one
    Column("position", Integer, nullable=False),
    Index("ix_snapshots_position", "position"),
)

operators = Table(
    "operators", metadata, _id(),
    Column("qualname", String(300), nullable=False, unique=True),  # aten::add.Tensor
    Column("namespace", String(100), nullable=False),
    Column("name", String(200), nullable=False),
    Column("overload", String(200), nullable=False),  # "" = default overload
    Column("schema", Text),  # current func: text; NULL for autogen-declared operators
    Column("kind", String(20), nullable=False),  # functional | inplace | out | mutable | scratch
    Column("tags", JSON, nullable=False, default=list),
    Column("autogen_of", String(300)),
    Column("composite_implicit", Boolean, nullable=False, default=False),
    Column("present", Boolean, nullable=False, default=True),
    Column("first_snapshot_id", Integer, ForeignKey("snapshots.id"), nullable=False),
    Column("last_snapshot_id", Integer, ForeignKey("snapshots.id"), nullable=False),
    Column("category", String(20), nullable=False),  # core | decomposable | custom
    Column("category_source", String(20), nullable=False),  # yaml-tag | heuristic | decision
    Column("needs_review", Boolean, nullable=False, default=False),
    Column("lifecycle", String(20), nullable=False, default="active"),  # active|deprecating|deprecated|deleted
    Column("lifecycle_since", UTCDateTime),
    Column("replacement", String(300)),
    Column("version", Integer, nullable=False, default=1),
    # revision 0011: the operator its entry's structured_delegate: names; why it waits for review
    Column("delegate", String(300)),
    Column("review_reason", Text),
    UniqueConstraint("namespace", "name", "overload", name="uq_operators_identity"),
)

# a row each time an operator's schema text changes (and one when it first appears)
schema_versions = Table(
    "schema_versions", metadata, _id(),
    Column("operator_id", Integer, ForeignKey("operators.id"), nullable=False, index=True),
    Column("snapshot_id", Integer, ForeignKey("snapshots.id"), nullable=False),
    Column("schema", Text),
    UniqueConstraint("operator_id", "snapshot_id", name="uq_schema_versions_op_snap"),
)

# what each snapshot holds, stored once per run (revision 0009): an operator's entry with the same
# schema and tags in the consecutive snapshots at positions first_pos..last_pos (last_pos NULL: up
# to the latest snapshot). An import writes rows only for entries that appeared, changed or left.
entry_runs = Table(
    "entry_runs", metadata, _id(),
    Column("operator_id", Integer, ForeignKey("operators.id"), nullable=False, index=True),
    Column("schema", Text),
    Column("tags", JSON, nullable=False, default=list),
    Column("first_pos", Integer, nullable=False),
    Column("last_pos", Integer),
    Index("ix_entry_runs_last_pos", "last_pos"),
)

# where each entry stands in a snapshot's file: the operator ids in file order and their lines,
# packed (opgov.db.entries.pack_lines): a few KB a snapshot, since lines move with every edit
snapshot_lines = Table(
    "snapshot_lines", metadata,
    Column("snapshot_id", Integer, ForeignKey("snapshots.id"), primary_key=True),
    Column("lines", LargeBinary, nullable=False),
)

# the append-only event log: opgov inserts rows and never updates or deletes them (the migrations
# also install triggers that refuse UPDATE, DELETE, REPLACE and TRUNCATE). Each event carries the
# hash of the previous one and its own (revision 0006; opgov.core.eventlog): `opgov log verify`.
events = Table(
    "events", metadata, _id(),
    Column("at", UTCDateTime, nullable=False),
    Column("actor", String(200), nullable=False),
    Column("action", String(60), nullable=False),
    Column("subject", String(300), nullable=False),
    Column("before", JSON),
    Column("after", JSON),
    Column("reason", Text),
    Column("prev_hash", String(64)),
    Column("hash", String(64)),
    # the API token a request of `opgov serve` was made with (revision 0008); null otherwise
    Column("token_id", Integer),
    Index("ix_events_subject", "subject"),
    Index("ix_events_at", "at"),
)

# --- governance: members, settings, proposals, votes, decisions, lifecycle (revision 0002) -----

members = Table(
    "members", metadata, _id(),
    Column("name", String(200), nullable=False, unique=True),
    Column("role", String(20), nullable=False),  # maintainer | developer | bot
    Column("added_at", UTCDateTime, nullable=False),
    Column("added_by", String(200), nullable=False),
)

settings = Table(
    "settings", metadata,
    Column("key", String(100), primary_key=True),
    Column("value", Text, nullable=False),
)

proposals = Table(
    "proposals", metadata, _id(),
    Column("operator_id", Integer, ForeignKey("operators.id"), nullable=False, index=True),
    Column("kind", String(20), nullable=False),  # core | decompose | custom
    Column("targets", JSON, nullable=False, default=list),
    Column("rationale", Text, nullable=False),
    Column("proposer", String(200), nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("status", String(20), nullable=False, default="open"),  # open | approved | rejected | withdrawn
    Column("closed_at", UTCDateTime),
    Column("version", Integer, nullable=False, default=1),
)

votes = Table(
    "votes", metadata, _id(),
    Column("proposal_id", Integer, ForeignKey("proposals.id"), nullable=False),
    Column("voter", String(200), nullable=False),
    Column("approve", Boolean, nullable=False),
    Column("comment", Text, nullable=False),
    Column("at", UTCDateTime, nullable=False),
    UniqueConstraint("proposal_id", "voter", name="uq_votes_proposal_voter"),
)

decisions = Table(
    "decisions", metadata, _id(),
    Column("operator_id", Integer, ForeignKey("operators.id"), nullable=False, index=True),
    Column("proposal_id", Integer, ForeignKey("proposals.id")),
    Column("category", String(20), nullable=False),
    Column("targets", JSON, nullable=False, default=list),
    Column("rationale", Text, nullable=False),
    Column("decided_at", UTCDateTime, nullable=False),
    Column("decided_by", JSON, nullable=False, default=list),
    Column("votes", JSON, nullable=False, default=list),
    Column("imported", Boolean, nullable=False, default=False),
    Column("source", Text),
    # set when the decision is on record but did not change the category (revision 0005)
    Column("note", Text),
)

lifecycle_steps = Table(
    "lifecycle_steps", metadata, _id(),
    Column("operator_id", Integer, ForeignKey("operators.id"), nullable=False, index=True),
    Column("from_state", String(20), nullable=False),
    Column("to_state", String(20), nullable=False),
    Column("at", UTCDateTime, nullable=False),
    Column("actor", String(200), nullable=False),
    Column("reason", Text),
    Column("replacement", String(300)),
)

# --- compatibility: findings per import, BC exceptions (revision 0003) -------------------------

findings = Table(
    "findings", metadata, _id(),
    Column("snapshot_id", Integer, ForeignKey("snapshots.id"), nullable=False, index=True),
    Column("base_snapshot_id", Integer, ForeignKey("snapshots.id")),
    Column("operator", String(300), nullable=False, index=True),
    Column("kind", String(10), nullable=False),  # bc | fc | new | policy (a governance tag edited)
    Column("rule", String(80), nullable=False),
    Column("severity", String(20), nullable=False),
    Column("message", Text, nullable=False),
    Column("old_schema", Text),
    Column("new_schema", Text),
    Column("line", Integer),
)

bc_exceptions = Table(
    "bc_exceptions", metadata, _id(),
    Column("pattern", String(300), nullable=False),
    Column("reason", Text, nullable=False),
    Column("created_by", String(200), nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("expires_on", Date, nullable=False),
    Column("removed_at", UTCDateTime),
    Column("removed_by", String(200)),
)

# --- decompositions (revision 0004) ------------------------------------------------------------

# operator → the operators its decomposition produces, and where the rule came from
decomp_rules = Table(
    "decomp_rules", metadata, _id(),
    Column("operator", String(300), nullable=False, unique=True),
    Column("targets", JSON, nullable=False, default=list),
    Column("source", String(20), nullable=False),  # decision | file | torch
    Column("source_detail", Text),
    Column("created_at", UTCDateTime, nullable=False),
    Column("created_by", String(200), nullable=False),
)

# --- runtimes (revision 0007) ------------------------------------------------------------------

# an engine at one version and the operator entries it implements (ExecuTorch: out= variants)
runtimes = Table(
    "runtimes", metadata, _id(),
    Column("name", String(100), nullable=False),
    Column("version", String(100), nullable=False),
    Column("released", Date),
    Column("kernels", JSON, nullable=False, default=list),  # canonical operator names, file order
    Column("sources", JSON, nullable=False, default=list),  # [{path, format, entries, sha256}]
    Column("added_at", UTCDateTime, nullable=False),
    Column("added_by", String(200), nullable=False),
    # revision 0012: the operators it serves outside its kernel registries (ExecuTorch's prim ops:
    # aten::_local_scalar_dense, aten::sym_size.int …), and the torch release its kernels follow
    Column("served", JSON, nullable=True),
    Column("torch_release", String(100), nullable=True),
    # revision 0013: what each kernel accepts (dtypes per argument, rank and dtype checks), by kernel entry
    Column("kernel_facts", JSON, nullable=True),
    UniqueConstraint("name", "version", name="uq_runtimes_name_version"),
)

# --- operator versions and upgraders (revision 0007) -------------------------------------------

# a bump of the operator version (kProducedFileFormatVersion in caffe2/versions.h): when and why
operator_version_bumps = Table(
    "operator_version_bumps", metadata, _id(),
    Column("version", Integer, nullable=False, unique=True),
    Column("bumped_on", Date, nullable=False),
    Column("reason", Text, nullable=False),
    Column("recorded_at", UTCDateTime, nullable=False),
    Column("recorded_by", String(200), nullable=False),
)

# an upgrader: the old semantics of an operator for programs at versions [start, end], brought
# in by the bump to end + 1 (version_map.cpp: {bumped_at_version, upgrader_name, old_schema})
upgraders = Table(
    "upgraders", metadata, _id(),
    Column("name", String(300), nullable=False, unique=True),
    Column("operator", String(300), nullable=False, index=True),
    Column("start_version", Integer, nullable=False),
    Column("end_version", Integer, nullable=False),
    Column("old_schema", Text, nullable=False),
    Column("added_at", UTCDateTime, nullable=False),
    Column("added_by", String(200), nullable=False),
    Column("replaced_by", String(300)),
    Column("replaced_at", UTCDateTime),
)


# --- the service: API tokens (revision 0008) ----------------------------------------------------

# a member's bearer tokens for `opgov serve`; only the sha256 of a token is stored
api_tokens = Table(
    "api_tokens", metadata, _id(),
    Column("member", String(200), nullable=False, index=True),
    # the member record the token was made for (revision 0010): a name removed and added again is
    # another record, so an old token does not come back with it
    Column("member_id", Integer, index=True),
    Column("token_hash", String(64), nullable=False, unique=True),
    Column("created_at", UTCDateTime, nullable=False),
    Column("created_by", String(200), nullable=False),
    Column("expires_at", UTCDateTime),
    Column("revoked_at", UTCDateTime),
    Column("revoked_by", String(200)),
)
