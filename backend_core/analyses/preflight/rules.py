"""The pre-flight's rules as data: for each rule, the runtime check it models (in the runtime's own
terms), and the real failure it rests on.

A rule may say "will fail" (and so stop `cmlens run`) only when it has a confirming case: a small model
in tests/preflight/models/ whose real run on QEMU failed as the rule predicts, with that run's UART
recorded in tests/fixtures/uart/, and a near-miss case that looks alike and must not fire (tests check
both). Every other finding is "may fail": printed, and the run goes on. `settle()` enforces that on
every finding a rule module makes, so a new rule cannot stop a run before it has its case."""
from __future__ import annotations

from dataclasses import dataclass, replace

from backend_core.common.finding import MAY_FAIL, WILL_FAIL, Finding

UART = "tests/fixtures/uart/"
MODELS = "tests/preflight/models/"


@dataclass(frozen=True)
class Rule:
    id: str
    check: str                 # the runtime check the rule evaluates, as the runtime does it
    confirmed_by: str = ""     # recorded UART of the confirming case's real failure ("" = none yet)
    case: str = ""             # the confirming model (a model source: file.py[:entry])
    shows: str = ""            # the text of that UART that is the failure
    near_miss: str = ""        # a model like it that must not fire, and runs
    near_miss_uart: str = ""   # the near miss's recorded run
    note: str = ""             # why it is "may fail", when it has no case

    @property
    def confirmed(self) -> bool:
        return bool(self.confirmed_by)


_SAME_DIM_ORDER = ("tensors_have_same_dim_order(...) of the portable kernel, on the dim orders the program "
                   "stores: all contiguous or all channels-last (dim_order_util.h; a literal dim-order test, "
                   "so a size-1 dimension does not make two orders equal)")
_REGISTRY = ("Method::init resolves every operator of the program in the runner's kernel registry "
             "(\"Missing operator\", OperatorMissing 0x14) before anything runs")

