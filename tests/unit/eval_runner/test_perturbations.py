"""The parts of perturbed episodes that need no simulator: the plan, the draws, the rewrites, the image noise,
and how a run's result keeps perturbed episodes beside (never inside) its success rate."""

from __future__ import annotations

import numpy as np
import pytest

from eval_runner.perturbations.draw import AxisLevel, episode_generator
from eval_runner.perturbations.images import ImageNoise
from eval_runner.perturbations.language import IRRELEVANT, rewrite
from eval_runner.run_result import ResultBuilder
from eval_runner.scheduler import plan_episodes
from rlinf_bench.contracts import EpisodeResult, EvalRun, PerturbationAxis, Provenance, RunStatus
from rlinf_bench.contracts.robustness import RobustnessSpec
from rlinf_bench.robustness import perturbation_record
from rlinf_bench.suites import get_suite

CAMERA2 = AxisLevel(PerturbationAxis.CAMERA, 2)


def test_given_robustness_then_every_perturbed_episode_has_its_standard_twin_in_the_plan() -> None:
    spec = RobustnessSpec.model_validate("camera:1,2,noise:3")
    plan = plan_episodes("libero_spatial", 7, [4, 9], 20, spec)

    standard = {(e.task_id, e.init_state) for e in plan if e.perturbation is None}
    perturbed = [e for e in plan if e.perturbation is not None]
    assert len(standard) == 40 and len(perturbed) == 2 * 2 * 3  # 2 tasks x 2 states (20 / 10) x 3 pairs
    assert all((e.task_id, e.init_state) in standard and e.seed == 7 for e in perturbed)
    assert len({e.key for e in plan}) == len(plan)  # one key per episode
    assert [e.episode_id for e in perturbed[:3]] == ["t4-s0-camera1-a0", "t4-s0-camera2-a0", "t4-s0-noise3-a0"]
    assert plan_episodes("libero_spatial", 7, [4, 9], 20) == [e for e in plan if e.perturbation is None]


def test_given_one_key_then_the_draws_are_the_same_and_any_other_part_changes_them() -> None:
    def draws(seed: int = 0, suite: str = "s", task: int = 1, state: int = 2, axis: AxisLevel = CAMERA2) -> list[float]:
        return episode_generator(seed, suite, task, state, axis).random(4).tolist()

    np.random.seed(123)
    before = np.random.get_state()[1].copy()  # type: ignore[index]
    first = draws()
    assert draws() == first  # nothing but the key: not the order, the worker or what was drawn before
    assert np.array_equal(np.random.get_state()[1], before)  # type: ignore[index]  # LIBERO's global RNG untouched
    others = [
        draws(seed=1),
        draws(suite="t"),
        draws(task=2),
        draws(state=3),
        draws(axis=AxisLevel(PerturbationAxis.CAMERA, 3)),
        draws(axis=AxisLevel(PerturbationAxis.LIGHT, 2)),
    ]
    assert all(other != first for other in others)


def test_given_each_language_level_then_the_instruction_is_paraphrased_blanked_or_replaced() -> None:
    task = "pick up the black bowl on the cookie box and place it on the plate"
    paraphrase, kind = rewrite(task, 1, np.random.default_rng(0))
    assert kind == "paraphrase" and paraphrase != task
    assert "grab the black bowl" in paraphrase and "set it on the plate" in paraphrase  # same objects and places
    assert rewrite(task, 2, np.random.default_rng(0)) == ("", "blank")
    text, kind = rewrite(task, 3, np.random.default_rng(0))
    assert kind == "irrelevant" and text in IRRELEVANT
    # an instruction without a verb to swap is still changed (its framing)
    assert rewrite("the bowl", 1, np.random.default_rng(5))[0] != "the bowl"


def test_given_every_libero_instruction_then_a_paraphrase_differs_from_it() -> None:
    for suite in ("libero_spatial", "libero_object", "libero_goal", "libero_10"):
        spec = get_suite(suite)
        for task_id in range(spec.n_tasks):
            language = spec.task(task_id).language
            for seed in range(3):
                assert rewrite(language, 1, np.random.default_rng(seed))[0] != language.lower(), (suite, task_id)


