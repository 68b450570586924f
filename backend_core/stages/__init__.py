"""stages tier."""
