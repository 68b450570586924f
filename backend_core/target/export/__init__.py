"""`cmlens export`: a bundle for the user's own firmware from one lowered program -- the program as a C
array in a named section, a C API over ExecuTorch's runtime with exact static pools, the selective op
list, CMake for the user's project, a report -- and its proof on QEMU (check.py)."""
from backend_core.target.export.bundle import Bundle, BundleSpec, check_destination, is_bundle, write_bundle

__all__ = ["Bundle", "BundleSpec", "check_destination", "is_bundle", "write_bundle"]
