"""Bring stored documents of earlier shapes up to today's, once, in place (``rlinf-bench migrate-results ROOT``).

Readers take one shape, the current one. A results folder (or prefix) written by an earlier version is
rewritten by this migration instead of every reader guessing at old shapes for ever. It is idempotent: a
document already in today's shape is not written again, so running it twice changes nothing the second time.
A migrated document is validated against its contract before it replaces the old one (never a half-read one).

The shapes it rewrites:

- **EvalRun with ``trials``**: the trial count's earlier name becomes ``trials_per_task``.
- **RunResult without ``protocol``** (a run that finished episodes): results written before protocols were
  recorded ran OpenVLA-OFT's settings with their own max and settle steps. A failed run that never resolved
  its settings records none, today too, and is left so.
- **RunProtocol without ``name``** (a RunResult's ``protocol``, a SuiteReport's): runs recorded before the
  profile's name was kept ran OpenVLA-OFT's settings, so the name is ``oft``.
- **SuiteReport without ``protocol``**: reports written before protocols were recorded ran OpenVLA-OFT's
  defaults: the catalogue's max steps for the suite and 10 settle steps.
- **SuiteReport without ``trials_per_task``**: the initial states each task has outcomes for (the most of any
  task), else the episodes per task per completed run.
- **SuiteReport without per-run rows** (per-state counts only, or a complete suite with no states): the rows are
  rebuilt by the aggregate from the suite's own RunResults (``runs[].source``); a source that cannot be read
  leaves the document as it was, and the migration says which file it needs.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from rlinf_bench.contracts.protocol_profiles import RunProtocol
from rlinf_bench.contracts.report import CheckpointReport
from rlinf_bench.contracts.request import EvalRun
from rlinf_bench.contracts.results import RunResult
from rlinf_bench.contracts.versioned import Contract
from rlinf_bench.document_store import Storage, is_s3
from rlinf_bench.errors import ContractError, RlinfBenchError
from rlinf_bench.suites import DEFAULT_SETTLE_STEPS, SUITES

__all__ = [
    "Migrated",
    "MigratedFile",
    "document_kind",
    "migrate_document",
    "migrate_stored",
    "migrate_tree",
    "run_reader",
]

#: The profile of runs recorded before profiles were named: they ran OpenVLA-OFT's episode settings.
UNNAMED_PROTOCOL = "oft"
#: Reads the RunResult a report names (``runs[].source``); raises when it cannot.
ReadRun = Callable[[str], RunResult]


@dataclass
class Migrated:
    """A document as it is now (``data``) and what was changed in it (empty: it was current already)."""

    data: dict[str, Any]
    changes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class MigratedFile:
    """One stored document the migration looked at: its kind, what changed, or why it was left as it was."""

    uri: str
    kind: str
    changes: tuple[str, ...] = ()
    error: str = ""

    @property
    def migrated(self) -> bool:
        return bool(self.changes) and not self.error


def document_kind(data: Any) -> type[Contract] | None:
    """The contract a parsed JSON document is of, among those this migration rewrites (None: another)."""
    if not isinstance(data, dict):
        return None
    if isinstance(data.get("suites"), list) and "complete" in data and "success_rate" in data:
        return CheckpointReport
    if "run_index" in data and "suite" in data:
        return RunResult if "status" in data else EvalRun
    return None


def _named_protocol(protocol: Any, where: str, changes: list[str]) -> None:
    if isinstance(protocol, dict) and "name" not in protocol:
        protocol["name"] = UNNAMED_PROTOCOL
        changes.append(f"{where}.protocol.name = {UNNAMED_PROTOCOL!r} (recorded before the profile's name was kept)")


def _run_protocol(result: dict[str, Any], changes: list[str]) -> None:
    if result.get("protocol") is not None:
        _named_protocol(result["protocol"], "", changes)
    elif result.get("status") != "failed" and "max_steps" in result and "settle_steps" in result:
        protocol = RunProtocol(
            name=UNNAMED_PROTOCOL, max_steps=result["max_steps"], settle_steps=result["settle_steps"]
        )
        result["protocol"] = protocol.model_dump(mode="json")
        changes.append("protocol = OpenVLA-OFT's settings with the run's max and settle steps")


def _eval_run(data: dict[str, Any], changes: list[str]) -> None:
    if "trials" in data:
        trials = data.pop("trials")
        data.setdefault("trials_per_task", trials)
        changes.append("trials -> trials_per_task")


def _suite_protocol(suite: dict[str, Any], where: str, changes: list[str]) -> None:
    if suite.get("protocol") is not None:
        _named_protocol(suite["protocol"], where, changes)
        return
    spec = SUITES.find(str(suite.get("suite", "")))
    if spec is None:
        raise ContractError(
            f"{where} ({suite.get('suite')!r}) records no protocol and the catalogue does not know the suite, so its "
            "max steps are unknown: aggregate its runs again (rlinf-bench compare --runs ...)"
        )
    protocol = RunProtocol(name=UNNAMED_PROTOCOL, max_steps=spec.max_steps, settle_steps=DEFAULT_SETTLE_STEPS)
    suite["protocol"] = protocol.model_dump(mode="json")
    changes.append(f"{where}.protocol = OpenVLA-OFT's defaults (max_steps {spec.max_steps}, settle 10)")


def _suite_trials(suite: dict[str, Any], where: str, changes: list[str]) -> None:
    if suite.get("trials_per_task") is not None:
        return
    per_task = Counter(s.get("task_id") for s in suite.get("states") or [])
    completed = int(suite.get("runs_completed") or 0)
    tasks = suite.get("tasks") or []
    if per_task:
        trials = max(per_task.values())
    elif completed and tasks:
        trials = max(int(t.get("episodes", 0)) for t in tasks) // completed
    else:
        return  # no run completed: nothing says how many trials were asked for (the field stays unknown)
    suite["trials_per_task"] = trials
    changes.append(f"{where}.trials_per_task = {trials}")


def _needs_rows(suite: dict[str, Any]) -> bool:
    states = suite.get("states") or []
    if not states:
        return bool(suite.get("complete")) and int(suite.get("episodes") or 0) > 0
    return any(not s.get("episodes") and s.get("trials") for s in states)


def _suite_rows(suite: dict[str, Any], where: str, read_run: ReadRun | None, changes: list[str]) -> None:
    if not _needs_rows(suite):
        return
    from rlinf_bench.stats.aggregate import SourcedRun, aggregate_suite

    sources = [str(r.get("source") or "") for r in suite.get("runs") or [] if r.get("status") == "complete"]
    if read_run is None or not sources or not all(sources):
        raise ContractError(
            f"{where} ({suite.get('suite')!r}) holds per-state counts without per-run rows and names no RunResult "
            "to rebuild them from: aggregate its runs again (rlinf-bench compare --runs ...)"
        )
    runs = [SourcedRun(src, read_run(src)) for src in sources]
    fresh = aggregate_suite(runs, int(suite.get("runs_expected") or len(runs)))
    suite["states"] = [s.model_dump(mode="json") for s in fresh.states]
    changes.append(f"{where}.states rebuilt with per-run rows from {len(runs)} RunResult(s)")


def _report(data: dict[str, Any], read_run: ReadRun | None, changes: list[str]) -> None:
    for i, suite in enumerate(data.get("suites") or []):
        if not isinstance(suite, dict):
            continue
        where = f"suites[{i}]"
        _suite_protocol(suite, where, changes)
        _suite_trials(suite, where, changes)
        _suite_rows(suite, where, read_run, changes)


def migrate_document(data: dict[str, Any], *, read_run: ReadRun | None = None) -> Migrated:
    """``data`` (a parsed document, not modified) in today's shape, with what changed; ``read_run`` reads a
    report's RunResults where its per-run rows must be rebuilt. ContractError: it cannot be migrated, and why."""
    out: dict[str, Any] = json.loads(json.dumps(data))  # a deep copy of plain JSON
    changes: list[str] = []
    kind = document_kind(out)
    if kind is EvalRun:
        _eval_run(out, changes)
    elif kind is RunResult:
        _run_protocol(out, changes)
    elif kind is CheckpointReport:
        _report(out, read_run, changes)
    changes = [c.lstrip(".") for c in changes]
    return Migrated(out, changes)


