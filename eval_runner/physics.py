"""A control step's physics without robosuite's repeated forward passes, bit for bit the same.

robosuite's ``step`` runs 25 MuJoCo sub-steps per control step (20 Hz control, 500 Hz physics), and
each sub-step computes MuJoCo's forward pass three times: ``sim.forward()`` at the top of the loop,
again in the controller's ``update()`` (nothing changed in between), and once more inside
``sim.step()`` (``mj_step`` is the checks, the forward pass, then the integration). Measured on the
2-core dev box, LIBERO-Spatial tasks 0 and 4: a control step took 8.6 / 9.8 ms with the three passes
and 5.5 / 6.2 ms with one (``bench/physics_split.py``). On a GPU node the workers' CPU is what
the suite waits on once the policy is served, so this is where the time goes.

Within :func:`computed_once`, ``sim.forward()`` skips a pass whose inputs (MuJoCo's whole
integration state: time, positions, velocities, activations, warm start, controls, applied forces,
mocap, equality flags, user data) equal those of the pass just before it, and ``sim.step()`` runs only
``mj_step2`` (actuation, acceleration, constraints, integration) when the position and velocity
stages were computed at exactly the current state. ``mj_step`` is the position/velocity checks, those
stages, then ``mj_step2``'s stages: MuJoCo documents the split for setting controls in between, for
every integrator but RK4, which this leaves alone. So every number the simulator holds after a step is
the one the stock loop produces; ``tests/sim/test_physics_split.py`` compares the whole state, the
observations and LIBERO's success check after every step of real episodes.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

_RK4 = 1  # mujoco.mjtIntegrator.mjINT_RK4: mj_step2 would integrate it with Euler


@dataclass
class SplitCounters:
    """How often the shortcut applied (the benchmark reports them; a test checks they are not zero)."""

    forwards_skipped: int = 0
    split_steps: int = 0
    full_steps: int = 0


@dataclass
class _SubSteps:
    sim: Any
    counters: SplitCounters
    _forwarded: tuple[np.ndarray, np.ndarray] | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        import mujoco

        self._mujoco = mujoco
        self._model = self.sim.model._model
        self._data = self.sim.data._data
        ctrl = int(mujoco.mjtState.mjSTATE_CTRL)
        self._physics_spec = int(mujoco.mjtState.mjSTATE_INTEGRATION) & ~ctrl
        self._ctrl_spec = ctrl
        self._physics = np.empty(mujoco.mj_stateSize(self._model, self._physics_spec))
        self._ctrl = np.empty(mujoco.mj_stateSize(self._model, ctrl))

    def _read_physics(self) -> np.ndarray:
        self._mujoco.mj_getState(self._model, self._data, self._physics, self._physics_spec)
        return self._physics

    def _read_ctrl(self) -> np.ndarray:
        self._mujoco.mj_getState(self._model, self._data, self._ctrl, self._ctrl_spec)
        return self._ctrl

    def forward(self) -> None:
        physics, ctrl = self._read_physics(), self._read_ctrl()
        last = self._forwarded
        if last is not None and np.array_equal(physics, last[0]) and np.array_equal(ctrl, last[1]):
            self.counters.forwards_skipped += 1  # the same inputs give the same outputs: nothing to recompute
            return
        self._mujoco.mj_forward(self._model, self._data)
        self._forwarded = (physics.copy(), ctrl.copy())

    def step(self) -> None:
        last, self._forwarded = self._forwarded, None
        mj = self._mujoco
        # mj_step's own first two calls; a bad state is reset here and then no longer matches `last`
        mj.mj_checkPos(self._model, self._data)
        mj.mj_checkVel(self._model, self._data)
        if last is not None and np.array_equal(self._read_physics(), last[0]):
            mj.mj_step2(self._model, self._data)  # controls may differ: step2 recomputes from actuation on
            self.counters.split_steps += 1
        else:
            mj.mj_step(self._model, self._data)
            self.counters.full_steps += 1


@contextlib.contextmanager
def computed_once(sim: Any, counters: SplitCounters | None = None) -> Iterator[SplitCounters]:
    """Within the block, ``sim.forward``/``sim.step`` skip the forward passes that repeat one already done.

    Meant around robosuite's ``env.step`` only: there nothing changes the model between the passes.
    Outside the block the sim is robosuite's own again. RK4 models are left as they are.
    """
    counters = counters if counters is not None else SplitCounters()
    if sim.model._model.opt.integrator == _RK4:
        yield counters
        return
    sub_steps = _SubSteps(sim, counters)
    # instance attributes shadow MjSim's methods for this sim only (as the render skipping does)
    sim.forward = sub_steps.forward
    sim.step = sub_steps.step
    try:
        yield counters
    finally:
        sim.__dict__.pop("forward", None)
        sim.__dict__.pop("step", None)
