"""``rlinf:CONFIG`` — evaluate a real RLinf checkpoint with RLinf's own model code.

CONFIG is a run's saved RLinf config (``actor.model`` inside) or a model config file (the ``model``
section: ``model_type``, ``precision``, the type's own keys). The model is built by
``rlinf.models.get_model`` and the checkpoint's ``actor/model_state_dict/full_weights.pt`` is loaded
strictly. Spec options (after ``?``):

- ``weights=PATH``: the ``full_weights.pt`` to load (default: from ``--checkpoint``, else the run
  config's ``runner.ckpt_path``, else none: the model as ``model_path`` gives it);
- ``model_path=DIR`` and ``precision=bf16|fp16|fp32``: laid over the config, as RLinf's
  ``rollout.model`` is;
- ``device=cpu|cuda:N`` (default ``cpu``);
- ``batch=N`` (default 16): every forward pass has exactly N rows (padded), so an episode's actions do
  not depend on how many episodes share its pass; ``batch=0`` turns padding off;
- ``seed=N`` (default 0): seeds the starting noise of flow-matching models, per episode;
- ``images=0|1|2``: camera images handed to the model (default: by model type);
- ``resolution=PX``: camera resolution (default: the run config's, else 256 as in RLinf's LIBERO env);
- ``plugins=pkg.mod,...``: modules imported first, for model types registered with ``register_model``;
- ``chunks=runner|policy`` (default runner): who executes a chunk (see below).

Decoding is always greedy (see :func:`eval_runner.policies.rlinf_config.eval_kwargs`); an override of
the config is recorded in :meth:`RlinfPolicy.describe`. Action chunks are executed open loop: one model
call per chunk and episode, the rest of a chunk dropped when its episode ends. By default ``act``
returns each row's whole chunk (``[B, K, 7]``) and the runner's worker executes it, rendering only the
observation it sends back; ``chunks=policy`` keeps the chunks here and returns one action per call.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
from collections import deque
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from eval_runner.policies.base import ACTION_DIM, ObservationSpec, Policy, sha256_file
from eval_runner.policies.checks import batch_size, chunk_executor, runner_executes_chunks
from eval_runner.policies.conventions import MAIN_CAMERA, STATE_KEYS, WRIST_CAMERA, get_convention, libero_state
from eval_runner.policies.factory import SCHEMES, take_options
from eval_runner.policies.rlinf_config import (
    OPENVLA_GRIPPER_TYPES,
    STATE_ONLY_TYPES,
    Greedy,
    RlinfConfig,
    build_model,
    eval_kwargs,
    import_plugins,
    load_config,
    load_weights,
    rlinf_version,
)
from eval_runner.policies.spec import PolicySpec
from rlinf_bench.errors import CheckpointError, PolicyError

OPTIONS: dict[str, type] = {
    "weights": str,
    "model_path": str,
    "precision": str,
    "device": str,
    "batch": int,
    "seed": int,
    "images": int,
    "resolution": int,
    "plugins": str,
    "chunks": str,
}
DEFAULT_BATCH = 16
WEIGHTS_IN_CHECKPOINT = Path("actor") / "model_state_dict" / "full_weights.pt"
_ATTEMPT_SUFFIX = re.compile(r"-a\d+$")


@SCHEMES.register("rlinf")
def _load_rlinf(spec: PolicySpec, checkpoint_dir: Path | None) -> Policy:
    options = take_options(spec, OPTIONS)
    rlinf_version()  # a clear error before anything else when rlinf is not installed
    import_plugins([m.strip() for m in str(options.get("plugins", "")).split(",") if m.strip()], spec.raw)
    if not spec.target:
        raise PolicyError(f"policy spec {spec.raw!r}: expected rlinf:CONFIG (a run's saved config or a model config)")
    device = check_device(str(options.get("device", "cpu")), spec.raw)
    batch = int(options.get("batch", DEFAULT_BATCH))
    if batch < 0:
        raise PolicyError(f"policy spec {spec.raw!r}: batch={batch} must be >= 0 (0: no padding)")
    overrides = {"model_path": options.get("model_path"), "precision": options.get("precision")}
    config = load_config(Path(spec.target).expanduser(), overrides)
    weights = resolve_weights(options.get("weights"), checkpoint_dir, config)
    model = build_model(config, spec.raw)
    if weights is not None:
        load_weights(model, weights)
    return RlinfPolicy(
        model,
        config,
        spec=spec.raw,
        device=device,
        batch=batch,
        seed=int(options.get("seed", 0)),
        images=options.get("images"),
        resolution=options.get("resolution"),
        weights=weights,
        chunks=str(options.get("chunks", "runner")),
    )


def resolve_weights(option: str | None, checkpoint_dir: Path | None, config: RlinfConfig) -> Path | None:
    """The weights file to load: ``weights=``, then ``--checkpoint``, then ``runner.ckpt_path``; None if none given."""
    if option:
        return Path(option).expanduser()
    if checkpoint_dir is not None:
        if checkpoint_dir.is_file():
            return checkpoint_dir
        if not checkpoint_dir.exists():
            raise CheckpointError(f"checkpoint {checkpoint_dir} does not exist; check the --checkpoint path")
        for candidate in (checkpoint_dir / WEIGHTS_IN_CHECKPOINT, checkpoint_dir / "model_state_dict/full_weights.pt"):
            if candidate.is_file():
                return candidate
        raise CheckpointError(
            f"checkpoint {checkpoint_dir} has no {WEIGHTS_IN_CHECKPOINT} (RLinf's FSDP layout, written last by "
            "rank 0): it is incomplete, or an older layout; pass the weights file with weights=PATH"
        )
    return Path(config.ckpt_path).expanduser() if config.ckpt_path else None


def check_device(device: str, spec: str) -> str:
    """``device`` if torch can place tensors there, else a PolicyError naming it."""
    import torch

    try:
        dev = torch.device(device)
    except (RuntimeError, ValueError) as exc:
        raise PolicyError(f"policy spec {spec!r}: device={device!r} is not a torch device (e.g. cpu, cuda:0)") from exc
    if dev.type == "cuda":
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if count == 0 or (dev.index or 0) >= count:
            raise PolicyError(
                f"policy spec {spec!r}: device={device!r} is not there: this machine has {count} CUDA device(s) "
                f"visible to torch {torch.__version__}; use device=cpu or a cuda:N below {count}"
            )
    elif dev.type != "cpu":
        try:
            torch.empty(1, device=dev)
        except Exception as exc:  # backends raise RuntimeError/AssertionError when absent
            raise PolicyError(f"policy spec {spec!r}: device={device!r} is not usable here: {exc}") from exc
    return device


def default_images(config: RlinfConfig) -> int:
    """Camera images the model type reads: none for state policies, the config's count for OFT/CNN, else two."""
    if config.model_type in STATE_ONLY_TYPES or config.model.get("input_type") == "state":
        return 0
    if config.model_type in ("openvla", "openvla_oft"):
        return int(config.model.get("num_images_in_input", 1) or 1)
    if config.model_type == "cnn_policy":
        return int(config.model.get("image_num", 1) or 1)
    return 2