def test_given_noise_then_images_change_by_about_sigma_and_other_keys_are_untouched() -> None:
    image = np.full((64, 64, 3), 128, dtype=np.uint8)
    obs = {"agentview_image": image, "robot0_eef_pos": np.array([0.1, 0.2, 0.3], dtype=np.float32)}

    noisy = ImageNoise(np.random.default_rng(0), sigma=8.0, blur_px=0.0)(obs)

    assert noisy["agentview_image"].dtype == np.uint8 and noisy["agentview_image"].shape == image.shape
    assert np.std(noisy["agentview_image"].astype(float) - 128) == pytest.approx(8.0, rel=0.05)
    assert noisy["robot0_eef_pos"] is obs["robot0_eef_pos"]
    assert np.array_equal(obs["agentview_image"], image)  # the scene's own image is not written to


def test_given_blur_then_an_edge_is_spread_and_a_flat_image_stays_flat() -> None:
    edge = np.zeros((16, 16, 3), dtype=np.uint8)
    edge[:, 8:] = 255
    blurred = ImageNoise(np.random.default_rng(0), sigma=0.0, blur_px=1.0)({"x_image": edge})["x_image"]
    assert 0 < blurred[0, 7, 0] < 128 < blurred[0, 8, 0] < 255
    flat = np.full((16, 16, 3), 77, dtype=np.uint8)
    assert np.array_equal(ImageNoise(np.random.default_rng(0), 0.0, 2.0)({"x_image": flat})["x_image"], flat)


def test_given_perturbed_episodes_then_they_sit_beside_the_standard_ones_and_not_in_the_success_rate() -> None:
    run = EvalRun.model_validate(
        {
            "request_id": "r",
            "checkpoint": {"uri": "", "experiment": "none", "global_step": 0},
            "suite": "libero_spatial",
            "run_index": 0,
            "seed": 0,
            "task_ids": [0],
            "trials_per_task": 2,
            "robustness": "camera:2",
        }
    )
    builder = ResultBuilder(run, [get_suite("libero_spatial").task(0)], 10, 0, Provenance())
    builder.add(0, EpisodeResult(init_state=1, seed=0, success=False, steps=10, wall_s=1.0))
    record = perturbation_record(PerturbationAxis.CAMERA, 2, {"direction_deg": 10.0})
    builder.add(0, EpisodeResult(init_state=0, seed=0, success=True, steps=3, wall_s=1.0, perturbation=record))
    builder.add(0, EpisodeResult(init_state=0, seed=0, success=True, steps=4, wall_s=1.0))

    task = builder.build(RunStatus.INCOMPLETE, "in progress").tasks[0]
    assert (builder.finished, builder.finished_all, builder.successes) == (2, 3, 1)
    assert [e.init_state for e in task.episodes] == [0, 1] and task.success_rate == 0.5
    assert [e.perturbation for e in task.perturbed] == [record]


def test_given_finished_episodes_when_a_run_resumes_then_exactly_those_are_not_planned_again() -> None:
    from eval_runner.loop import _key

    spec = RobustnessSpec.model_validate("quick")
    plan = plan_episodes("libero_spatial", 0, [3], 20, spec)
    finished = [
        EpisodeResult(init_state=0, seed=0, success=True, steps=1, wall_s=0.1),
        EpisodeResult(
            init_state=1,
            seed=0,
            success=False,
            steps=1,
            wall_s=0.1,
            perturbation=perturbation_record(plan[-1].perturbation.axis, 2),  # type: ignore[union-attr]
        ),
    ]
    done = {_key(3, e) for e in finished}
    left = [e.episode_id for e in plan if e.key not in done]
    assert len(left) == len(plan) - 2
    assert "t3-s0-a0" not in left and f"t3-s1-{plan[-1].perturbation.tag}-a0" not in left  # type: ignore[union-attr]
    assert f"t3-s0-{plan[-2].perturbation.tag}-a0" in left  # type: ignore[union-attr]
