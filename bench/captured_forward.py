"""A model's forward at a fixed set of batch sizes, captured once as CUDA graphs; batches padded up to one.

A 7B forward in eager PyTorch is some hundreds of kernel launches from one Python thread. Beside 15
simulator processes that thread is short of CPU, and the GPU waits between kernels (batch 1 took 34.7 ms
under load against 22.4 ms alone on one H200). A CUDA graph replays the whole forward with one launch,
so the GPU's speed no longer depends on how busy the host is.

Shapes must be static for a graph, so each batch of ``b`` rows is padded to the smallest captured size
``>= b`` (a batch above the largest is served in pieces of the largest). What a row gets:

- **the eager forward's bits at that size**: a replay runs the kernels eager PyTorch runs for the same
  shapes. :meth:`CapturedForward.check_against_eager` compares the two, bit for bit, at every size, and
  the result is in ``describe()`` (the policy's provenance);
- **nothing from the other rows**: the padding rows are zeros and a row's output depends on its own
  input alone for models whose rows do not interact (matrix products, per-sequence attention, norms). A
  row can still differ in its last bits between two *sizes*, as in any batched GPU model, since the
  libraries pick kernels by shape; ``sizes=(n,)`` pads every call to one size when that matters more
  than the compute it costs.

Host-side work stays off the GPU's critical path: inputs are copied into pinned host buffers and then
to the graph's static device inputs with non-blocking copies.

On a CPU (tests) or with ``capture=False`` the same padding runs the eager forward, so the padding
logic is tested where no GPU is.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np


def parse_sizes(text: str) -> tuple[int, ...]:
    """``"1,2,4,8"`` -> ``(1, 2, 4, 8)``: sorted, distinct, every one >= 1."""
    try:
        sizes = sorted({int(part) for part in str(text).replace("+", ",").split(",") if part.strip()})
    except ValueError as exc:
        raise ValueError(f"batch sizes {text!r}: give positive integers separated by commas, e.g. 1,2,4,8") from exc
    if not sizes or sizes[0] < 1:
        raise ValueError(f"batch sizes {text!r}: give positive integers separated by commas, e.g. 1,2,4,8")
    return tuple(sizes)


def padded_size(rows: int, sizes: Sequence[int]) -> int:
    """The smallest of ``sizes`` that holds ``rows`` (the largest when none does: the caller splits)."""
    for size in sizes:
        if size >= rows:
            return size
    return sizes[-1]


class CapturedForward:
    """``forward(*inputs) -> output`` served at fixed batch sizes (dimension 0 of every input and the output).

    ``inputs`` are numpy arrays with one row per batch row; ``dtypes`` are the torch dtypes they travel
    to the device in. The output comes back as a float32 numpy array ``[rows, ...]``.
    """

    def __init__(
        self,
        forward: Callable[..., Any],
        sizes: Sequence[int],
        *,
        device: str,
        capture: bool | None = None,
    ) -> None:
        import torch

        self.forward = forward
        self.sizes = tuple(sorted(set(sizes)))
        self.device = torch.device(device)
        self.capture = self.device.type == "cuda" if capture is None else capture
        if self.capture and self.device.type != "cuda":
            raise ValueError(f"CUDA graphs need a CUDA device, not {device!r}; pass capture=False")
        self._graphs: dict[int, Any] = {}  # size -> torch.cuda.CUDAGraph
        self._static_in: dict[int, list[Any]] = {}  # size -> device input tensors the graph reads
        self._static_out: dict[int, Any] = {}
        self._pinned: dict[int, list[Any]] = {}  # size -> pinned host staging buffers
        self.calls: dict[int, int] = {}  # size -> forwards served at it
        self.padded_rows = 0  # rows of padding computed and thrown away
        self.checks: dict[int, bool] = {}  # size -> replay equal to eager, bit for bit

    # -- serving ---------------------------------------------------------------------------------
    def __call__(self, *inputs: np.ndarray) -> np.ndarray:
        rows = len(inputs[0])
        if any(len(x) != rows for x in inputs):
            raise ValueError(f"inputs of {[len(x) for x in inputs]} rows: every input needs one row per batch row")
        largest = self.sizes[-1]
        if rows > largest:  # in pieces of the largest size, each padded like any batch
            pieces = [self(*(x[i : i + largest] for x in inputs)) for i in range(0, rows, largest)]
            return np.concatenate(pieces)
        size = padded_size(rows, self.sizes)
        self.calls[size] = self.calls.get(size, 0) + 1
        self.padded_rows += size - rows
        out = self._run(size, inputs)
        return out[:rows]

    def _run(self, size: int, inputs: Sequence[np.ndarray]) -> np.ndarray:
        import torch

        if not self.capture:
            with torch.inference_mode():
                return self._eager(size, inputs)
        if size not in self._graphs:
            self._capture(size, inputs)
        self._stage(size, inputs)
        self._graphs[size].replay()
        return self._static_out[size].float().cpu().numpy()

    def _eager(self, size: int, inputs: Sequence[np.ndarray]) -> np.ndarray:
        import torch

        tensors = [torch.from_numpy(_pad(x, size)).to(self.device) for x in inputs]
        return self.forward(*tensors).float().cpu().numpy()

    # -- capture ---------------------------------------------------------------------------------
    def _stage(self, size: int, inputs: Sequence[np.ndarray]) -> None:
        """Host rows -> pinned buffers (zeros below them) -> the graph's device inputs, without a sync."""
        for pinned, static, x in zip(self._pinned[size], self._static_in[size], inputs, strict=True):
            view = pinned.numpy()
            view[: len(x)] = x
            view[len(x) :] = 0
            static.copy_(pinned, non_blocking=True)

    def _capture(self, size: int, inputs: Sequence[np.ndarray]) -> None:
        import torch

        examples = [_pad(x, size) for x in inputs]
        self._pinned[size] = [torch.from_numpy(np.zeros_like(x)).pin_memory() for x in examples]
        self._static_in[size] = [torch.zeros(x.shape, dtype=_torch_dtype(x), device=self.device) for x in examples]
        self._stage(size, inputs)
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.inference_mode(), torch.cuda.stream(stream):
            for _ in range(2):  # warm-up on a side stream, as capture requires (lazy init, autotuning)
                self.forward(*self._static_in[size])
        torch.cuda.current_stream().wait_stream(stream)
        graph = torch.cuda.CUDAGraph()
        with torch.inference_mode(), torch.cuda.graph(graph):
            self._static_out[size] = self.forward(*self._static_in[size])
        self._graphs[size] = graph

    def warm_up(self, example: Sequence[np.ndarray]) -> None:
        """Capture every size now (from one example row per input), so no episode waits for a capture."""
        for size in self.sizes:
            self._run(size, [np.repeat(x[:1], size, axis=0) for x in example])
        self.calls.clear()
        self.padded_rows = 0

    def check_against_eager(self, example: Sequence[np.ndarray]) -> dict[int, bool]:
        """Replay vs the eager forward on the same padded input, at every size: equal bit for bit?"""
        import torch

        rng = np.random.default_rng(0)
        for size in self.sizes:
            rows = [x[rng.integers(0, len(x), size)] for x in example]
            captured = self._run(size, rows)
            with torch.inference_mode():
                eager = self._eager(size, rows)
            self.checks[size] = bool(np.array_equal(captured, eager, equal_nan=True))
        return dict(self.checks)

    def describe(self) -> dict[str, Any]:
        return {
            "sizes": list(self.sizes),
            "cuda_graphs": self.capture,
            "replay_equals_eager": {str(k): v for k, v in self.checks.items()},
        }


def _pad(x: np.ndarray, size: int) -> np.ndarray:
    if len(x) == size:
        return np.ascontiguousarray(x)
    out = np.zeros((size, *x.shape[1:]), dtype=x.dtype)
    out[: len(x)] = x
    return out


def _torch_dtype(x: np.ndarray) -> Any:
    import torch

    return torch.from_numpy(x[:0]).dtype
