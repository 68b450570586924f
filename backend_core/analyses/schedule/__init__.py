"""Patch schedules of a lowered program (issue 47): run the first layers patch by patch, MCUNetV2-style,
so the peak RAM falls, with every scale and zero point the lowering chose, checked bit for bit on the
host against the unscheduled program.

- geometry.py        which ops run per patch (CMSIS-NN convs, pointwise ops); receptive-field boxes
- prefix.py          the program's input, valid split points, the layer-by-layer and patch floors
- rewrite.py         the rewrite: slice_copy per patch, border-only padding (folded into the conv or
                     cortex_m.pad), the prefix per patch, cat; the int8 input option
- measure.py         re-serialise with ExecuTorch's planner settings, total RAM from the .pte's plan, MACs
- search.py          split × grid × planner, Pareto front, the host check, the pick
- schedule_file.py   the schedule JSON (checked against the program's key)
- report.py          the text `cmlens memory --schedule` prints
"""
