"""The scripted expert under the layout axis on real LIBERO rollouts: on fixed (task, initial state) pairs its
success at the strongest layout is lower than its control twin's.

The pairs are ones ``bench/robustness_expert.py`` measured losing at layout level 3 (docs/robustness.md, "The
expert under the axes"); every draw comes from (run seed, suite, task, initial state, axis, level) only, so the
same run seed replays the same layout here. The bench's protocol (the default, rlinf) is kept, with fewer steps:
the control succeeds well within them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from eval_runner.loop import evaluate
from tests.sim.helpers import make_run, settings

pytestmark = pytest.mark.sim

#: (task, initial state) of libero_spatial whose expert episode succeeds and fails at layout level 3 (seed 0)
LOST_AT_LAYOUT_3 = (TASK, STATE) = (0, 0)
#: the control succeeds in 84 steps; the perturbed episode is given the same budget
MAX_STEPS = 100


def test_given_the_strongest_layout_then_the_expert_fails_where_its_control_twin_succeeds(
    tmp_path: Path, libero_cache: Path
) -> None:
    run = make_run(
        policy="builtin:expert",
        protocol="rlinf",
        task_ids=[TASK],
        trials_per_task=STATE + 1,
        max_steps=MAX_STEPS,
        robustness={"axes": {"layout": [3]}, "states": STATE + 1},
    )
    result = evaluate(run, out_path=tmp_path / "expert.json", settings=settings(libero_cache))

    control = {e.init_state: e for e in result.tasks[0].episodes}[STATE]
    perturbed = {e.init_state: e for e in result.tasks[0].perturbed}[STATE]
    assert control.success, "the expert succeeds from the unperturbed state"
    assert perturbed.perturbation is not None and perturbed.error is None, perturbed.error  # played, not refused
    assert len(perturbed.perturbation.params["distractors"].split(",")) == 3
    assert not perturbed.success, perturbed.perturbation.params
