"""The official seed protocol: 100000 * (1 + seed) upward, expert-unsolvable seeds skipped and recorded.

The expert here is a plain function of the seed: these tests are about the walk (which seeds, in
what order, what gets recorded), not about any scene.
"""

from __future__ import annotations

import pytest

from eval_runner.envs.robotwin_seeds import ExpertVerdict, SeedWalk, SkippedSeed, start_seed
from rlinf_bench.errors import ConfigError, SimulatorError


def _expert(unsolvable: dict[int, str]):
    asked: list[int] = []

    def expert(seed: int) -> ExpertVerdict:
        asked.append(seed)
        return ExpertVerdict(False, unsolvable[seed]) if seed in unsolvable else ExpertVerdict(True)

    return expert, asked


def test_given_run_seeds_then_each_run_starts_at_its_own_block() -> None:
    assert [start_seed(s) for s in (0, 1, 2)] == [100000, 200000, 300000]
    with pytest.raises(ConfigError, match="run seeds are >= 0"):
        start_seed(-1)


def test_given_unsolvable_seeds_then_they_are_skipped_recorded_and_the_episode_count_is_kept() -> None:
    expert, asked = _expert({200001: "motion plan failed", 200002: "unstable scene: cup"})
    walk = SeedWalk(run_seed=1, episodes=3, expert=expert)

    assert list(walk) == [200000, 200003, 200004]
    assert walk.skipped == [SkippedSeed(200001, "motion plan failed"), SkippedSeed(200002, "unstable scene: cup")]
    assert asked == [200000, 200001, 200002, 200003, 200004]  # nothing asked past the last needed seed


def test_given_the_same_run_seed_twice_then_the_seeds_are_the_same() -> None:
    first = list(SeedWalk(0, 4, _expert({100001: "x"})[0]))
    again = list(SeedWalk(0, 4, _expert({100001: "x"})[0]))
    assert first == again == [100000, 100002, 100003, 100004]


def test_given_an_expert_that_never_succeeds_then_the_walk_stops_with_a_clear_error() -> None:
    walk = SeedWalk(0, 2, lambda seed: ExpertVerdict(False, "motion plan failed"), max_skips=5)
    with pytest.raises(SimulatorError, match=r"failed on 5 seeds in a row .*broken"):
        list(walk)
    assert len(walk.skipped) == 5


def test_given_a_walk_that_would_reach_the_next_runs_block_then_it_refuses() -> None:
    walk = SeedWalk(0, 2, lambda seed: ExpertVerdict(seed % 100000 == 0), max_skips=10**6)
    with pytest.raises(SimulatorError, match=r"walked past 199999 .*belongs to the next run"):
        list(walk)


def test_given_zero_trials_then_the_request_is_rejected() -> None:
    with pytest.raises(ConfigError, match="at least one episode"):
        SeedWalk(0, 0, lambda s: ExpertVerdict(True))