class RlinfPolicy(Policy):
    """An RLinf model evaluated greedily, with action chunks and fixed-size batched forward passes."""

    def __init__(
        self,
        model: Any,
        config: RlinfConfig,
        *,
        spec: str,
        device: str = "cpu",
        batch: int = DEFAULT_BATCH,
        seed: int = 0,
        images: int | None = None,
        resolution: int | None = None,
        weights: Path | None = None,
        chunks: str = "runner",
    ) -> None:
        self.runner_chunks = runner_executes_chunks(chunks, spec)
        self.spec = spec
        self.config = config
        self.device = device
        self.batch = batch
        self.seed = seed
        self.weights = weights
        self.weights_sha256 = sha256_file(weights) if weights is not None else None
        self.images = default_images(config) if images is None else images
        if self.images not in (0, 1, 2):
            raise PolicyError(f"policy spec {spec!r}: images={self.images} must be 0, 1 or 2 (main, then wrist camera)")
        self.convention = get_convention("rlinf")
        if self.images:
            self.obs_spec = self.convention.obs_spec(
                wrist=self.images == 2, resolution=resolution or config.resolution or None
            )
        else:
            self.obs_spec = ObservationSpec(cameras=(), proprio=STATE_KEYS)
        self.greedy: Greedy = eval_kwargs(config)
        self.model = model.to(device)
        self.model.eval()
        self._queues: dict[str, deque[np.ndarray]] = {}
        self._noise: dict[str, _EpisodeNoise] = {}  # episode (without its attempt suffix) -> its noise state
        #: forward passes and the real (unpadded) rows they predicted: what "one call per chunk" is checked on
        self.model_calls = 0
        self.model_rows = 0

    # -- Policy interface ------------------------------------------------------------------------
    def reset(self, episode_ids: list[str]) -> None:
        for episode_id in episode_ids:
            self._queues.pop(str(episode_id), None)
            self._noise.pop(_episode_key(str(episode_id)), None)

    def act(self, obs: dict[str, Any]) -> np.ndarray:
        rows = batch_size(obs)
        if self.runner_chunks and rows:
            return self._act_chunks(obs, rows)
        ids = [str(e) for e in obs["episode_id"]]
        stale = [i for i, e in enumerate(ids) if not self._queues.get(e)]
        step = self.batch or max(1, len(stale))  # batch=0: all waiting rows in one pass, whatever their count
        for start in range(0, len(stale), step):
            group = stale[start : start + step]
            for row, chunk in zip(group, self._predict(obs, group), strict=True):
                self._queues[ids[row]] = deque(chunk)
        if not rows:
            return np.zeros((0, ACTION_DIM), dtype=np.float32)
        return np.stack([self._queues[e].popleft() for e in ids]).astype(np.float32)

    def _act_chunks(self, obs: dict[str, Any], rows: int) -> np.ndarray:
        """Every row's whole chunk, ``[B, K, 7]`` (``[B, 7]`` for K = 1), for the runner to execute open loop.

        The runner asks again only when a row's chunk is done, so each row of a call needs a forward pass.
        """
        step = self.batch or rows
        chunks: list[np.ndarray] = []
        for start in range(0, rows, step):
            chunks.extend(self._predict(obs, list(range(start, min(rows, start + step)))))
        out = np.stack(chunks).astype(np.float32)
        return out[:, 0, :] if out.shape[1] == 1 else out

    def describe(self) -> dict[str, Any]:
        import torch

        params = list(self.model.parameters())
        return {
            "class": type(self).__name__,
            "spec": self.spec,
            "model_type": self.config.model_type,
            "rlinf_version": rlinf_version(),
            "precision": self.config.model.get("precision", "fp32"),
            "param_dtype": str(params[0].dtype).replace("torch.", "") if params else None,
            "parameters": int(sum(p.numel() for p in params)),
            "device": self.device,
            "torch": torch.__version__,
            "greedy": True,
            "greedy_meaning": self.greedy.meaning,
            "greedy_override": self.greedy.override,
            "chunk_size": self.config.chunk_size,
            "chunks_executed_by": chunk_executor(self.runner_chunks),
            "forward_batch": self.batch,
            "noise_seed": self.seed,
            "images": self.images,
            "model_path": self.config.model.get("model_path"),
            "config_file": str(self.config.path),
            "config_kind": self.config.kind,
            "config_sha256": self.config.sha256,
            "weights_file": str(self.weights) if self.weights is not None else None,
            "weights_sha256": self.weights_sha256,
            "convention": self.convention.describe(),
            "obs_spec": self.obs_spec.model_dump(mode="json"),
        }

    def close(self) -> None:
        if str(self.device).startswith("cuda"):
            import torch

            self.model.to("cpu")
            torch.cuda.empty_cache()

    # -- model calls -----------------------------------------------------------------------------
    def env_obs(self, obs: dict[str, Any], rows: list[int]) -> dict[str, Any]:
        """RLinf's LIBERO ``env_obs`` for ``rows`` of a batch (``LiberoEnv._wrap_obs``), on the CPU."""
        import torch

        prompts = list(obs.get("task_description") or [""] * batch_size(obs))
        out: dict[str, Any] = {
            "states": torch.from_numpy(libero_state({k: np.asarray(obs[k])[rows] for k in STATE_KEYS})).float(),
            "task_descriptions": [prompts[i] for i in rows],
            "main_images": None,
            "wrist_images": None,
            "extra_view_images": None,
        }
        for name, camera, needed in (("main_images", MAIN_CAMERA, 1), ("wrist_images", WRIST_CAMERA, 2)):
            if self.images >= needed:
                key = f"{camera}_image"
                if key not in obs:
                    raise PolicyError(f"rlinf policy needs observation {key!r}; the batch has {sorted(obs)}")
                out[name] = torch.from_numpy(self.convention.image(np.asarray(obs[key])[rows]))
        return out

    def _predict(self, obs: dict[str, Any], rows: list[int]) -> list[np.ndarray]:
        """One forward pass for ``rows`` (padded to ``batch``); returns each row's LIBERO action chunk."""
        import torch

        padded = rows + [rows[-1]] * (max(self.batch, len(rows)) - len(rows))
        env_obs = self.env_obs(obs, padded)
        noise = [self._episode_noise(obs, r) for r in rows]
        with self._seeded(noise, len(padded) - len(rows)), torch.no_grad():
            raw, _ = self.model.predict_action_batch(env_obs=env_obs, **self.greedy.kwargs)
        self.model_calls += 1
        self.model_rows += len(rows)
        chunks = _to_numpy(raw)
        if chunks.ndim != 3 or chunks.shape[0] != len(padded) or chunks.shape[2] != ACTION_DIM or chunks.shape[1] < 1:
            raise PolicyError(
                f"rlinf model {self.config.model_type!r} returned actions of shape {tuple(chunks.shape)} for a forward "
                f"pass of {len(padded)} rows; expected ({len(padded)}, chunk, {ACTION_DIM}): check action_dim and "
                "num_action_chunks in the config"
            )
        if self.config.model_type in OPENVLA_GRIPPER_TYPES:
            chunks = self.convention.to_env_actions(chunks, "openvla")
        if not np.isfinite(chunks[: len(rows)]).all():
            raise PolicyError(f"rlinf model {self.config.model_type!r} returned NaN or infinite actions")
        return [chunks[i].astype(np.float32) for i in range(len(rows))]

    def _episode_noise(self, obs: dict[str, Any], row: int) -> _EpisodeNoise:
        """The noise state of a row's episode, created on its first model call."""
        key = _episode_key(str(obs["episode_id"][row]))
        state = self._noise.get(key)
        if state is None:
            seeds = obs.get("episode_seed")
            origin = f"seed{int(seeds[row])}" if isinstance(seeds, list | tuple | np.ndarray) else key
            digest = hashlib.sha256(f"rlinf-bench/noise/{self.seed}/{origin}".encode()).digest()
            state = self._noise[key] = _EpisodeNoise(int.from_bytes(digest[:8], "big") >> 1)
        state.calls += 1
        return state

    @contextlib.contextmanager
    def _seeded(self, noise: list[_EpisodeNoise], padding: int) -> Iterator[None]:
        """Seed the pass's randomness from its episodes.

        A model with ``sample_noise(shape, device)`` (openpi, GR00T) gets each row's starting noise
        from that row's own per-episode generator, so it depends neither on the batch nor on the
        worker count. Any other draw from torch's global RNG (flow_policy) is seeded from the rows'
        episodes and call counts, which makes a run repeat exactly with the same workers.
        """
        import torch

        original = getattr(self.model, "sample_noise", None)

        def sample_noise(shape: Any, device: Any) -> Any:
            like = original(shape, device)  # type: ignore[misc]
            rows = [torch.randn(tuple(shape[1:]), generator=n.generator) for n in noise]
            rows += [torch.zeros(tuple(shape[1:]))] * padding
            return torch.stack(rows).to(device=like.device, dtype=like.dtype)

        material = "/".join(f"{n.seed}:{n.calls}" for n in noise).encode()
        call_seed = int.from_bytes(hashlib.sha256(material).digest()[:8], "big") >> 1
        devices = [torch.device(self.device).index or 0] if str(self.device).startswith("cuda") else []
        with torch.random.fork_rng(devices=devices):
            torch.manual_seed(call_seed)
            if callable(original):
                self.model.sample_noise = sample_noise
            try:
                yield
            finally:
                if callable(original):
                    del self.model.sample_noise


class _EpisodeNoise:
    """One episode's noise generator (torch.Generator) and how many model calls it has had."""

    def __init__(self, seed: int) -> None:
        import torch

        self.seed = seed
        self.generator = torch.Generator().manual_seed(seed)
        self.calls = 0


def _to_numpy(raw: Any) -> np.ndarray:
    if hasattr(raw, "detach"):
        tensor = raw.detach().cpu()
        return np.asarray(tensor.float().numpy() if tensor.is_floating_point() else tensor.numpy(), dtype=np.float64)
    return np.asarray(raw, dtype=np.float64)


def _episode_key(episode_id: str) -> str:
    # A re-run after a worker crash ("-a1") replays the episode with the same simulator seed: same noise too.
    return _ATTEMPT_SUFFIX.sub("", episode_id)
