"""Pre-flight tests lower with the real ExecuTorch pipeline into a private cache."""
from __future__ import annotations




