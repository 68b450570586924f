"""Reports: JSON (the CI-friendly form of everything the GUI shows) and standalone HTML."""
