"""Opt-in (CMLENS_TEST_ET_ROOT, CMLENS_TEST_CMSIS_NN): the trained digits_cnn's bundle classifies its
evaluation samples on the target the same way as the lowered program does on the host. One firmware of
the test's own (a main.c looping over K held-out images through the bundle's API) on QEMU M55; every
sample's output must equal the lowered program's host output (the target's way where a host reference
kernel is known to differ) byte for byte, so the predicted digits are the same."""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from tests.export.test_user_project_qemu import CMAKELISTS, CMSIS_NN, ET_ROOT, _build_and_run, _installed_libraries

pytestmark = pytest.mark.skipif(not (ET_ROOT and CMSIS_NN), reason="needs an ExecuTorch checkout and CMSIS-NN: set "
                                "CMLENS_TEST_ET_ROOT and CMLENS_TEST_CMSIS_NN")
K = 16

MAIN_C = """#include <stdio.h>
#include "cmlens_model.h"
#include "samples.h"   /* K, samples[K][CMLENS_MODEL_INPUT_0_NUMEL] */

static float output[CMLENS_MODEL_OUTPUT_0_NUMEL];

int main(void) {
  for (int k = 0; k < K; ++k) {
    int status = cmlens_model_run(samples[k], output);
    if (status != 0) { printf("STATUS %d\\n", status); return 1; }
    const unsigned char* b = (const unsigned char*)output;
    printf("OUT %d ", k);
    for (unsigned i = 0; i < sizeof(output); ++i) printf("%02x", b[i]);
    printf("\\n");
  }
  return 0;
}
"""


def test_digits_bundle_classifies_like_the_lowered_program(tmp_path: Path) -> None:
    import numpy as np

    from backend_core.common.boards.table import board_for
    from backend_core.target.export import BundleSpec, write_bundle
    from backend_core.orchestration.jobs.steps.lower import lower_source
    from backend_core.lowering.lower import LowerOutputs
    from backend_core.target.judge.kernel_refs import has_known_ops, target_faithful_run
    from backend_core.stages.models.digits import get_eval_data
    from backend_core.stages.pipeline.program_files import expected_outputs_from_lowered
    from backend_core.stages.pipeline.stages import PipelineOptions
    from backend_core.target.build.paths import KERNELS_DIR

    res = lower_source("digits_cnn", PipelineOptions(target="cortex-m55"), use_cache=False,
                       outputs=LowerOutputs(edge_program=True, pte=True))
    assert res.status == "done"
    final = res.pipeline.final_program
    samples = [inputs for (inputs, _label), _ in zip(get_eval_data(), range(K))]
    expected = [np.asarray((target_faithful_run(final, s)[0] if has_known_ops(final)
                            else expected_outputs_from_lowered(final, s))[0], dtype=np.float32) for s in samples]
    bundle = write_bundle(res.blobs["model.pte"], BundleSpec("digits_cnn", "cortex-m55", Path(ET_ROOT), None,
                                                             Path(CMSIS_NN), None, "test"), tmp_path / "bundle")
    (inp,) = bundle.facts.inputs
    project = tmp_path / "user_project"
    project.mkdir()
    shutil.copytree(bundle.folder, project / "model")
    rows = []
    for s in samples:
        x = s[0].detach().numpy().astype(np.float32)
        if inp.channels_last:                        # the buffer holds the values in the input's dim order
            x = np.ascontiguousarray(np.transpose(x, inp.dim_order))
        rows.append("{" + ",".join(repr(float(v)) + "f" for v in x.ravel()) + "}")
    (project / "samples.h").write_text(f"#define K {K}\nstatic const float samples[K][{inp.numel}] = {{\n"
                                       + ",\n".join(rows) + "};\n")
    (project / "main.c").write_text(MAIN_C)
    (project / "CMakeLists.txt").write_text(CMAKELISTS.format(kernels=KERNELS_DIR))
    uart = _build_and_run(project, board_for("cortex-m55"), _installed_libraries("cortex-m55"))
    got = {int(k): np.frombuffer(bytes.fromhex(h), dtype=np.float32) for k, h in re.findall(r"OUT (\d+) ([0-9a-f]+)", uart)}
    assert sorted(got) == list(range(K)), uart
    for k in range(K):
        assert got[k].tobytes() == expected[k].ravel().tobytes(), k
    predicted = [int(got[k].argmax()) for k in range(K)]
    assert predicted == [int(e.argmax()) for e in expected]
    assert len(set(predicted)) >= 5                 # real digits, not one degenerate class for every image
