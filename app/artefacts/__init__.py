"""Opening ExecuTorch artefacts (.pte, .bpte, .etrecord, .etdump) in the window: file-dialog filters,
drag and drop, companion files. The reading itself runs in the lowering worker (backend_core.lowering.artefacts)."""
