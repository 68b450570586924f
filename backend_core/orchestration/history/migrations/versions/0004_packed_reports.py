"""Schema version 4: a kept report may be packed (history/packing.py): a stage's node equal to the one
at the same id in the stage before is stored as its position there, equal edges as a mark. It halves
what `--record` encodes and compresses. A cmlens reading schema 3 would take those positions for nodes,
so it is refused a version-4 store (with both version numbers) instead of showing broken graphs.

Upgrade: nothing to rewrite (an unpacked report reads as before). Downgrade: every packed report is
written back unpacked.

Revision ID: 0004
Revises: 0003
"""
import gzip
import json

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    from backend_core.orchestration.history.packing import PACKED, unpack_report

    conn = op.get_bind()
    rows = conn.execute(sa.text("SELECT id, report_gz FROM reports")).fetchall()
    for rid, blob in rows:
        report = json.loads(gzip.decompress(blob))
        if report.get(PACKED):
            data = gzip.compress(json.dumps(unpack_report(report), separators=(",", ":")).encode(), 1)
            conn.execute(sa.text("UPDATE reports SET report_gz = :b WHERE id = :i"), {"b": data, "i": rid})
