"""Turn an object key (or a local path) into the checkpoint it belongs to.

A checkpoint is many objects; every one of them maps to the same root prefix
(``.../<experiment>/checkpoints/global_step_<N>``), which is what the rest of the intake keys on.
Keys are untrusted input (anyone who can write to the bucket can craft one), so they are checked
before any of their parts reaches a listing prefix, an execution name or a log line.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from fnmatch import fnmatchcase
from functools import lru_cache

from rlinf_bench.checkpoints.layouts import layout_of_last_file
from rlinf_bench.contracts.checkpoint import CheckpointLayout, CheckpointRef
from rlinf_bench.document_store import S3Location, is_s3, parse_s3
from rlinf_bench.errors import ConfigError, InvalidEventError

#: RLinf writes ``<log_path>/<experiment>/checkpoints/global_step_<N>/actor/...`` (REFERENCE.md section 3).
#: Named groups: ``root`` (the checkpoint prefix), ``experiment``, ``step`` and ``rel`` (path under root).
DEFAULT_ROOT_PATTERN = (
    r"(?P<root>(?:[^/]+/)*?(?P<experiment>[^/]+)/checkpoints/global_step_(?P<step>[^/]*))/(?P<rel>actor/.+)"
)
REQUIRED_GROUPS = ("root", "experiment", "step", "rel")

#: Names editors, uploaders and writers use for files that are not final yet.
TEMP_FILE_PATTERNS = (
    "*.tmp",
    "*.temp",
    "*.part",
    "*.partial",
    "*.incomplete",
    "*.swp",
    "*~",
    ".nfs*",
    ".~*",
    "*.tmp.*",
)

MAX_KEY_BYTES = 1024  # S3's own limit on a key's UTF-8 encoding; longer input is certainly not a key
MAX_STEP_DIGITS = 12


@dataclass(frozen=True)
class KeyMatch:
    """An object key that belongs to a checkpoint."""

    bucket: str
    key: str
    root_prefix: str  # e.g. runs/exp1/checkpoints/global_step_100 (no trailing slash)
    relative: str  # the key below the root, e.g. actor/model_state_dict/full_weights.pt
    experiment: str
    global_step: int
    #: set when this key is a layout's last-written file: only then can the checkpoint be complete
    trigger_layout: CheckpointLayout | None

    @property
    def is_trigger(self) -> bool:
        return self.trigger_layout is not None

    @property
    def root_uri(self) -> str:
        return S3Location(self.bucket, self.root_prefix).uri if self.bucket else self.root_prefix

    def checkpoint_ref(self, layout: CheckpointLayout | None = None) -> CheckpointRef:
        """The CheckpointRef of this key's checkpoint (layout: the one found, else the trigger's, else unknown)."""
        chosen = layout or self.trigger_layout
        return CheckpointRef(uri=self.root_uri, experiment=self.experiment, global_step=self.global_step, layout=chosen)


@dataclass(frozen=True)
class KeyIgnored:
    """A key that is fine but not a checkpoint file: a directory marker, a temp file, a key outside the roots."""

    key: str
    reason: str


@lru_cache(maxsize=32)
def compile_root_patterns(patterns: tuple[str, ...]) -> tuple[re.Pattern[str], ...]:
    """Compile configured root patterns, refusing ones that lack a required named group."""
    compiled = []
    for text in patterns:
        try:
            pattern = re.compile(text)
        except re.error as exc:
            raise ConfigError(f"root pattern {text!r} is not a valid regular expression: {exc}") from exc
        missing = [g for g in REQUIRED_GROUPS if g not in pattern.groupindex]
        if missing:
            raise ConfigError(
                f"root pattern {text!r} lacks the named group(s) {', '.join(missing)}; "
                f"write them as (?P<name>...), e.g. {DEFAULT_ROOT_PATTERN}"
            )
        compiled.append(pattern)
    return tuple(compiled)


def check_key_text(key: str) -> None:
    """Refuse keys that are unsafe or cannot be RLinf output: raise InvalidEventError naming the problem."""
    if not key:
        raise InvalidEventError("empty object key")
    size = len(key.encode("utf-8", "surrogatepass"))
    if size > MAX_KEY_BYTES:
        raise InvalidEventError(f"object key is {size} bytes long in UTF-8 (S3 allows {MAX_KEY_BYTES})")
    odd = sorted({c for c in key if c == "\\" or (unicodedata.category(c)[0] in "CZ" and c != " ")})
    if odd:
        shown = ", ".join(repr(c) for c in odd)
        raise InvalidEventError(f"object key {key!r} contains odd characters ({shown})")
    if key.startswith("/"):
        raise InvalidEventError(f"object key {key!r} starts with '/': S3 keys from RLinf exports are relative")
    segments = key.split("/")
    if any(seg in (".", "..") for seg in segments):
        raise InvalidEventError(f"object key {key!r} contains a '.' or '..' path segment (path traversal)")
    if any(seg == "" for seg in segments[:-1]):
        raise InvalidEventError(f"object key {key!r} contains an empty path segment ('//')")


def is_temp_name(name: str) -> bool:
    """Whether a file name (last path segment) is a temporary/partial file that is not part of a checkpoint."""
    base = name.rsplit("/", 1)[-1]
    return any(fnmatchcase(base, pattern) for pattern in TEMP_FILE_PATTERNS)


def parse_key(
    key: str, *, bucket: str = "", patterns: tuple[str, ...] = (DEFAULT_ROOT_PATTERN,)
) -> KeyMatch | KeyIgnored:
    """Map an object key to its checkpoint, or say why the key is ignored.

    Raises InvalidEventError for keys that must be dead-lettered: odd characters, ``..`` segments,
    or a ``global_step_`` that is not a number.
    """
    check_key_text(key)
    if key.endswith("/"):
        return KeyIgnored(key, "directory marker")
    if is_temp_name(key):
        return KeyIgnored(key, "temporary file")
    for pattern in compile_root_patterns(patterns):
        m = pattern.fullmatch(key)
        if m is None:
            continue
        step_text = m.group("step")
        if not step_text.isdigit() or len(step_text) > MAX_STEP_DIGITS or not step_text.isascii():
            raise InvalidEventError(
                f"object key {key!r}: global_step {step_text!r} is not a number; RLinf names checkpoints "
                "global_step_<N> with N an integer"
            )
        relative = m.group("rel")
        return KeyMatch(
            bucket=bucket,
            key=key,
            root_prefix=m.group("root").rstrip("/"),
            relative=relative,
            experiment=m.group("experiment"),
            global_step=int(step_text),
            trigger_layout=layout_of_last_file(relative),
        )
    return KeyIgnored(key, "outside the configured checkpoint roots")


def split_uri(uri: str) -> tuple[str, str]:
    """``s3://bucket/prefix`` -> (bucket, prefix); a local path -> ("", path). Trailing slashes are dropped."""
    if is_s3(uri):
        loc = parse_s3(uri, what="checkpoint location")
        return loc.bucket, loc.key.rstrip("/")
    if "://" in uri:
        raise ConfigError(f"{uri!r}: only s3:// URIs and local paths are supported")
    return "", uri.rstrip("/") or "/"


