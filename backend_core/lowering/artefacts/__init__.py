"""Read what ExecuTorch's own flow produced (.pte, .bpte, .etrecord, .etdump) into the snapshots the
views, reports and checks use. One reader per format (pte.py, bpte.py, etrecord.py, etdump.py);
`open_artefact` is the entry. Importing this package imports neither torch nor ExecuTorch."""
from backend_core.lowering.artefacts.open import open_artefact
from backend_core.lowering.artefacts.result import ArtefactResult
from backend_core.stages.models.sniff import SUFFIXES, is_artefact_path

__all__ = ["open_artefact", "ArtefactResult", "SUFFIXES", "is_artefact_path"]
