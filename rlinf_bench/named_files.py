"""Files named by data are data, never paths: the one reader of a file that a result, probe or request names.

A RunResult's ``video`` field is written by an eval Job, and anything that can write to the results prefix
(a user's ``python:`` policy inside that Job) can write one. The report site, the embedded default's report
folder and the MLflow publisher then read the file it names, with their own credentials. So every such
read goes through :func:`read_named_file`, which reads a file only when all of these hold:

- **inside the run's own folder**: the name lies below :class:`RunFolder` ``folder`` (the folder of the
  run's RunResult), itself inside ``anchor`` (the results root, when the reader knows it). Anything else is
  refused before any byte is read: an absolute path elsewhere (``/proc/self/environ``), ``~``, ``.``, ``..``
  or empty segments, another bucket or prefix, a scheme other than the folder's own (``s3://`` for S3
  results, a plain path for local ones);
- **a plain name below that folder**: each segment under the folder is made of the portable file name
  characters ``A-Z a-z 0-9 . _ -`` only, so no percent-escape, backslash, control or format character, or
  look-alike Unicode dot or slash can mean something else to another reader (a URL decoder, NFKC);
- **no link**: locally, every folder below the anchor and the file itself are opened one by one without
  following a symbolic link (``O_NOFOLLOW`` relative to the parent's descriptor), and the file must be a
  regular file (not a FIFO or a device). The anchor itself is resolved once: a results root may sit under a
  mount that is a link (``/home -> /mnt/home``), nothing below it may;
- **an allowed media type, by content**: the first bytes must be an MP4 ``ftyp`` box or a GIF signature
  (``GIF87a``/``GIF89a``), whatever the name's suffix says;
- **bounded**: at most ``max_bytes`` (:data:`NAMED_FILE_MAX_BYTES` by default); a larger file is refused
  without being read past the bound (S3 is asked for a byte range).

A refusal raises :class:`~rlinf_bench.errors.NamedFileRefusedError` whose message says why, with the name
shown through :func:`~rlinf_bench.reporting.text_safety.plain` and cut; readers record it (the task page says
why it shows no video) and go on: a refused file never costs the report.
"""

from __future__ import annotations

import os
import posixpath
import re
import stat
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from rlinf_bench.document_store import is_s3, parse_s3
from rlinf_bench.errors import NamedFileRefusedError, StorageError, StoredObjectMissingError
from rlinf_bench.ports import DocumentStore
from rlinf_bench.reporting.text_safety import plain

__all__ = [
    "NAMED_FILE_MAX_BYTES",
    "NAME_MAX_CHARS",
    "VIDEO_TYPES",
    "MediaType",
    "NamedFile",
    "RunFolder",
    "is_portable_path",
    "media_type_of",
    "read_named_file",
]

#: The most bytes one named file may hold: an episode video of LIBERO-90's 400 steps at 256 px is a few MB;
#: a reader (a Lambda with 512 MB of /tmp) holds one at a time.
NAMED_FILE_MAX_BYTES = 64 * 1024 * 1024
#: The longest name looked at; a longer one is refused unread (a result's fields are otherwise unbounded).
NAME_MAX_CHARS = 4096
#: How much of a refused name a reason shows.
_SHOWN_CHARS = 200
# POSIX's portable file name character set: what the eval runner's names (task00_init03.mp4, run0.videos) use.
_PORTABLE = re.compile(r"[A-Za-z0-9._-]+")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
# An MP4 (ISO base media) file starts with its ftyp box: 4-byte size, "ftyp", a 4-character major brand.
_FTYP_MIN, _FTYP_MAX = 12, 4096
_BRAND = re.compile(rb"[0-9A-Za-z ]{4}")
_READ_CHUNK = 1 << 20


class MediaType(StrEnum):
    """A media type a named file may have, as its content shows it."""

    MP4 = "video/mp4"
    GIF = "image/gif"

    @property
    def suffix(self) -> str:
        """The file suffix a copy gets (from the content, never from the name it came under)."""
        return {MediaType.MP4: ".mp4", MediaType.GIF: ".gif"}[self]


#: Episode videos: MP4 (the runner's H.264), GIF (videos recorded before MP4).
VIDEO_TYPES = frozenset({MediaType.MP4, MediaType.GIF})


