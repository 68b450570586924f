"""common tier."""
