"""The history store's table, as SQLAlchemy Core metadata (the shape the newest migration leaves).

The migrations under `migrations/versions/` are the schema's source of truth (a user reads them to see
what an upgrade does); this metadata mirrors their head so queries are typed. A revision id is the
schema version number ("0002" is version 2): `store.open_store` refuses a store whose version is newer."""
from __future__ import annotations

import sqlalchemy as sa

SCHEMA_VERSION = 4            # the head revision of migrations/versions, as a number

metadata = sa.MetaData()

records = sa.Table(
    "records", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("model", sa.String(500), nullable=False),       # repo-relative path of the model file[:NAME]
    sa.Column("name", sa.String(200), nullable=False),        # the model's short name (report "model")
    sa.Column("config", sa.String(500), nullable=False),      # configuration key (config.config_key)
    sa.Column("commit", sa.String(64), nullable=False),
    sa.Column("dirty", sa.Boolean, nullable=False, default=False),
    sa.Column("commit_date", sa.String(40)),                  # ISO 8601, the committer date
    sa.Column("subject", sa.Text),
    sa.Column("branch", sa.String(200)),
    sa.Column("repo", sa.Text),                               # the repository's root when recorded
    sa.Column("status", sa.String(20), nullable=False),       # ok | failed
    sa.Column("error", sa.JSON),                              # the cause of a failure (step, type, message, stage)
    sa.Column("metrics", sa.JSON, nullable=False),            # flat name -> number (metrics.py)
    sa.Column("facts", sa.JSON),                              # compare.SideFacts dict: gate / bisect "what changed"
    sa.Column("versions", sa.JSON, nullable=False),           # cmlens, torch, torchao, executorch
    sa.Column("machine", sa.Text),
    sa.Column("source", sa.String(40)),                       # lower / evaluate / run / profile / sweep / backfill / add
    sa.Column("recorded_at", sa.String(40), nullable=False),
    sa.Column("lowering_s", sa.Float),
    sa.Column("extra", sa.JSON),                              # revision 0002: target-run checkout commits, notes
    sa.UniqueConstraint("model", "config", "commit", name="uq_records_model_config_commit"),
)
sa.Index("ix_records_model_config_branch", records.c.model, records.c.config, records.c.branch)

COLUMNS = tuple(c.name for c in records.columns if c.name != "id")

reports = sa.Table(                                           # revision 0003: each record's lowering report
    "reports", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("model", sa.String(500), nullable=False),
    sa.Column("config", sa.String(500), nullable=False),
    sa.Column("commit", sa.String(64), nullable=False),
    sa.Column("report_gz", sa.LargeBinary, nullable=False),    # gzip of the report's JSON (with graphs; 0004: packed)
    sa.UniqueConstraint("model", "config", "commit", name="uq_reports_model_config_commit"),
)
