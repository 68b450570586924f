"""`python -m app.cli ...` (what the GUI's child processes run): the same as `cmlens ...`."""
import sys

from app.cli import main

sys.exit(main())
