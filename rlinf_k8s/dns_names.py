"""Kubernetes naming rules: validate what users give us, derive what we name ourselves.

Two policies, on purpose:

* Names a user *chooses* (namespace, service account, PVC, node-selector labels, env names) are
  validated and rejected with a clear error: silently rewriting them would point a Job at a
  different object than the one the user meant.
* Names we *derive* (Job names, label values from an experiment name) are sanitized: they only have
  to be valid, unique and stable. When a derived name is too long it is truncated and a short hash
  of the full name is appended, so two long names that share a prefix still differ and the same
  input always gives the same name (that is what makes re-submission idempotent).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping

from rlinf_bench.errors import JobSpecError

__all__ = [
    "MAX_LABEL_VALUE",
    "MAX_NAME",
    "derive_name",
    "sanitize_label_value",
    "validate_dns1123_label",
    "validate_dns1123_subdomain",
    "validate_env_name",
    "validate_label_key",
    "validate_label_value",
    "validate_labels",
]

MAX_NAME = 63
MAX_LABEL_VALUE = 63
MAX_SUBDOMAIN = 253
HASH_LEN = 8

# Used with fullmatch only: `^...$` with match() accepts a trailing newline ("ns\n"), which Kubernetes refuses.
_DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
_LABEL_NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_ENV_NAME = re.compile(r"[-._a-zA-Z][-._a-zA-Z0-9]*")


def _short_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:HASH_LEN]


def validate_dns1123_label(value: str, *, field: str) -> str:
    """Return ``value`` if it is a valid DNS-1123 label (namespace, Service, Job name); else raise."""
    if len(value) > MAX_NAME or not _DNS1123_LABEL.fullmatch(value):
        raise JobSpecError(
            f"{field}={value!r} is not a valid Kubernetes name: use at most {MAX_NAME} lowercase letters, "
            "digits and '-', starting and ending with a letter or digit"
        )
    return value


def validate_dns1123_subdomain(value: str, *, field: str) -> str:
    """Return ``value`` if it is a valid DNS-1123 subdomain (service account, PVC, image pull secret)."""
    if len(value) > MAX_SUBDOMAIN or not _DNS1123_SUBDOMAIN.fullmatch(value):
        raise JobSpecError(
            f"{field}={value!r} is not a valid Kubernetes object name: use lowercase letters, digits, '-' and '.', "
            f"at most {MAX_SUBDOMAIN} characters, starting and ending with a letter or digit"
        )
    return value


def validate_label_value(value: str, *, field: str) -> str:
    """Return ``value`` if Kubernetes accepts it as a label value; else raise."""
    if len(value) > MAX_LABEL_VALUE or not _LABEL_VALUE.fullmatch(value):
        raise JobSpecError(
            f"{field}={value!r} is not a valid Kubernetes label value: at most {MAX_LABEL_VALUE} characters of "
            "letters, digits, '-', '_' and '.', starting and ending with a letter or digit (or empty)"
        )
    return value


def validate_label_key(key: str, *, field: str) -> str:
    """Return ``key`` if it is a valid label key (``[prefix/]name``); else raise."""
    prefix, slash, name = key.partition("/")
    if not slash:
        prefix, name = "", key
    ok = bool(name) and len(name) <= MAX_NAME and bool(_LABEL_NAME.fullmatch(name))
    if slash:
        ok = ok and len(prefix) <= MAX_SUBDOMAIN and bool(_DNS1123_SUBDOMAIN.fullmatch(prefix))
    if not ok:
        raise JobSpecError(
            f"{field} key {key!r} is not a valid Kubernetes label key: an optional DNS subdomain prefix and '/', "
            f"then a name of at most {MAX_NAME} letters, digits, '-', '_' and '.'"
        )
    return key


def validate_labels(labels: Mapping[str, str], *, field: str) -> dict[str, str]:
    """Validate every key and value of a label map (also used for node selectors)."""
    for key, value in labels.items():
        validate_label_key(key, field=field)
        validate_label_value(value, field=f"{field}[{key!r}]")
    return dict(labels)


def validate_env_name(name: str, *, field: str) -> str:
    """Return ``name`` if Kubernetes accepts it as an environment variable name; else raise."""
    if not _ENV_NAME.fullmatch(name):
        raise JobSpecError(
            f"{field} has an invalid environment variable name {name!r}: use letters, digits, '_', '-' and '.', "
            "not starting with a digit"
        )
    return name


def sanitize_label_value(value: str) -> str:
    """Map any string to a valid label value: same input, same output; a hash suffix when shortened."""
    cleaned = re.sub(r"[^A-Za-z0-9_.-]+", "-", value)
    cleaned = re.sub(r"^[^A-Za-z0-9]+|[^A-Za-z0-9]+$", "", cleaned)
    if cleaned == value and len(cleaned) <= MAX_LABEL_VALUE:
        return cleaned
    # Anything we had to change gets a hash so that distinct inputs stay distinct.
    keep = MAX_LABEL_VALUE - HASH_LEN - 1
    head = re.sub(r"[^A-Za-z0-9]+$", "", cleaned[:keep])
    return f"{head}-{_short_hash(value)}" if head else _short_hash(value)


def derive_name(*parts: str | int, max_len: int = MAX_NAME) -> str:
    """A DNS-1123 label built from ``parts`` (joined by '-'), deterministic, at most ``max_len`` characters.

    The first part should be a fixed word starting with a letter (``eval``, ``probe``) so that the
    result is also a valid DNS-1035 label (Service names) and says what the object is.
    """
    raw = "-".join(str(p) for p in parts)
    cleaned = re.sub(r"[^a-z0-9-]+", "-", raw.lower())
    cleaned = re.sub(r"-{2,}", "-", cleaned).strip("-")
    if not cleaned:
        raise JobSpecError(f"cannot derive a Kubernetes name from {parts!r}: no letters or digits")
    if len(cleaned) <= max_len:
        return cleaned
    keep = max_len - HASH_LEN - 1
    head = cleaned[:keep].rstrip("-")
    return f"{head}-{_short_hash(raw)}"


def eval_job_name(base: str, suite: str, run_index: int, shard: tuple[int, int] | None = None) -> str:
    """The Job name of one eval run; ``base`` is the execution name (checkpoint, matrix hash, attempt).

    ``shard`` (index 0-based, count) names one shard of a sharded run (``...-r0-s2of3``); None, an
    unsharded run, keeps the name it always had."""
    if shard is None:
        return derive_name("eval", base, suite, f"r{run_index}")
    return derive_name("eval", base, suite, f"r{run_index}", f"s{shard[0] + 1}of{shard[1]}")


def probe_job_name(base: str, probe: str, nodes: int = 1) -> str:
    """The Job name of one probe. Pods of an Indexed Job are named ``<job>-<index>-<suffix>`` and their
    hostname ``<job>-<index>`` must itself be a DNS label, so room is left for the index."""
    room = len(f"-{nodes - 1}") if nodes > 1 else 0
    return derive_name("probe", base, probe, max_len=MAX_NAME - room)
