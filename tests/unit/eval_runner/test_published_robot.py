"""Which LIBERO-plus variants start from their own arm: those named with a robot variant other than LIBERO's."""

from __future__ import annotations

from pathlib import Path

import pytest

from eval_runner.envs.published_robot import starts_from_variant_arm
from rlinf_bench.suites import TaskInfo

BASE = "pick_up_the_black_bowl_between_the_plate_and_the_ramekin_and_place_it_on_the_plate"


def _task(name: str, package: str = "liberoplus") -> TaskInfo:
    return TaskInfo("liberoplus_spatial", 0, name, "", Path(f"{name}.bddl"), Path(f"{name}.pruned_init"), package)


@pytest.mark.parametrize(
    ("name", "package", "own_arm"),
    [
        (f"{BASE}_view_0_0_100_0_0_initstate_1", "liberoplus", True),  # MountedPanda1
        (f"{BASE}_view_0_0_100_0_0_initstate_121", "liberoplus", True),
        (f"{BASE}_view_0_0_100_2_352_initstate_0", "liberoplus", False),  # a camera variant: LIBERO's arm
        (f"{BASE}_view_0_0_100_0_0_initstate_0_noise_12", "liberoplus", False),  # sensor noise
        (f"{BASE}_table_1", "liberoplus", False),
        (f"{BASE}_view_0_0_100_0_0_initstate_1", "libero", False),  # only LIBERO-plus builds variant arms
    ],
)
def test_only_a_liberoplus_robot_variant_starts_from_its_own_arm(name: str, package: str, own_arm: bool) -> None:
    assert starts_from_variant_arm(_task(name, package)) is own_arm
