"""Alembic's environment for the history store: always handed an open connection by
`backend_core.orchestration.history.store` (config.attributes["connection"]); offline SQL generation is not used."""
from alembic import context

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=None, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
