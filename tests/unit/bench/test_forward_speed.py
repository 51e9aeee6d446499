"""bench/forward_speed.py's parts that need no GPU (variants, kernel kinds), and eval_gpu.py's recompile count."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

from bench.forward_speed import kernel_kind, variant_options  # noqa: E402


def test_a_variant_is_a_backbone_with_make_policy_options() -> None:
    assert variant_options("lean") == {"backbone": "lean"}
    assert variant_options("lean?graphs=8") == {"backbone": "lean", "graphs": 8}
    assert variant_options("hf?graphs=8+16&chunks=runner") == {"backbone": "hf", "graphs": "8+16", "chunks": "runner"}


def test_an_unknown_backbone_is_refused_naming_the_known_ones() -> None:
    with pytest.raises(SystemExit, match="unknown backbone 'vllm'; use one of hf, lean, lean-compiled"):
        variant_options("vllm?graphs=8")


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        # names the H200 profile of 2026-12-04 printed (bench/LOG.md)
        ("nvjet_sm90_tst_256x152_64x4_1x2_h_bz_coopA_NNT", "matrix products"),
        ("cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x128", "attention"),
        # Inductor's rotary kernel is named after the attention its output feeds; it is elementwise work
        ("triton_poi_fused__scaled_dot_product_cudnn_attention_add_cat_mul_neg_split", "elementwise"),
        ("triton_poi_fused_mul_silu_split_2", "elementwise"),
        ("triton_red_fused__fused_rms_norm_view_0", "norms"),
        ("void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16>", "norms"),
        ("void at::native::(anonymous namespace)::CatArrayBatchedCopy<OpaqueType<2u>>", "copies"),
        ("Memcpy DtoD (Device -> Device)", "copies"),
        ("void at::native::elementwise_kernel<128, 4, gpu_kernel_impl_nocast<silu_kernel>>", "elementwise"),
        ("some_kernel_nobody_named", "other"),
    ],
)
def test_kernels_are_grouped_by_the_part_of_the_forward_they_run(name: str, kind: str) -> None:
    assert kernel_kind(name) == kind


def test_the_suite_run_counts_only_the_recompiles_logged_after_the_server_said_serving() -> None:
    from bench.eval_gpu_served import recompiles_while_serving

    head = "[0/1] [__recompiles] Recompiling function forward in bench/lean_llama.py:96\n"  # the build's own
    log = head + "serving python:bench.llama_policy:make_policy at ws://127.0.0.1:8765\n"
    assert recompiles_while_serving(log) == 0
    assert recompiles_while_serving(log + head.replace("0/1", "0/2") + head.replace("0/1", "0/3")) == 2
    assert recompiles_while_serving(head) == 0  # a server that never served: its failure is reported elsewhere


def test_the_suite_run_keeps_the_guard_failure_behind_each_recompile_after_serving() -> None:
    from bench.eval_gpu_served import recompile_reasons_while_serving

    # the shape of a real Dynamo log (TORCH_LOGS=recompiles), from the CPU run of the compiled stand-in
    build = (
        "V1205 02:25:10.049000 8400 torch/_dynamo/guards.py:5396] [0/1] [__recompiles] Recompiling function forward\n"
        "V1205 02:25:10.049000 8400 torch/_dynamo/guards.py:5396] [0/1] [__recompiles]     triggered by the "
        "following guard failure(s):\n"
        "V1205 02:25:10.049000 8400 torch/_dynamo/guards.py:5396] [0/1] [__recompiles]     - 0/0: tensor "
        "'inputs_embeds' size mismatch at index 0. expected 2, actual 1\n"
    )
    log = build + "serving python:bench.llama_policy:make_policy at ws://127.0.0.1:8765\n"
    assert recompile_reasons_while_serving(log) == []  # the build's own recompile is not the run's
    later = build.replace("[0/1]", "[0/2]").replace("expected 2, actual 1", "expected 2, actual 3")
    assert recompile_reasons_while_serving(log + later) == [
        "0/0: tensor 'inputs_embeds' size mismatch at index 0. expected 2, actual 3"
    ]