def media_type_of(data: bytes) -> MediaType | None:
    """The media type ``data`` starts as (an MP4 ``ftyp`` box, a GIF signature), or None."""
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return MediaType.GIF
    if len(data) >= 12 and data[4:8] == b"ftyp":
        size = int.from_bytes(data[:4], "big")
        if _FTYP_MIN <= size <= _FTYP_MAX and _BRAND.fullmatch(data[8:12]):
            return MediaType.MP4
    return None


def is_portable_path(text: str) -> bool:
    """Whether ``text`` is one or more ``/``-separated segments of ``A-Z a-z 0-9 . _ -``, none ``.`` or ``..``:
    safe as a folder or file name anywhere (a suite name ``robotwin/lift_pot`` is; ``../x`` is not)."""
    return bool(text) and all(_PORTABLE.fullmatch(s) and s not in (".", "..") for s in text.split("/"))


def _shown(name: str) -> str:
    text = plain(name[: _SHOWN_CHARS * 2])
    return repr(text if len(text) <= _SHOWN_CHARS else text[:_SHOWN_CHARS] + "…")


def _refuse(name: str, why: str) -> NamedFileRefusedError:
    return NamedFileRefusedError(f"{_shown(name)} not read: {why}")


def _clean_segments(path: str, *, what: str) -> list[str]:
    """``path``'s segments; refused when one is empty, ``.`` or ``..`` (a leading ``/`` is allowed)."""
    body = path.removeprefix("/") if not is_s3(path) else parse_s3(path).key
    segments = body.split("/")
    odd = next((s for s in segments if s in ("", ".", "..")), None)
    if odd is not None:
        kind = "an empty segment" if odd == "" else f"a {odd!r} segment"
        raise NamedFileRefusedError(f"{what} {_shown(path)} holds {kind}")
    return segments


@dataclass(frozen=True)
class RunFolder:
    """Where a run's named files may be: ``folder`` (the folder of its RunResult), read from ``anchor`` (the
    results root the reader trusts; the folder itself when it knows none) downwards without following links."""

    folder: str
    anchor: str

    @classmethod
    def of(cls, folder: str, anchor: str | None = None) -> RunFolder:
        """The run's folder (``anchor`` defaults to it); refused when it is not inside ``anchor``.

        A local folder is made absolute first (it comes from the path a user gave, ``../results``); an S3
        folder must be clean as it is (S3 resolves no ``..``)."""
        if is_s3(folder):
            _clean_segments(folder, what="run folder")
        folder, base = _normal(folder), _normal(anchor if anchor is not None else folder)
        if folder != base and not folder.startswith(base.rstrip("/") + "/"):
            raise NamedFileRefusedError(f"run folder {_shown(folder)} is outside the results root {_shown(base)}")
        return cls(folder, base)

    @property
    def is_s3(self) -> bool:
        return is_s3(self.folder)

    def below_anchor(self) -> list[str]:
        """The folder's segments under the anchor ([] when they are the same)."""
        rest = self.folder[len(self.anchor) :].strip("/")
        return rest.split("/") if rest else []


def _normal(path: str) -> str:
    """An S3 URI as it is (without a trailing slash); a local path made absolute (textually: no link resolved)."""
    if is_s3(path):
        return path.rstrip("/")
    return os.path.abspath(path) if path else path


@dataclass(frozen=True)
class NamedFile:
    """A named file that passed every check: its bytes and the media type they are."""

    name: str
    relative: str  # the part of the name below the run's folder, e.g. run0.videos/task00_init03.mp4
    data: bytes
    media_type: MediaType

    @property
    def stem(self) -> str:
        """The file name without its suffix (what a copy is named after; its suffix comes from the content)."""
        return posixpath.splitext(posixpath.basename(self.relative))[0] or "file"


def _below(name: str, where: RunFolder) -> list[str]:
    """The segments of ``name`` below the run's folder, or a refusal saying why it is not a file there."""
    if not isinstance(name, str) or not name:
        raise _refuse(str(name), "the name is empty")
    if len(name) > NAME_MAX_CHARS:
        raise _refuse(name, f"the name is {len(name)} characters long, over {NAME_MAX_CHARS}")
    if _SCHEME.match(name) and not is_s3(name):
        raise _refuse(name, "only a file inside the run's folder is read, not a URL")
    if where.is_s3 and not is_s3(name):
        raise _refuse(name, f"the run's results are in S3 ({_shown(where.folder)}); a local path is never read")
    if not where.is_s3 and is_s3(name):
        raise _refuse(name, f"the run's results are local ({_shown(where.folder)}); an s3:// name is never read")
    _clean_segments(name, what="name")
    full = _normal(name)
    folder = where.folder.rstrip("/")
    if not full.startswith(folder + "/"):
        raise _refuse(name, f"outside the run's own folder {_shown(folder)}")
    segments = full[len(folder) + 1 :].split("/")
    odd = next((s for s in segments if not _PORTABLE.fullmatch(s)), None)
    if odd is not None:
        raise _refuse(name, f"segment {_shown(odd)} holds characters other than A-Z a-z 0-9 . _ -")
    return segments


