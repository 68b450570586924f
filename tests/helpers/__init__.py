"""Helpers shared by several test packages (import as `tests.helpers.<module>`)."""
