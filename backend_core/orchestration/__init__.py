"""orchestration tier."""
