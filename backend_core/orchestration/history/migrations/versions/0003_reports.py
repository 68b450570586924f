"""Schema version 3: a `reports` table beside the records — each record's full lowering report (graphs,
reasons, memory), gzip-compressed JSON — so a commit's lowering opens again (`history show --html
--reports`, a window's History view) without lowering it again.

A version-2 store gains the empty table; its records stay as they were (no report: shown without a link).

Revision ID: 0003
Revises: 0002
"""
import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "reports",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("model", sa.String(500), nullable=False),
        sa.Column("config", sa.String(500), nullable=False),
        sa.Column("commit", sa.String(64), nullable=False),
        sa.Column("report_gz", sa.LargeBinary, nullable=False),
        sa.UniqueConstraint("model", "config", "commit", name="uq_reports_model_config_commit"),
    )


def downgrade() -> None:
    op.drop_table("reports")
