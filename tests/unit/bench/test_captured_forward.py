"""The captured forward's padding, on a CPU: a row's output does not depend on the batch it is padded into.

No CUDA here: ``capture=False`` runs the same padding through the eager forward. The GPU benchmark
checks the graph replay against the eager forward bit for bit (bench/llama_policy.py, describe()).
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from bench.captured_forward import CapturedForward, padded_size, parse_sizes  # noqa: E402


def _model() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Linear(12, 64), torch.nn.LayerNorm(64), torch.nn.GELU(), torch.nn.Linear(64, 7)
    ).eval()


def _forward(model: torch.nn.Module):  # type: ignore[no-untyped-def]
    def forward(x: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
        return torch.tanh(model(x.float() / 255.0) * scale)

    return forward


def _rows(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.integers(0, 256, (n, 12), dtype=np.uint8), rng.uniform(0.5, 2.0, (n, 1)).astype(np.float32)


def test_given_sizes_then_a_batch_runs_at_the_smallest_size_that_holds_it() -> None:
    assert parse_sizes("8,1,2,4,2") == (1, 2, 4, 8)
    assert [padded_size(b, (1, 2, 4, 8)) for b in (1, 2, 3, 5, 8)] == [1, 2, 4, 8, 8]
    for bad in ("", "0,2", "two"):
        with pytest.raises(ValueError, match=r"e\.g\. 1,2,4,8"):
            parse_sizes(bad)


def test_given_three_rows_then_each_gets_the_bits_of_the_eager_forward_at_size_four_whatever_the_other_rows() -> None:
    model = _model()
    captured = CapturedForward(_forward(model), (1, 2, 4, 8), device="cpu")
    x, s = _rows(3, seed=1)

    out = captured(x, s)

    assert out.shape == (3, 7)
    # the same three rows beside a fourth real row (not padding): still the same bits
    other_x, other_s = _rows(1, seed=2)
    with torch.inference_mode():
        eager = _forward(model)(
            torch.from_numpy(np.concatenate([x, other_x])), torch.from_numpy(np.concatenate([s, other_s]))
        )
    assert np.array_equal(out, eager.numpy()[:3])
    # and in another order, each row keeps its output
    shuffled = captured(x[[2, 0, 1]], s[[2, 0, 1]])
    assert np.array_equal(shuffled, out[[2, 0, 1]])
    assert captured.calls == {4: 2} and captured.padded_rows == 2


def test_given_more_rows_than_the_largest_size_then_they_run_in_pieces_of_it() -> None:
    captured = CapturedForward(_forward(_model()), (1, 2, 4), device="cpu")
    x, s = _rows(9, seed=3)

    out = captured(x, s)

    assert out.shape == (9, 7)
    assert captured.calls == {4: 2, 1: 1} and captured.padded_rows == 0
    assert np.array_equal(out[:4], captured(x[:4], s[:4]))


def test_given_inputs_of_different_row_counts_then_the_call_is_refused() -> None:
    captured = CapturedForward(_forward(_model()), (4,), device="cpu")
    x, s = _rows(3, seed=4)
    with pytest.raises(ValueError, match="one row per batch row"):
        captured(x, s[:2])


def test_given_a_cpu_then_graphs_are_not_asked_for_and_the_check_compares_eager_with_itself() -> None:
    with pytest.raises(ValueError, match="CUDA graphs need a CUDA device"):
        CapturedForward(_forward(_model()), (1,), device="cpu", capture=True)
    captured = CapturedForward(_forward(_model()), (1, 2), device="cpu")
    assert captured.check_against_eager(_rows(2, seed=5)) == {1: True, 2: True}
    assert captured.describe() == {"sizes": [1, 2], "cuda_graphs": False, "replay_equals_eager": {"1": True, "2": True}}
