"""A 7B-class VLA policy with OpenVLA-OFT's shapes and random weights, for GPU-scale benchmarks.

No weights are needed: the backbone is built from a transformers ``LlamaConfig`` the size of
Llama-2-7B (4096 hidden, 32 layers, 32 heads, 11008 MLP; 6.5e9 parameters) in bf16 and initialised
at random (seeded). One forward pass per action chunk, as OpenVLA-OFT's parallel decoding does:

- image tokens: each camera image (2 x 256 px) is cut into 16 x 16 patches, embedded and projected
  into the backbone's width: 256 tokens per camera, 512 for two (OFT: 256 per image);
- proprio: one token; instruction: ``prompt_tokens`` word-hashed token ids (no tokenizer needed);
- 56 action query tokens (8 steps x 7 dims) whose last hidden states an MLP head turns into the chunk.

The SigLIP/DINOv2 vision towers (~0.7e9 parameters) are left out: the patch embedding stands in for
them, so the compute is the backbone's (~600 tokens per row). By default ``act`` returns each row's
whole chunk and the runner executes it open loop (OpenVLA-OFT's 8 open-loop steps); with
``chunks=policy`` the policy keeps each episode's chunk and calls the model only for the rows whose
chunk is used up, so one act() on a batch of B rows costs one forward on the k <= B rows that need one. Rows are computed together in bf16; like any
batched GPU model, a row's actions can differ in the last bits with the batch size it runs at.

``graphs=1,2,4,8,16`` captures the forward once per size as a CUDA graph
(:class:`bench.captured_forward.CapturedForward`): a batch runs padded to the next size, through
pinned host buffers, with one launch instead of hundreds, and the replay is checked bit for bit
against the eager forward at every size when the policy is built (``describe()`` says the outcome).

Serve it: ``rlinf-bench serve-policy --policy python:bench.llama_policy:make_policy --port 8000``
(needs ``pip install 'rlinf-bench[gpu-bench]'`` for transformers, and a CUDA GPU with ~16 GB free).
"""

from __future__ import annotations

import hashlib
from collections import deque
from pathlib import Path
from typing import Any

import numpy as np

from eval_runner.api import ACTION_DIM, ObservationSpec, Policy

