"""target tier."""
