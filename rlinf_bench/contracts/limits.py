"""Bounds on every contract's text, lists and numbers: a type, a range and a unit for each, checked where read.

A field is data someone else wrote (a trainer's object key, a user's ``python:`` policy inside an eval Job, a
hand-written request or config): nothing it holds may grow what is built from it without bound. A 10 MB task
name would make an 80 MB report, since every task row, page and message repeats it. So names, URIs and
setting texts longer than their limit are refused with the field named (a name that long is no name); free
text (errors, reasons) is cut to its limit with a marker saying how long it was, because refusing a run's
result over its error message would lose the run. docs/security.md ("Settings") lists these limits.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator, Field, StringConstraints

__all__ = [
    "DAY_S",
    "MAX_DEADLINE_S",
    "MAX_QUEUE_LIMIT_MIN",
    "MAX_SEED",
    "MAX_STEPS",
    "MAX_TRIALS",
    "MESSAGE_CHARS",
    "NAME_CHARS",
    "SETTING_CHARS",
    "URI_CHARS",
    "Message",
    "Name",
    "Seed",
    "SettingText",
    "Uri",
    "cut_message",
]

#: A name: a suite, task, policy alias, baseline, probe, metric, unit, package version, host (characters).
NAME_CHARS = 1024
#: A URI or path: an S3 key is at most 1,024 bytes; with the scheme and bucket, 2,048 characters is room.
URI_CHARS = 2048
#: A setting's text: a probe argument, an environment variable's value, a command-line argument.
SETTING_CHARS = 8192
#: Free text (an error, a reason): longer text is cut to this many characters, marked.
MESSAGE_CHARS = 8192

#: Seeds go to ``numpy.random.seed`` (LIBERO's env.seed, our policies): it takes 0 to 2**32 - 1.
MAX_SEED = 2**32 - 1
#: Episodes per task (one per initial state; LIBERO has 50, a suite check narrows it further).
MAX_TRIALS = 10_000
#: Policy steps of one episode (LIBERO-10's horizon is 520 steps).
MAX_STEPS = 100_000
DAY_S = 24 * 3600
#: Job deadlines and the workflow's queueing allowance: a week.
MAX_DEADLINE_S = 7 * DAY_S
#: Kueue queueing limit: a week, in minutes.
MAX_QUEUE_LIMIT_MIN = 7 * 24 * 60


def cut_message(value: Any) -> Any:
    """Free text over :data:`MESSAGE_CHARS` cut to it, ending with how long it was (other values unchanged)."""
    if isinstance(value, str) and len(value) > MESSAGE_CHARS:
        marker = f" … [cut: {len(value)} characters]"
        return value[: MESSAGE_CHARS - len(marker)] + marker
    return value


Name = Annotated[str, StringConstraints(max_length=NAME_CHARS)]
Uri = Annotated[str, StringConstraints(max_length=URI_CHARS)]
SettingText = Annotated[str, StringConstraints(max_length=SETTING_CHARS)]
Message = Annotated[str, BeforeValidator(cut_message)]
Seed = Annotated[int, Field(ge=0, le=MAX_SEED)]