def _sibling(report_uri: str, source: str) -> str:
    """``source`` as written, or (a bare relative name) beside the report that names it."""
    if is_s3(source) or PurePosixPath(source).is_absolute():
        return source
    parent = report_uri.rsplit("/", 1)[0] if "/" in report_uri else "."
    return f"{parent}/{source}"


def migrate_stored(
    text: bytes, *, where: str, read_run: ReadRun | None, write: Callable[[str], object] | None
) -> MigratedFile | None:
    """Migrate one stored document (``text``, read from ``where``): None when it is not a document this migration
    rewrites; else what changed, written back through ``write`` (None: only said) once it reads as today's
    contract, or why it could not be migrated (then nothing is written)."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return None  # not a JSON document of ours (a partial upload, another tool's file): not ours to rewrite
    kind = document_kind(data)
    if kind is None:
        return None
    try:
        result = migrate_document(data, read_run=read_run)
        if result.changes:
            current = kind.from_dict(result.data, source=f"{where} (migrated)")  # refuse to write what would not read
            if write is not None:
                write(current.to_json())
    except RlinfBenchError as exc:
        return MigratedFile(where, kind.__name__, error=str(exc))
    return MigratedFile(where, kind.__name__, tuple(result.changes))


def run_reader(storage: Storage, beside: str | None = None) -> ReadRun:
    """Reads the RunResults a report names from ``storage``: where the report says, else (a relative name)
    beside the report at ``beside``."""

    def read_run(source: str) -> RunResult:
        candidates = (source, _sibling(beside, source)) if beside else (source,)
        for candidate in dict.fromkeys(candidates):
            if storage.exists(candidate):
                return RunResult.read(candidate, storage=storage)
        raise ContractError(f"the report names RunResult {source!r}, which is not there (nor beside the report)")

    return read_run


def _migrate_file(uri: str, storage: Storage, *, dry_run: bool) -> MigratedFile | None:
    def write(text: str) -> object:
        return storage.write_text(uri, text, content_type="application/json")

    return migrate_stored(
        storage.read_bytes(uri), where=uri, read_run=run_reader(storage, uri), write=None if dry_run else write
    )


def migrate_tree(root: str, storage: Storage, *, dry_run: bool = False) -> list[MigratedFile]:
    """Every stored document under ``root`` (a folder or ``s3://bucket/prefix``) that is a RunResult, an EvalRun or
    a CheckpointReport, each rewritten in today's shape where it was not (``dry_run``: only said)."""
    looked = (_migrate_file(uri, storage, dry_run=dry_run) for uri in storage.list_keys(root, suffix=".json"))
    return [f for f in looked if f is not None]