CAMERAS = ("agentview", "robot0_eye_in_hand")
PROPRIO = ("robot0_eef_pos", "robot0_eef_quat", "robot0_gripper_qpos")
PROPRIO_DIM = 9
#: ``hf``: transformers' LlamaModel; ``lean``: the same network with fused projections (bench/lean_llama.py);
#: ``lean-compiled``: ``lean`` through torch.compile (its norms, rotary and SwiGLU fused by Inductor)
BACKBONES = ("hf", "lean", "lean-compiled")
#: Llama-2-7B's shapes
LLAMA_7B = {"hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32, "num_attention_heads": 32}


class ChunkedVLA(Policy):
    """Per-episode action chunks from a batched model; the model runs only for rows that need a chunk."""

    def __init__(
        self,
        model: Any,
        *,
        chunk: int,
        resolution: int,
        device: str,
        action_scale: float,
        runner_chunks: bool = True,
        graph_sizes: tuple[int, ...] = (),
    ) -> None:
        from bench.captured_forward import CapturedForward

        self.model = model
        self.runner_chunks = runner_chunks
        self.chunk = chunk
        self.device = device
        self.action_scale = action_scale
        self.obs_spec = ObservationSpec(cameras=CAMERAS, resolution=resolution, proprio=PROPRIO)
        self._queues: dict[str, deque[np.ndarray]] = {}
        self.forwards = 0  # model calls
        self.rows_inferred = 0  # rows that went through the model
        # eager: one size per batch, no padding; captured: the graph of the next size up
        self.captured = CapturedForward(self._forward, graph_sizes, device=device) if graph_sizes else None
        self.capture_error = ""  # why the graphs were not used, when capture failed

    def _forward(self, images: Any, proprio: Any, tokens: Any) -> Any:
        """Device tensors -> actions in [-scale, scale] (before the gripper's sign), float32 on the device."""
        import torch

        out = self.model(images, proprio, tokens)
        return torch.tanh(torch.nan_to_num(out.float())) * self.action_scale

    def example_inputs(self, rows: int = 4, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Random inputs of the model's shapes (warm-up and the replay-vs-eager check)."""
        rng = np.random.default_rng(seed)
        res = self.obs_spec.resolution
        images = rng.integers(0, 256, (rows, len(CAMERAS), res, res, 3), dtype=np.uint8)
        proprio = rng.standard_normal((rows, PROPRIO_DIM)).astype(np.float32)
        tokens = rng.integers(0, self.model.vocab, (rows, self.model.prompt_tokens)).astype(np.int64)
        return images, proprio, tokens

    def reset(self, episode_ids: list[str]) -> None:
        for episode_id in episode_ids:
            self._queues.pop(str(episode_id), None)

    def act(self, obs: dict[str, Any]) -> np.ndarray:
        if self.runner_chunks:  # every row asks for a new chunk, which the runner executes open loop
            return self.infer(obs).astype(np.float32)
        ids = [str(e) for e in obs["episode_id"]]
        need = [i for i, e in enumerate(ids) if not self._queues.get(e)]
        if need:
            chunks = self.infer({k: _take(v, need) for k, v in obs.items()})
            for row, i in enumerate(need):
                self._queues[ids[i]] = deque(chunks[row])
        return np.stack([self._queues[e].popleft() for e in ids]).astype(np.float32)

    def infer(self, obs: dict[str, Any]) -> np.ndarray:
        """One forward pass for every row of ``obs``: ``[B, chunk, 7]`` actions in [-scale, scale]."""
        import torch

        images = np.stack([obs[f"{c}_image"] for c in CAMERAS], axis=1)  # [B, 2, H, W, 3] uint8
        proprio = np.concatenate([np.asarray(obs[k], dtype=np.float32) for k in PROPRIO], axis=1)
        tokens = np.stack([prompt_ids(t, self.model.prompt_tokens, self.model.vocab) for t in obs["task_description"]])
        if self.captured is not None:
            actions = self.captured(images, proprio, tokens)
        else:
            with torch.inference_mode():
                actions = (
                    self._forward(
                        torch.from_numpy(images).to(self.device, non_blocking=True),
                        torch.from_numpy(proprio).to(self.device),
                        torch.from_numpy(tokens).to(self.device),
                    )
                    .cpu()
                    .numpy()
                )
        actions[..., -1] = np.where(actions[..., -1] > 0, 1.0, -1.0)  # LIBERO's gripper is binary
        self.forwards += 1
        self.rows_inferred += len(actions)
        return actions

    def describe(self) -> dict[str, Any]:
        return {
            "class": type(self).__name__,
            "backbone": self.model.describe(),
            "chunk": self.chunk,
            "chunks_executed_by": "runner" if self.runner_chunks else "policy",
            "weights": "random (seeded), no checkpoint",
            "forward": self.captured.describe()
            if self.captured is not None
            else {"cuda_graphs": False, **({"capture_error": self.capture_error} if self.capture_error else {})},
        }


def example_obs(rows: int, resolution: int = 256, seed: int = 0) -> dict[str, Any]:
    """A random observation batch of the policy's inputs (the runner's keys), for timing the forward."""
    rng = np.random.default_rng(seed)
    obs: dict[str, Any] = {
        f"{c}_image": rng.integers(0, 256, (rows, resolution, resolution, 3), dtype=np.uint8) for c in CAMERAS
    }
    obs |= {"robot0_eef_pos": rng.normal(size=(rows, 3)), "robot0_eef_quat": rng.normal(size=(rows, 4))}
    obs |= {"robot0_gripper_qpos": rng.normal(size=(rows, 2)), "task_description": ["pick up the bowl"] * rows}
    return obs


def compile_now(policy: ChunkedVLA, resolution: int) -> None:
    """Compile the ``lean-compiled`` backbone before the first request, not inside a timed run.

    Batch 2 compiles the graph every size from 2 up uses; batch 1 is its own graph to Dynamo.
    """
    try:
        for rows in (2, 1):
            policy.infer(example_obs(rows, resolution))
    except Exception as exc:  # Inductor needs Triton (GPU) or a C++ compiler (CPU); say which backbone works
        reason = (str(exc).splitlines() or [""])[0][:300]
        raise RuntimeError(
            f"backbone=lean-compiled could not be compiled here ({type(exc).__name__}: {reason}); "
            "torch.compile needs Triton for a GPU and a C++ compiler for a CPU. Use backbone=lean: the same "
            "network, uncompiled"
        ) from exc


def _take(value: Any, rows: list[int]) -> Any:
    if isinstance(value, np.ndarray):
        return value[rows]
    return [value[i] for i in rows]


def option_value(text: str) -> int | float | str:
    """A make_policy option given as text (a command line, a query string): a number where it reads as one."""
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            continue
    return text


def prompt_ids(text: str, length: int, vocab: int) -> np.ndarray:
    """Word-hashed token ids of the instruction, padded/cut to ``length`` (a stand-in for a tokenizer)."""
    words = text.lower().split()[:length]
    ids = [int.from_bytes(hashlib.sha256(w.encode()).digest()[:4], "little") % vocab for w in words]
    return np.asarray(ids + [0] * (length - len(ids)), dtype=np.int64)


def build_model(
    *,
    layers: int,
    hidden: int,
    intermediate: int,
    heads: int,
    resolution: int,
    patch: int,
    chunk: int,
    prompt_tokens: int,
    device: str,
    seed: int,
    backbone: str = "hf",
) -> Any:
    """The backbone plus patch/proprio embeddings and the action head, random, bf16, on ``device``.

    ``backbone``: ``hf`` is transformers' ``LlamaModel``; ``lean`` is :class:`bench.lean_llama.LeanLlama`,
    the same network with fused projections (same parameters and FLOPs, fewer and larger kernels);
    ``lean-compiled`` is ``lean`` through ``torch.compile``, whose Inductor fuses the norms, rotary
    embedding and SwiGLU into a few kernels (the matrix products stay cuBLAS's). The network is
    :class:`bench.stand_in_vla.StandInVLA`.
    """
    if backbone not in BACKBONES:
        raise ValueError(f"backbone={backbone!r}: use one of {', '.join(BACKBONES)}")
    import torch

    from bench.stand_in_vla import StandInVLA

    tokens_per_row = 2 * (resolution // patch) ** 2 + 1 + prompt_tokens + chunk * ACTION_DIM
    torch.manual_seed(seed)
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.bfloat16)  # build in bf16 directly: 6.5e9 float32 parameters would be 26 GB
    try:
        with torch.device(device):
            model = StandInVLA(
                backbone,
                hidden=hidden,
                patch=patch,
                chunk=chunk,
                prompt_tokens=prompt_tokens,
                proprio_dim=PROPRIO_DIM,
                device=device,
                layers=layers,
                intermediate=intermediate,
                heads=heads,
                tokens_per_row=tokens_per_row,
            )
    finally:
        torch.set_default_dtype(previous)
    return model.eval()


def make_policy(
    checkpoint_dir: Path | None = None,
    *,
    layers: int = LLAMA_7B["num_hidden_layers"],
    hidden: int = LLAMA_7B["hidden_size"],
    intermediate: int = LLAMA_7B["intermediate_size"],
    heads: int = LLAMA_7B["num_attention_heads"],
    resolution: int = 256,
    patch: int = 16,
    chunk: int = 8,
    prompt_tokens: int = 32,
    device: str = "cuda",
    seed: int = 0,
    action_scale: float = 0.1,
    chunks: str = "runner",
    graphs: str = "",
    backbone: str = "hf",
) -> ChunkedVLA:
    """``python:bench.llama_policy:make_policy`` (options: layers, hidden, ..., device, seed); ignores checkpoints.

    ``chunks``: ``runner`` returns each row's whole chunk (``[B, chunk, 7]``), executed open loop by the
    runner, which then renders only each chunk's last step; ``policy`` keeps the chunks here and returns
    one action per call (``[B, 7]``), so every step is a round trip with both images.
    ``graphs``: batch sizes to capture as CUDA graphs (e.g. ``1,2,4,8,16``; empty: the eager forward), each
    captured and checked against the eager forward now, before the first request.
    ``backbone``: ``hf`` (transformers' LlamaModel), ``lean`` (the same network, fused projections) or
    ``lean-compiled`` (``lean`` through torch.compile, compiled here for every batch size before the
    first request).
    """
    from bench.captured_forward import parse_sizes

    if chunks not in ("runner", "policy"):
        raise ValueError(f"chunks={chunks!r}: use 'runner' or 'policy'")
    model = build_model(
        layers=layers,
        hidden=hidden,
        intermediate=intermediate,
        heads=heads,
        resolution=resolution,
        patch=patch,
        chunk=chunk,
        prompt_tokens=prompt_tokens,
        device=device,
        seed=seed,
        backbone=backbone,
    )
    policy = ChunkedVLA(
        model,
        chunk=chunk,
        resolution=resolution,
        device=device,
        action_scale=action_scale,
        runner_chunks=chunks == "runner",
        graph_sizes=parse_sizes(graphs) if graphs else (),
    )
    if backbone == "lean-compiled":
        compile_now(policy, resolution)
    if policy.captured is not None:
        example = policy.example_inputs(rows=max(policy.captured.sizes))
        try:
            policy.captured.warm_up(example)
        except Exception as exc:  # e.g. a library op that cannot be captured: serve eager, and say so
            policy.capture_error = f"{type(exc).__name__}: {exc}"
            policy.captured = None
        else:
            policy.captured.check_against_eager(example)
    return policy
