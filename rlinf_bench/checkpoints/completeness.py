"""Is a checkpoint complete? List its root, check the layout's files, then wait for quiet.

FSx for Lustre exports objects in no promised order and ``torch.save`` is not atomic, so the arrival
of the layout's last file is necessary but not sufficient. A checkpoint counts as complete when
every required file is present and non-empty, the DCP shard ranks have no gaps, and nothing under
the root changed for ``quiet_period_s`` (REFERENCE.md section 3).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from rlinf_bench.checkpoints.keys import is_temp_name
from rlinf_bench.checkpoints.layouts import LAYOUTS, layout_of_names, matches
from rlinf_bench.checkpoints.listing import ObjectLister
from rlinf_bench.contracts.checkpoint import CheckpointLayout

Clock = Callable[[], datetime]
_SHARD = re.compile(r"__(\d+)_0\.distcp")


def utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass
class Completeness:
    """The verdict on one checkpoint, with what is missing so that a deferral or a DLQ reason says why."""

    root_uri: str
    layout: CheckpointLayout | None
    files: int
    total_bytes: int
    missing: list[str] = field(default_factory=list)
    empty: list[str] = field(default_factory=list)
    shard_gaps: list[int] = field(default_factory=list)
    newest: datetime | None = None
    quiet_remaining_s: float = 0.0

    @property
    def files_ok(self) -> bool:
        return self.layout is not None and not (self.missing or self.empty or self.shard_gaps)

    @property
    def complete(self) -> bool:
        return self.files_ok and self.quiet_remaining_s <= 0

    @property
    def reason(self) -> str:
        """One line: why the checkpoint is (not) complete."""
        if self.layout is None:
            return f"no RLinf checkpoint files under {self.root_uri} ({self.files} objects)"
        parts = []
        if self.missing:
            parts.append("missing " + ", ".join(self.missing))
        if self.empty:
            parts.append("empty " + ", ".join(self.empty[:5]))
        if self.shard_gaps:
            parts.append("DCP shard ranks missing " + ", ".join(str(r) for r in self.shard_gaps[:10]))
        if not parts and self.quiet_remaining_s > 0:
            parts.append(f"last change {self._age_text()}; waiting {self.quiet_remaining_s:.0f}s more for quiet")
        if not parts:
            return f"complete ({self.layout.value}, {self.files} files, {self.total_bytes} bytes)"
        return f"{self.layout.value} checkpoint {self.root_uri} incomplete: " + "; ".join(parts)

    def _age_text(self) -> str:
        return self.newest.isoformat() if self.newest else "unknown"


def _shard_gaps(names: Iterable[str], shard_dir: str) -> list[int]:
    """Ranks missing between 0 and the highest rank seen: a shard FSx has not exported yet."""
    ranks = set()
    for name in names:
        head, _, base = name.rpartition("/")
        m = _SHARD.fullmatch(base)
        if head == shard_dir and m:
            ranks.add(int(m.group(1)))
    if not ranks:
        return []
    return sorted(set(range(max(ranks) + 1)) - ranks)


def check_completeness(
    root_uri: str,
    lister: ObjectLister,
    *,
    quiet_period_s: float,
    layout: CheckpointLayout | None = None,
    clock: Clock = utc_now,
) -> Completeness:
    """List ``root_uri`` and judge it against its layout (detected from the listing unless given)."""
    listed = lister.list(root_uri)
    # Directory markers and temp files are not part of the checkpoint, but a temp file still changing
    # means a writer is busy, so every object counts toward the quiet period.
    newest = max((o.last_modified for o in listed), default=None)
    real = [o for o in listed if not o.relative.endswith("/") and not is_temp_name(o.relative)]
    names = [o.relative for o in real]
    chosen = layout or layout_of_names(names)
    verdict = Completeness(
        root_uri=root_uri,
        layout=chosen,
        files=len(real),
        total_bytes=sum(o.size for o in real),
        newest=newest,
    )
    if chosen is None:
        return verdict
    spec = LAYOUTS[chosen]
    for pattern in spec.required:
        hits = [o for o in real if matches(o.relative, pattern)]
        if not hits:
            verdict.missing.append(pattern)
        verdict.empty.extend(o.relative for o in hits if o.size == 0)
    if chosen is CheckpointLayout.FSDP_DCP:
        verdict.shard_gaps = _shard_gaps(names, "actor/dcp_checkpoint")
    elif chosen is CheckpointLayout.V01:
        verdict.shard_gaps = _shard_gaps(names, "actor")
    if newest is not None:
        age = (clock() - newest).total_seconds()
        verdict.quiet_remaining_s = max(0.0, quiet_period_s - age)
    return verdict
