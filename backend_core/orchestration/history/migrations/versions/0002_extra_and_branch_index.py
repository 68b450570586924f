"""Schema version 2: an `extra` JSON column (the ExecuTorch checkout's and CMSIS-NN's commits of a target
run, notes) and an index for "the last record on a branch" (`cmlens gate --history`).

A version-1 store gains the column (empty for its old rows) and the index; nothing else changes.

Revision ID: 0002
Revises: 0001
"""
import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("records", sa.Column("extra", sa.JSON))
    op.create_index("ix_records_model_config_branch", "records", ["model", "config", "branch"])


def downgrade() -> None:
    op.drop_index("ix_records_model_config_branch", table_name="records")
    with op.batch_alter_table("records") as batch:
        batch.drop_column("extra")
