"""Alembic migrations of the history store, run by `store.open_store` (never by hand). Readable on
purpose: each file under versions/ says what an upgrade changes."""
