"""The sub-step shortcut on a small MuJoCo scene: the same numbers as robosuite's loop, in every case."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from eval_runner.physics import SplitCounters, computed_once

mujoco = pytest.importorskip("mujoco")

# a motor-driven slider pushing a free box across a floor: contacts, friction and an actuator
SCENE = """
<mujoco>
  <option timestep="0.002" integrator="{integrator}"/>
  <worldbody>
    <geom type="plane" size="2 2 0.1"/>
    <body name="pusher" pos="0 0 0.1">
      <joint name="slide" type="slide" axis="1 0 0"/>
      <geom type="box" size="0.05 0.05 0.05" mass="1"/>
    </body>
    <body name="box" pos="0.2 0 0.3">
      <freejoint/>
      <geom type="box" size="0.05 0.05 0.05" mass="0.5"/>
    </body>
  </worldbody>
  <actuator><motor joint="slide" gear="1"/></actuator>
</mujoco>
"""


class Sim:
    """robosuite's MjSim as far as the shortcut sees it: ``model._model``, ``data._data``, forward, step."""

    def __init__(self, integrator: str = "Euler") -> None:
        model = mujoco.MjModel.from_xml_string(SCENE.format(integrator=integrator))
        self.model = SimpleNamespace(_model=model)
        self.data = SimpleNamespace(_data=mujoco.MjData(model))

    def forward(self) -> None:
        mujoco.mj_forward(self.model._model, self.data._data)

    def step(self) -> None:
        mujoco.mj_step(self.model._model, self.data._data)


def control_step(sim: Any, target: float) -> None:
    """robosuite's sub-step loop: forward, the controller's own forward and PD law, step."""
    data = sim.data._data
    for _ in range(25):
        sim.forward()
        sim.forward()
        data.ctrl[0] = 40.0 * (target - data.qpos[0]) - 4.0 * data.qvel[0]
        sim.step()


def trajectory(sim: Sim, *, once: bool, counters: SplitCounters | None = None, poison_at: int = -1) -> list[np.ndarray]:
    seen = []
    for k in range(40):
        if k == poison_at:
            sim.data._data.qvel[0] = np.nan  # MuJoCo's checks reset a diverged state, with a warning
        if once:
            with computed_once(sim, counters):
                control_step(sim, target=0.4 if k < 20 else -0.2)
        else:
            control_step(sim, target=0.4 if k < 20 else -0.2)
        d = sim.data._data
        warnings = [d.warning[i].number for i in range(len(d.warning))]
        seen.append(
            np.concatenate([[d.time], d.qpos, d.qvel, d.qacc, d.qacc_warmstart, d.efc_force[: d.nefc], warnings])
        )
    return seen


def test_given_the_shortcut_then_every_control_step_equals_the_stock_loop_bit_for_bit() -> None:
    counters = SplitCounters()
    stock = trajectory(Sim(), once=False)
    once = trajectory(Sim(), once=True, counters=counters)
    for a, b in zip(stock, once, strict=True):
        assert np.array_equal(a, b)
    assert stock[-1][2] != stock[0][2]  # the box was pushed
    assert counters.split_steps == 40 * 25 and counters.forwards_skipped == 40 * 25 and counters.full_steps == 0


def test_given_a_diverged_state_then_mujocos_reset_and_warning_happen_as_in_the_stock_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # MuJoCo appends its warnings to MUJOCO_LOG.TXT in the working folder
    stock_sim, once_sim = Sim(), Sim()
    stock = trajectory(stock_sim, once=False, poison_at=10)
    once = trajectory(once_sim, once=True, poison_at=10)
    for a, b in zip(stock, once, strict=True):
        assert np.array_equal(a, b, equal_nan=True)
    bad_qvel = int(mujoco.mjtWarning.mjWARN_BADQVEL)
    assert stock_sim.data._data.warning[bad_qvel].number == once_sim.data._data.warning[bad_qvel].number == 1


def test_given_the_state_changed_between_forward_and_step_then_the_full_step_runs() -> None:
    counters = SplitCounters()
    sim, stock = Sim(), Sim()
    with computed_once(sim, counters):
        sim.forward()
        sim.data._data.qpos[0] = 0.05  # e.g. a scene hook moving a joint
        sim.step()
    stock.forward()
    stock.data._data.qpos[0] = 0.05
    stock.step()
    assert counters.full_steps == 1 and counters.split_steps == 0
    assert np.array_equal(sim.data._data.qpos, stock.data._data.qpos)


def test_given_rk4_or_the_block_left_then_the_sims_own_methods_run() -> None:
    counters = SplitCounters()
    sim = Sim("RK4")
    with computed_once(sim, counters):
        control_step(sim, target=0.4)
    assert counters == SplitCounters()  # mj_step2 integrates RK4 with Euler: never split
    euler = Sim()
    with computed_once(euler, counters):
        assert euler.step != Sim.step.__get__(euler)
    assert "step" not in vars(euler) and "forward" not in vars(euler)
