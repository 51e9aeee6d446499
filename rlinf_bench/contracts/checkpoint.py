"""Where a checkpoint lives and which RLinf layout it uses."""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field

from rlinf_bench.contracts.limits import URI_CHARS
from rlinf_bench.contracts.versioned import Contract

#: RLinf's global_step_<N> folders: a step of more digits is no step (the intake refuses such keys).
MAX_GLOBAL_STEP = 10**12 - 1


class CheckpointLayout(StrEnum):
    """The on-disk layouts RLinf has used for actor checkpoints (REFERENCE.md section 3)."""

    FSDP_DCP = "fsdp_dcp"  # v0.2+: actor/dcp_checkpoint/*.distcp + .metadata, then model_state_dict/full_weights.pt
    V01 = "v01"  # v0.1: DCP files directly in actor/ + actor/model/*.safetensors
    LEGACY_PT = "legacy_pt"  # before v0.1: actor/model.pt + optim.pt
    MEGATRON = "megatron"  # actor/iter_XXXXXXX/mp_rank_XX/... + latest_checkpointed_iteration.txt


class CheckpointRef(Contract):
    """One checkpoint of one training run: enough to find, name and evaluate it."""

    uri: str = Field(
        max_length=URI_CHARS,
        description="Root of the checkpoint (the global_step_N directory): s3://bucket/prefix or a local path",
    )
    experiment: str = Field(
        max_length=1024,  # one segment of an S3 key, which is at most 1,024 bytes
        description="Training experiment name (the directory above checkpoints/), kept as written: ids derived "
        "from it fold it to ASCII",
    )
    global_step: int = Field(
        ge=0, le=MAX_GLOBAL_STEP, description="Training step the checkpoint was saved at (at most 12 digits)"
    )
    layout: CheckpointLayout | None = Field(
        default=None,
        description="RLinf layout, as the intake found it from the checkpoint's files; null when nobody has "
        "looked yet (a checkpoint given on the command line): the eval Job then tells it from the files it lists",
    )

    @property
    def is_s3(self) -> bool:
        return self.uri.startswith("s3://")

    @property
    def actor_uri(self) -> str:
        return self.uri.rstrip("/") + "/actor"
