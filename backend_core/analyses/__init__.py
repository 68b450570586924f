"""analyses tier."""
