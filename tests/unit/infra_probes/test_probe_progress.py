"""A probe that runs for a while says so on stderr; stdout keeps the result."""

from __future__ import annotations

import io
import threading

from infra_probes.progress import ProbeProgress, say


def wait_for(stream: io.StringIO, text: str, *, limit_s: float = 10.0) -> bool:
    """Whether ``text`` appears in ``stream`` within ``limit_s`` (the ticker runs on its own thread)."""
    seen = threading.Event()
    for _ in range(int(limit_s / 0.02)):
        if text in stream.getvalue():
            seen.set()
            break
        seen.wait(0.02)
    return seen.is_set()


def test_given_a_probe_that_runs_past_the_interval_then_it_says_it_is_still_running() -> None:
    stream = io.StringIO()

    with ProbeProgress("gpu", every_s=0.05, stream=stream):
        assert wait_for(stream, "gpu: still running, ")

    assert all(line.startswith("gpu: still running, ") for line in stream.getvalue().splitlines())


def test_given_the_probe_says_something_itself_then_that_line_is_written_as_is() -> None:
    stream = io.StringIO()

    with ProbeProgress("nccl", every_s=3600, stream=stream):
        say("nccl", "1 GiB all-reduce over 2 ranks: busbw 0.5 GB/s (11/11)", stream=stream)

    assert stream.getvalue() == "nccl: 1 GiB all-reduce over 2 ranks: busbw 0.5 GB/s (11/11)\n"


def test_given_another_rank_then_it_says_nothing() -> None:
    stream = io.StringIO()

    with ProbeProgress("nccl", every_s=0.01, stream=stream, enabled=False):
        threading.Event().wait(0.1)

    assert stream.getvalue() == ""