def ref_from_root_uri(uri: str, *, patterns: tuple[str, ...] = (DEFAULT_ROOT_PATTERN,)) -> CheckpointRef:
    """The CheckpointRef of a checkpoint root given by the user (``.../checkpoints/global_step_<N>``).

    The layout is left unknown; callers tell it from a listing
    (:func:`rlinf_bench.checkpoints.layouts.layout_of_names`).
    """
    bucket, path = split_uri(uri)
    probe = f"{path}/actor/probe"
    # Local paths may be absolute; the key rules are for object keys, so check the relative form.
    try:
        parsed = parse_key(probe.lstrip("/"), bucket=bucket, patterns=patterns)
    except InvalidEventError as exc:
        raise ConfigError(f"{uri!r} is not a usable checkpoint location: {exc}") from exc
    if not isinstance(parsed, KeyMatch) or parsed.root_prefix != path.lstrip("/"):
        raise ConfigError(
            f"{uri!r} is not a checkpoint root: point at a .../<experiment>/checkpoints/global_step_<N> directory"
        )
    root = S3Location(bucket, parsed.root_prefix).uri if bucket else path
    return CheckpointRef(uri=root, experiment=parsed.experiment, global_step=parsed.global_step)


#: The experiment of a checkpoint outside RLinf's folder convention (a weights file, a folder elsewhere).
ADHOC_EXPERIMENT = "adhoc"


def ref_for_location(uri: str, *, patterns: tuple[str, ...] = (DEFAULT_ROOT_PATTERN,)) -> CheckpointRef:
    """The CheckpointRef of a checkpoint a user names directly (``evaluate CHECKPOINT``): experiment and step
    from RLinf's ``<experiment>/checkpoints/global_step_<N>`` when the location follows it (the same rule as
    :func:`ref_from_root_uri`), else experiment ``adhoc`` at step 0. The layout is left unknown."""
    location = uri.removeprefix("file://")
    try:
        return ref_from_root_uri(location, patterns=patterns)
    except ConfigError:
        return CheckpointRef(uri=location, experiment=ADHOC_EXPERIMENT, global_step=0)
