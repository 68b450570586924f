"""Profiling checks on real QEMU runs (issue 11), printed side by side, never asserted:

1. profile on/off does not change what runs: the same model without and with --profile (-icount):
   outcome, the runner's printed outputs, error stats, QEMU wall time;
2. determinism: two profiled runs give identical per-op instruction counts;
3. the per-op counts sum to Method::execute within the runner's own overhead;
4. twice the MACs, about twice the instructions: two conv models differing 2x in channels.

    .venv/bin/python bench/profile_runs.py --et-root PATH [--cmsis-nn PATH] [--target cortex-m55]

Without a checkout it prints "skipped: no ExecuTorch checkout (pass --et-root)" and exits 0 (CI has none).
The numbers are instructions executed (QEMU -icount), not cycles."""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

CONV_MODEL = '''
import torch
from torch import nn

C = {c}


class TwoConvs(nn.Module):
    """32 -> C -> 32 channels: doubling C doubles both convs' MACs (a: twice the filters, b: twice the
    depth of each filter), channel counts that fill the MVE's 16 int8 lanes."""

    def __init__(self):
        super().__init__()
        self.a = nn.Conv2d(32, C, 3, padding=1)
        self.b = nn.Conv2d(C, 32, 3, padding=1)

    def forward(self, x):
        return self.b(torch.relu(self.a(x)))


def get_model():
    torch.manual_seed(0)
    return TwoConvs().eval()


def get_example_inputs():
    return (torch.randn(1, 32, 16, 16, generator=torch.Generator().manual_seed(1)).to(memory_format=torch.channels_last),)
'''


def _run(model: str, args, profile: bool, on_line):
    from backend_core.orchestration.jobs import RunOptions
    from target_job import run_model

    opts = RunOptions(target=args.target, cache_root=args.cache_dir, profile=profile, timeout=600)
    return run_model(model, et_root=args.et_root, cmsis_nn=args.cmsis_nn, options=opts, on_line=on_line)


def _outputs(res) -> list:
    return [(o.output, o.index, o.value) for o in res.sim.report.outputs]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--et-root", default=os.environ.get("EXECUTORCH_ROOT"))
    ap.add_argument("--cmsis-nn", default=os.environ.get("CMSIS_NN_PATH"))
    ap.add_argument("--target", default="cortex-m55")
    ap.add_argument("--model", default="layernorm_mlp")
    ap.add_argument("--cache-dir", type=Path)
    ap.add_argument("--channels", default="32,64", help="middle channels of the two conv models (default 32,64)")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args(argv)
    if not args.et_root:
        print("skipped: no ExecuTorch checkout (pass --et-root)")
        return 0

    def on_line(stream: str, line: str) -> None:
        if args.verbose:
            print(f"  {stream}> {line}", flush=True)

    from backend_core.target.profile import profile_table

    print(f"== 1. profile off vs on: {args.model} on {args.target} ==")
    off = _run(args.model, args, False, on_line)
    on = _run(args.model, args, True, on_line)
    print(f"  {'':24} {'profile off':>16} {'profile on':>16}")
    print(f"  {'outcome':24} {off.outcome:>16} {on.outcome:>16}")
    print(f"  {'QEMU command -icount':24} {str('-icount' in off.sim.command):>16} {str('-icount' in on.sim.command):>16}")
    same = _outputs(off) == _outputs(on)
    print(f"  {'printed outputs':24} {len(_outputs(off)):>16} {len(_outputs(on)):>16}  identical: {same}")
    es = [(s.max_absolute_error for s in r.sim.report.error_stats) for r in (off, on)]
    print(f"  {'max abs error':24} {str(list(es[0])):>16} {str(list(es[1])):>16}")
    print(f"  {'QEMU run, s':24} {off.timings['run_s']:16.2f} {on.timings['run_s']:16.2f}  "
          f"ratio {on.timings['run_s'] / max(off.timings['run_s'], 1e-9):.2f}")

    print(f"\n== 2. determinism: a second profiled run of {args.model} ==")
    again = _run(args.model, args, True, on_line)
    a, b = on.profile, again.profile
    if a is None or b is None:
        print(f"  no profile: {on.profile_problem or again.profile_problem}")
        return 1
    counts_a, counts_b = [o.count for o in a.ops], [o.count for o in b.ops]
    print(f"  run 1 total {a.total:,}, run 2 total {b.total:,}; per-op counts identical: {counts_a == counts_b}")
    for o1, o2 in zip(a.ops, b.ops):
        print(f"    {o1.node or o1.op:44} {o1.count:>10,} {o2.count:>10,}")

    print("\n== 3. per-op counts vs the whole inference ==")
    print(f"  Method::execute {a.total:,} = kernels {a.ops_total:,} + dispatch loop and ETDump event recording "
          f"{a.overhead:,} ({(a.overhead or 0) / a.total:.1%}; {len(a.ops)} instructions, "
          f"{(a.overhead or 0) / max(len(a.ops), 1):.0f} per instruction; one event's recording "
          f"~{a.recording_per_event:,}, measured as OPERATOR_CALL minus the kernel wrapper inside it)")
    print(profile_table(a))

    print("\n== 4. twice the MACs ==")
    work = Path(tempfile.mkdtemp(prefix="cmlens-bench-profile-"))
    rows = []
    for c in (int(x) for x in args.channels.split(",")):
        src = work / f"two_convs_{c}.py"
        src.write_text(CONV_MODEL.format(c=c))
        res = _run(str(src), args, True, on_line)
        p = res.profile
        if p is None:
            print(f"  C={c}: no profile ({res.profile_problem}), outcome {res.outcome}")
            continue
        convs = [o for o in p.ops if "conv" in o.op]
        rows.append((c, res.outcome, convs))
        for st in res.sim.report.error_stats:
            print(f"  C={c}: {res.outcome}, max abs error {st.max_absolute_error} (bundle tolerance 0.01)")
        for o in convs:
            print(f"  C={c:<3} {res.outcome:5} {o.node:40} MACs {o.macs:>10,}  {o.count:>10,} instructions  "
                  f"{o.per_mac:.3f} per MAC")
    if len(rows) == 2:
        for (_, _, a1), (_, _, a2) in [(rows[0], rows[1])]:
            for x, y in zip(a1, a2):
                print(f"  {x.node}: MACs x{y.macs / x.macs:.2f}, instructions x{y.count / x.count:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
