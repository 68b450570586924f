"""Schema version 1: one row per (model, configuration, commit) with its figures and provenance.

Revision ID: 0001
Revises:
"""
import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "records",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("model", sa.String(500), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("config", sa.String(500), nullable=False),
        sa.Column("commit", sa.String(64), nullable=False),
        sa.Column("dirty", sa.Boolean, nullable=False),
        sa.Column("commit_date", sa.String(40)),
        sa.Column("subject", sa.Text),
        sa.Column("branch", sa.String(200)),
        sa.Column("repo", sa.Text),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("error", sa.JSON),
        sa.Column("metrics", sa.JSON, nullable=False),
        sa.Column("facts", sa.JSON),
        sa.Column("versions", sa.JSON, nullable=False),
        sa.Column("machine", sa.Text),
        sa.Column("source", sa.String(40)),
        sa.Column("recorded_at", sa.String(40), nullable=False),
        sa.Column("lowering_s", sa.Float),
        sa.UniqueConstraint("model", "config", "commit", name="uq_records_model_config_commit"),
    )


def downgrade() -> None:
    op.drop_table("records")
