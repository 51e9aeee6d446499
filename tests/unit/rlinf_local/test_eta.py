"""The ETA of a running execution: hidden until the episodes' own pace is known, then within 2x of the truth.

The readings are the ones ``pipeline``/``demo`` take every 2 s (seconds since the execution started, episodes
done, episodes in all). The demo's come from a real one: step 100's RunResult on the 2-core dev VM under a load
of about 9 (other sessions beside it), 2 workers after 69 s of start-up and scene builds, each worker's episodes
taking 150, 90, 16, 105, 121 and 16 s (slow while the probes, nccl above all, shared the cores).
"""

from __future__ import annotations

from collections.abc import Iterator

from rlinf_local.eta import EtaEstimate


def readings(finished_at: list[float], *, every_s: float = 2.0) -> Iterator[tuple[float, int]]:
    """(seconds since the start, episodes done) every ``every_s`` until the last episode is in."""
    t = 0.0
    while t <= finished_at[-1]:
        yield t, sum(1 for f in finished_at if f <= t)
        t += every_s


def demo_execution() -> list[float]:
    """12 episodes (4 tasks x 3 states): when each finished, in seconds since the execution started."""
    return [217.0, 219.0, 308.0, 311.0, 324.0, 327.0, 428.0, 429.0, 548.0, 551.0, 565.0, 567.0]


def demo_execution_under_more_load() -> list[float]:
    """The same execution on the same machine at a load of 10-18, read from ``state.json`` every 2 s while it ran:
    nothing finished for 150 s in the middle."""
    return [217.0, 353.0, 353.0, 377.0, 377.0, 526.0, 526.0, 644.0, 644.0, 662.0, 671.0, 671.0]


def paper_execution() -> list[float]:
    """20 episodes of 512 steps (10 tasks x 2 states): 60 s of start-up, then one episode every 62 s."""
    return [60.0 + 62.0 * k for k in range(20)]


def predicted_ends(finished_at: list[float], estimate: EtaEstimate) -> list[tuple[float, float]]:
    total = len(finished_at)
    shown = []
    for t, done in readings(finished_at):
        eta = estimate.update(t, done, total)
        if eta is not None:
            shown.append((t, t + eta))
    return shown


def naive_ends(finished_at: list[float]) -> list[float]:
    """What elapsed / done x left predicts at each reading (the estimate this replaces)."""
    total = len(finished_at)
    return [t + t / done * (total - done) for t, done in readings(finished_at) if 0 < done < total]


def test_given_the_demos_readings_then_every_eta_shown_predicts_the_end_within_2x() -> None:
    for finished_at in (demo_execution(), demo_execution_under_more_load(), paper_execution()):
        end = finished_at[-1]

        shown = predicted_ends(finished_at, EtaEstimate())

        assert shown, "an ETA is shown before the end"
        assert shown[0][0] < end * 0.75, "and well before it"
        for t, predicted in shown:
            assert 0.5 * end <= predicted <= 2 * end, f"at {t:.0f} s it predicted the end at {predicted:.0f} s"


def test_given_the_demos_readings_then_the_shown_eta_never_swings_by_more_than_2x() -> None:
    for finished_at in (demo_execution(), demo_execution_under_more_load()):
        shown = predicted_ends(finished_at, EtaEstimate())

        ends = [predicted for _, predicted in shown]
        assert max(ends) / min(ends) < 2


def test_the_estimate_it_replaces_swung_far_beyond_that_on_the_same_readings() -> None:
    ends = naive_ends(demo_execution())
    assert max(ends) / demo_execution()[-1] > 4  # the first episode charged with the whole start-up


def test_given_only_the_first_wave_then_no_eta_is_shown() -> None:
    estimate = EtaEstimate()

    assert estimate.update(50.0, 0, 12) is None  # nothing finished yet
    assert estimate.update(218.0, 1, 12) is None  # the first episode: the rate is unknown
    assert estimate.update(309.0, 3, 12) is None  # two more since: not enough to tell a pace


def test_given_every_episode_finished_then_no_eta_is_shown() -> None:
    estimate = EtaEstimate()
    for t, done in readings(demo_execution()):
        estimate.update(t, done, 12)

    assert estimate.update(570.0, 12, 12) is None
