"""The official seed protocol: 100000 * (1 + seed) upward, expert-unsolvable seeds skipped and recorded.

The expert here is a plain function of the seed: these tests are about the walk (which seeds, in
what order, what gets recorded), not about any scene.
"""

from __future__ import annotations

import pytest

from eval_runner.envs.robotwin_seeds import ExpertVerdict, SkippedSeed, solvable_seeds, start_seed
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
    skipped: list[SkippedSeed] = []

    seeds = solvable_seeds(start_seed(1), 3, run_seed=1, expert=expert, skipped=skipped)

    assert seeds == [200000, 200003, 200004]
    assert skipped == [SkippedSeed(200001, "motion plan failed"), SkippedSeed(200002, "unstable scene: cup")]
    assert asked == [200000, 200001, 200002, 200003, 200004]  # nothing asked past the last needed seed


def test_given_a_walk_split_in_two_then_the_second_starts_after_the_first_and_the_seeds_are_the_same() -> None:
    expert = _expert({100001: "x"})[0]
    whole = solvable_seeds(100000, 4, run_seed=0, expert=expert)
    first = solvable_seeds(100000, 2, run_seed=0, expert=expert)
    rest = solvable_seeds(first[-1] + 1, 2, run_seed=0, expert=expert)  # what a resumed or second worker does
    assert whole == first + rest == [100000, 100002, 100003, 100004]


def test_given_an_expert_that_never_succeeds_then_the_walk_stops_with_a_clear_error() -> None:
    skipped: list[SkippedSeed] = []
    with pytest.raises(SimulatorError, match=r"failed on 5 seeds in a row .*broken"):
        solvable_seeds(
            100000,
            2,
            run_seed=0,
            expert=lambda seed: ExpertVerdict(False, "motion plan failed"),
            max_skips=5,
            skipped=skipped,
        )
    assert len(skipped) == 5


def test_given_a_walk_that_would_reach_the_next_runs_block_then_it_refuses() -> None:
    with pytest.raises(SimulatorError, match=r"walked past 199999 .*belongs to the next run"):
        solvable_seeds(100000, 2, run_seed=0, expert=lambda seed: ExpertVerdict(seed % 100000 == 0), max_skips=10**6)


def test_given_zero_trials_then_the_request_is_rejected() -> None:
    with pytest.raises(ConfigError, match="at least one episode"):
        solvable_seeds(100000, 0, run_seed=0, expert=lambda s: ExpertVerdict(True))