RULES: dict[str, Rule] = {r.id: r for r in (
    Rule("dim-order-mismatch", _SAME_DIM_ORDER,
         UART + "preflight_softmax_dim_order_mps3-an547.txt", MODELS + "gate_cat_softmax.py", "op_softmax.cpp:40",
         MODELS + "channel_mean.py", UART + "preflight_channel_mean_pass_mps3-an547.txt"),
    Rule("layout-ignored",
         "op_cat.cpp copies each input's buffer by the logical sizes (outer/inner from the shape, memcpy): "
         "channels-last inputs concatenated along a dim other than 0 come out scrambled (no error)",
         UART + "preflight_cat_channels_last_mps3-an547.txt", MODELS + "cat_channels_last.py", "Test_result: FAIL",
         MODELS + "cat_channels_last.py:fixed", UART + "preflight_cat_contiguous_pass_mps3-an547.txt"),
    Rule("pad-layout-ignored",
         "op_constant_pad_nd.cpp:204-206 takes both tensors' strides from their logical sizes (getTrailingDims) and "
         "walks dims 0..last padded dim with them, copying the rest as one block; its dim-order check (:252) only "
         "asks that input and output agree: a channels-last pad of any dim but 0 comes out scrambled (no error)",
         UART + "preflight_pad_channels_last_mps3-an547.txt", MODELS + "pad_channels_last.py", "Test_result: FAIL",
         MODELS + "pad_channels_last.py:contiguous", UART + "preflight_pad_contiguous_pass_mps3-an547.txt"),
    Rule("unsupported-rank",
         "the portable kernel's check_*_args rank test (convolution: in.dim() == 3 or 4)",
         UART + "preflight_conv3d_rank_mps3-an547.txt", MODELS + "conv3d.py", "kernel_ops_util.cpp:394",
         MODELS + "conv1d.py", UART + "preflight_conv1d_pass_mps3-an547.txt"),
    Rule("needs-contiguous",
         "tensor_is_default_dim_order(t) of the portable kernel: dim order 0, 1, 2, ... (literally)",
         UART + "preflight_layer_norm_channels_last_mps3-an547.txt", MODELS + "layer_norm_cl.py",
         "op_native_layer_norm.cpp:103",
         MODELS + "layer_norm_cl.py:nchw", UART + "preflight_layer_norm_nchw_pass_mps3-an547.txt"),
    Rule("unsupported-dim-order",
         "tensor_is_default_or_channels_last_dim_order(t) of the portable kernel",
         note="no model found whose program stores a dim order that is neither contiguous nor channels-last"),
    Rule("unsupported-dtype",
         "the portable kernel's ET_SWITCH_*_TYPES over the argument's dtype",
         note="no confirming case recorded yet"),
    Rule("cmsis-needs-channels-last",
         "is_channels_last_tensor(t) of backends/cortex_m/ops/cortex_m_ops_common.h: 4-D and dim order "
         "(0, 2, 3, 1), or one channel, or 1x1 spatial (an ambiguous layout is accepted)",
         UART + "preflight_avg_pool_contiguous_mps3-an547.txt", MODELS + "contiguous_mean.py",
         "tensors must use channels_last dimension order",
         MODELS + "contiguous_mean.py:no_contiguous", UART + "preflight_avg_pool_channels_last_pass_mps3-an547.txt"),
    Rule("cmsis-needs-int8",
         "validate_cmsis_nn_tensor_requirements(...) of backends/cortex_m/ops/cortex_m_ops_common.h: "
         "ET_CHECK_MSG that input1, input2 and the output are int8 (ScalarType::Char; quantized_div: the output's "
         "int8 or int16, op_quantized_div.cpp:90), else abort",
         UART + "preflight_float_operand_mul_mps3-an547.txt", MODELS + "float_operand_mul.py",
         "Input2 dtype must be 1, got 6",
         MODELS + "float_operand_mul.py:near", UART + "preflight_quantized_operands_mul_pass_mps3-an547.txt"),
    Rule("cmsis-ignores-dim-order",
         "arm_transpose_s8 / arm_elementwise_add_s8 / arm_elementwise_mul_s8 get the raw buffers and the logical "
         "sizes (backends/cortex_m/ops/op_transpose.cpp, op_quantized_add.cpp, op_quantized_mul.cpp); the dim "
         "order is never read (cortex_m_ops_common.h:72: \"TBD (#16032): Validate dim_order\")",
         UART + "preflight_mixed_layout_add_mps3-an547.txt", MODELS + "mixed_layout_add.py", "Test_result: FAIL",
         MODELS + "mixed_layout_add.py:near", UART + "preflight_layouts_matched_pass_mps3-an547.txt"),
    Rule("cmsis-unsupported-rank",
         "transpose_out of backends/cortex_m/ops/op_transpose.cpp:44: rank in [1, kMaxSupportedDims = 4], else "
         "context.fail(InvalidArgument)",
         UART + "preflight_transpose_6d_mps3-an547.txt", MODELS + "window_partition.py",
         "expected tensor rank in [1, 4], got 6",
         MODELS + "window_partition.py:near", UART + "preflight_transpose_4d_pass_mps3-an547.txt"),
    Rule("view-of-channels-last",
         "ReplaceViewCopyWithViewPass (exir/passes/replace_view_copy_with_view_pass.py) makes a view_copy a memory "
         "view of its base with contiguous strides, whatever the base's dim order; no kernel (and no dim-order check) "
         "runs for it",
         UART + "preflight_view_of_channels_last_mps3-an547.txt", MODELS + "view_of_channels_last.py",
         "Test_result: FAIL",
         MODELS + "view_of_channels_last.py:near", UART + "preflight_view_of_contiguous_pass_mps3-an547.txt"),
    Rule("int-list-given-int",
         "EValue::toIntList() (runtime/core/evalue.h:411) on a kernel's int[] argument: ET_CHECK_MSG(isIntList()), "
         "else abort",
         UART + "preflight_int_list_arg_mps3-an547.txt", MODELS + "max_dim.py", "EValue is not an Int List",
         MODELS + "max_dim.py:near", UART + "preflight_int_list_arg_pass_mps3-an547.txt"),
    Rule("missing-kernel", _REGISTRY,
         UART + "preflight_missing_kernel_mps3-an547.txt", MODELS + "layer_norm_cl.py:nchw (checkout without "
         "aten::native_layer_norm.out)", "Missing operator: [2] aten::native_layer_norm.out",
         MODELS + "layer_norm_cl.py:nchw", UART + "preflight_layer_norm_nchw_pass_mps3-an547.txt"),
    Rule("kernel-not-selected", _REGISTRY + "; cmlens' runner build registers only the ops "
         "runner_build.portable_ops selects",
         UART + "preflight_missing_kernel_mps3-an547.txt", MODELS + "layer_norm_cl.py:nchw (runner without "
         "aten::native_layer_norm.out)", "Missing operator: [2] aten::native_layer_norm.out",
         MODELS + "layer_norm_cl.py:nchw", UART + "preflight_layer_norm_nchw_pass_mps3-an547.txt"),
    Rule("bundle-output-dim-order",
         "bundled_program.cpp tensors_are_close: ET_CHECK that the expected output's strides (from its "
         "sizes + dim order, dim_order_to_stride) equal the method output's; otherwise abort",
         UART + "preflight_bundle_dim_order_mps3-an547.txt", MODELS + "gelu_upsample.py (stock BundledProgram)",
         "same strides", MODELS + "gelu_upsample.py", UART + "preflight_bundle_dim_order_pass_mps3-an547.txt"),
    Rule("dim-order-mixed-unverified", _SAME_DIM_ORDER + "; this kernel's source was not read",
         note="a guess about a kernel the table does not cover"),
    Rule("transpose-conv-stride-padding",
         "arm_transpose_conv_s8 (CMSIS-NN) numerics with stride > 1 and padding > 0",
         note="measured wrong numbers in ExecuTorch's own cases; the cause is not located in a source line"),
)}


def rule(rule_id: str) -> Rule | None:
    return RULES.get(rule_id)


def settle(f: Finding) -> Finding:
    """The finding with the runtime check its rule models and the case it rests on; "will fail" only
    when that rule is confirmed (a rule the table does not know is "may fail")."""
    r = RULES.get(f.rule)
    if r is None:
        return replace(f, certainty=MAY_FAIL)
    certainty = f.certainty if r.confirmed else MAY_FAIL
    return replace(f, certainty=certainty, check=f.check or r.check,
                   confirmed_by=r.confirmed_by if certainty == WILL_FAIL else "")
