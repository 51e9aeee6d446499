"""The object list of an RLinf FSDP checkpoint as FSx for Lustre exports it (for tests, replays, benchmarks).

Names and counts follow RLinf v0.2+ (REFERENCE.md section 3): one DCP shard per rank, ``.metadata``,
``full_weights.pt`` written last by rank 0, and the directory markers FSx exports as zero-byte
``dir/`` keys. Sizes are scaled down (``scale``) so that a real-shape checkpoint fits in memory.
"""

from __future__ import annotations

from typing import Literal

MetadataAt = Literal["first", "middle", "last"]

SHARD_BYTES = 7_600_000_000 // 64  # an OpenVLA-OFT 7B FSDP state over 64 ranks, roughly
FULL_WEIGHTS_BYTES = 15_200_000_000


def fsdp_objects(
    ranks: int = 64,
    *,
    metadata_at: MetadataAt = "last",
    markers: bool = True,
    scale: float = 1e-6,
) -> list[tuple[str, int]]:
    """(relative key, size) in export order; ``full_weights.pt`` comes last unless ``metadata_at='last'``,
    where ``.metadata`` lands after it (FSx promises no order)."""
    shard = max(1, int(SHARD_BYTES * scale))
    objects: list[tuple[str, int]] = []
    if markers:
        objects += [("actor/", 0), ("actor/dcp_checkpoint/", 0), ("actor/model_state_dict/", 0)]
    shards = [(f"actor/dcp_checkpoint/__{rank}_0.distcp", shard) for rank in range(ranks)]
    metadata = ("actor/dcp_checkpoint/.metadata", max(1, int(2_000_000 * scale)))
    weights = ("actor/model_state_dict/full_weights.pt", max(1, int(FULL_WEIGHTS_BYTES * scale)))
    if metadata_at == "first":
        objects += [metadata, *shards, weights]
    elif metadata_at == "middle":
        half = len(shards) // 2
        objects += [*shards[:half], metadata, *shards[half:], weights]
    else:
        objects += [*shards, weights, metadata]
    return objects