def read_named_file(
    name: str,
    where: RunFolder,
    *,
    storage: DocumentStore | None = None,
    accept: frozenset[MediaType] = VIDEO_TYPES,
    max_bytes: int = NAMED_FILE_MAX_BYTES,
) -> NamedFile:
    """The file ``name`` of the run in ``where``, after every check in the module's docstring.

    ``storage`` reads S3 names (its client); without it an ``s3://`` name is refused (no S3 access here).
    Raises NamedFileRefusedError naming why the file was not read.
    """
    segments = _below(name, where)
    if where.is_s3:
        if storage is None:
            raise _refuse(name, "this reader has no S3 access")
        data = _read_s3(name, storage, max_bytes)
    else:
        data = _read_local(name, where, segments, max_bytes)
    kind = media_type_of(data[:64])
    if kind is None or kind not in accept:
        allowed = ", ".join(sorted(t.value for t in accept))
        found = "empty" if not data else (f"a {kind.value} file" if kind else "not a recognised media file")
        raise _refuse(name, f"its content is {found}; only {allowed} (judged by content) is read")
    return NamedFile(name=name, relative="/".join(segments), data=data, media_type=kind)


def _read_s3(name: str, storage: DocumentStore, max_bytes: int) -> bytes:
    try:
        data = storage.read_bytes(name, max_bytes=max_bytes)  # a ranged read: never past the bound
    except StoredObjectMissingError as exc:
        raise _refuse(name, "it does not exist") from exc
    except StorageError as exc:
        cause = exc.__cause__
        raise _refuse(name, f"it cannot be read ({type(cause or exc).__name__})") from exc
    if len(data) > max_bytes:
        raise _refuse(name, f"it is larger than {max_bytes} bytes")
    return data


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
# O_NONBLOCK: opening a FIFO must not wait for a writer (it is refused right after, as not a regular file).
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)


def _read_local(name: str, where: RunFolder, segments: list[str], max_bytes: int) -> bytes:
    steps = [*where.below_anchor(), *segments]
    try:
        fd = os.open(os.path.realpath(where.anchor), os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise _refuse(name, f"the results folder {_shown(where.anchor)} cannot be opened ({exc.strerror})") from exc
    try:
        for i, step in enumerate(steps):
            last = i == len(steps) - 1
            nxt = _open_step(name, fd, step, "/".join(steps[: i + 1]), _FILE_FLAGS if last else _DIR_FLAGS)
            os.close(fd)
            fd = nxt
        return _read_regular(name, fd, max_bytes)
    finally:
        os.close(fd)


def _open_step(name: str, parent: int, step: str, shown: str, flags: int) -> int:
    """Open ``step`` under the folder ``parent`` without following a link; a refusal says which part failed."""
    try:
        return os.open(step, flags, dir_fd=parent)
    except OSError as exc:
        try:
            info: Any = os.stat(step, dir_fd=parent, follow_symlinks=False)
        except OSError:
            raise _refuse(name, f"{_shown(shown)} does not exist under the results folder") from exc
        if stat.S_ISLNK(info.st_mode):
            raise _refuse(name, f"{_shown(shown)} is a symbolic link; named files are never read through one") from exc
        raise _refuse(name, f"{_shown(shown)} cannot be opened ({exc.strerror})") from exc


def _read_regular(name: str, fd: int, max_bytes: int) -> bytes:
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        raise _refuse(name, "it is not a regular file")
    if info.st_size > max_bytes:
        raise _refuse(name, f"it holds {info.st_size} bytes, over the {max_bytes}-byte bound")
    chunks: list[bytes] = []
    total = 0
    while total <= max_bytes:
        chunk = os.read(fd, min(_READ_CHUNK, max_bytes + 1 - total))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    if total > max_bytes:  # it grew while being read
        raise _refuse(name, f"it holds more than {max_bytes} bytes")
    return b"".join(chunks)
