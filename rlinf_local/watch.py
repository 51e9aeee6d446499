"""``rlinf-bench watch ROOT``: the embedded default for one workstation that trains with RLinf.

Files under ROOT are mirrored into the local bucket as they appear or change (what FSx's export does on
AWS); the router then applies its own rules (a layout's last file, every required file present, the
quiet period) and starts one execution per complete checkpoint, which runs to the end before the next
scan. ``DIR/state.json`` records every execution: a checkpoint that finished (succeeded or failed) is not
mirrored again after a restart, so it is not evaluated twice; an interrupted one is, and resumes from
its finished runs (DIR/results).
"""

from __future__ import annotations

import os
import re
import stat
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

import yaml
from botocore.exceptions import BotoCoreError, ClientError

from rlinf_bench.checkpoints.keys import is_temp_name
from rlinf_bench.errors import ConfigError
from rlinf_bench.reporting.text_safety import plain
from rlinf_local.embedded import Embedded
from rlinf_local.pipeline_command import PipelineOutcome, StateFile, follow, write_report
from rlinf_local.policy_check import check_matrix_policy, rerun_command
from rlinf_local.runs import config_text_for, print_adaptations, print_outcome

__all__ = ["Mirror", "in_arrival_order", "newest_checkpoint", "watch"]


def in_arrival_order(paths: Iterable[Path]) -> list[tuple[Path, os.stat_result]]:
    """The regular files among ``paths``, oldest first, as FSx's export would deliver them, with each one's stat.

    Path order would start a burst at ``global_step_100`` before ``global_step_25``, and the backlog's "first"
    is the first to arrive. Ties (a coarse clock) fall back to the path, numbers compared as numbers."""
    found: list[tuple[Path, os.stat_result]] = []
    for path in paths:
        try:
            st = path.stat()
        except FileNotFoundError:  # renamed away between listing and stat (a writer's temp file)
            continue
        if stat.S_ISREG(st.st_mode):
            found.append((path, st))
    return sorted(found, key=lambda f: (f[1].st_mtime_ns, _natural(f[0])))


def _natural(path: Path) -> list[tuple[int, str]]:
    return [(int(c), "") if c.isdigit() else (-1, c) for c in re.split(r"(\d+)", path.as_posix())]


class Mirror:
    """Uploads new or changed checkpoint files under ROOT; skips checkpoints already evaluated."""

    def __init__(self, root: Path, emb: Embedded, state: StateFile) -> None:
        self.root = root.resolve()
        self.emb = emb
        self.state = state
        self.seen: dict[Path, tuple[int, int]] = {}

    def checkpoint_uri(self, path: Path) -> str | None:
        rel = path.relative_to(self.root).parts
        if "checkpoints" not in rel:
            return None
        i = rel.index("checkpoints")
        if i < 1 or len(rel) < i + 4 or not rel[i + 1].startswith("global_step_") or rel[i + 2] != "actor":
            return None
        return f"s3://{self.emb.stack.bucket}/" + "/".join(rel[: i + 2])

    def sync(self) -> int:
        """Upload what changed since the last scan; returns how many files went up."""
        s3 = self.emb.aws.client("s3")
        sent = 0
        for path, st in in_arrival_order(self.root.rglob("*")):
            uri = self.checkpoint_uri(path)
            if uri is None or is_temp_name(path.name) or self.state.finished(uri):
                continue
            sig = (st.st_size, st.st_mtime_ns)
            if self.seen.get(path) == sig:
                continue
            key = path.relative_to(self.root).as_posix()
            s3.upload_file(str(path), self.emb.stack.bucket, key)
            self.seen[path] = sig
            sent += 1
        return sent


def newest_checkpoint(root: Path) -> list[Path]:
    """The complete checkpoint under ``root`` with the highest step, as a list (empty when there is none yet):
    a half-written one is left to the router's completeness rules, as every other file under ROOT."""
    from rlinf_bench.checkpoints.discovery import discover_checkpoints
    from rlinf_bench.errors import CheckpointError
    from rlinf_local.inputs import local_checkpoint

    found = discover_checkpoints(str(root.resolve()))
    for ref in sorted(found, key=lambda r: r.global_step, reverse=True):
        try:
            return [local_checkpoint(ref.uri).path]
        except CheckpointError:
            continue
    return []


def with_backlog(text: str, backlog: dict[str, object] | None) -> str:
    """The config ``text`` with ``--max-running/--backlog`` merged into its ``backlog:`` block (checked)."""
    if not backlog:
        return text
    from rlinf_bench.intake.config import parse_config_text

    doc = yaml.safe_load(text) or {}
    doc["backlog"] = {**(doc.get("backlog") or {}), **backlog}
    merged = yaml.safe_dump(doc, sort_keys=False)
    parse_config_text(merged, source="watch --max-running/--backlog")  # a bad value fails here, naming the flag
    return merged


def release_ended(emb: Embedded, ended: list[str]) -> None:
    """Tell the backlog each execution in ``ended`` ended; one it could not take yet (a throttled store or
    start) stays in ``ended`` and is told again on the next scan, as Lambda retries the end event on AWS:
    an end event always frees its slot and releases, however late."""
    for arn in list(ended):
        try:
            released = emb.execution_ended(arn)
        except (ClientError, BotoCoreError) as exc:
            emb.echo(plain(f"backlog: the end of {arn.rsplit(':', 1)[-1]} is retried on the next scan ({exc})"))
            continue
        ended.remove(arn)
        for uri in released:
            emb.echo(plain(f"backlog: released {uri}"))


def _quiet_period(config_text: str, given: float | None) -> float:
    if given is not None:
        return given
    doc = yaml.safe_load(config_text) or {}
    return float(doc.get("quiet_period_s", 60.0)) if isinstance(doc, dict) else 60.0


def watch(
    root: Path,
    *,
    out: Path,
    config: Path | None = None,
    tracking_uri: str = "",
    max_parallel: int = 2,
    quiet_period_s: float | None = None,
    interval_s: float = 2.0,
    max_checkpoints: int = 0,
    progress: bool = True,
    budget: dict[str, int] | None = None,
    backlog: dict[str, object] | None = None,
    policy: str | None = None,
    argv: Sequence[str] = (),
    verbose: bool = False,
) -> PipelineOutcome:
    """Watch ``root`` until Ctrl-C (or ``max_checkpoints`` evaluations); every complete checkpoint runs once.
    ``budget``: the ``--runs/--trials/--max-steps`` given, over the config's matrix; ``backlog``: the
    ``--max-running/--backlog`` given, over the config's ``backlog:`` block; ``policy``: ``--policy``, checked
    before anything starts against the newest checkpoint already under ``root`` (the spec alone when none is);
    ``verbose``: list the adaptations."""
    if not root.is_dir():
        raise ConfigError(f"watch: {root} is not a directory; give the RLinf log root (…/<experiment>/checkpoints/…)")
    text = with_backlog(config_text_for(config, out.resolve(), budget, policy, command="rlinf-bench watch"), backlog)
    check_matrix_policy(text, newest_checkpoint(root), argv=argv)
    quiet = _quiet_period(text, quiet_period_s)
    with Embedded(
        out,
        rerun_command=rerun_command(argv),
        config_text=text,
        tracking_uri=tracking_uri,
        quiet_period_s=quiet,
        max_parallel=max_parallel,
        progress=progress,
    ) as emb:
        print_adaptations(emb, verbose=verbose)
        emb.echo(f"watching {root.resolve()} (quiet period {quiet:g} s); Ctrl-C stops")
        state = StateFile(emb.out)
        mirror = Mirror(root, emb, state)
        outcome = PipelineOutcome(tracking_uri=emb.tracking_uri, out=str(emb.out))
        known = set(emb.executions())
        ended: list[str] = []  # executions whose end the backlog has not taken yet
        while not max_checkpoints or len(outcome.executions) < max_checkpoints:
            mirror.sync()
            emb.route()
            emb.save_backlog()
            for name, arn in sorted(emb.executions().items()):
                if name not in known:
                    known.add(name)
                    outcome.executions.append(follow(emb, name, arn, state))
                    ended.append(arn)
                    release_ended(emb, ended)  # the backlog policy: a held checkpoint starts now
                    emb.save_backlog()
                    report = write_report(
                        emb.out, emb.tracking_uri, s3_client=emb.aws.client("s3"), results_prefix=emb.results_prefix
                    )
                    outcome.report = str(report) if report else outcome.report
            release_ended(emb, ended)
            time.sleep(interval_s)
        outcome.email = [str(p) for p in emb.email.written]
        outcome.slack = [str(p) for p in emb.slack.written]
    print_outcome(outcome)
    return outcome
