"""LIBERO-plus's robot-initial-state variants: the arm starts at the variant's own initial joints.

A variant named ``..._view_<camera>_initstate_<n>`` with ``n`` > 0 is built with LIBERO-plus's arm
``MountedPanda<n>``, whose initial joints are the default ones moved by 0.1 rad (in norm). robosuite puts the
arm there at the reset, and the arm's controller takes them as its posture target. The initial state loaded
after the reset is the base task's (LIBERO-plus keeps no states of its own for these variants), and it holds
the arm's joints too: loaded as it is, it would put the arm back where the base task starts. So after it is
loaded, the arm's joints are set to the variant's initial joints, at rest; the objects keep the loaded state
and the settle steps run as for any episode (docs/robustness.md, "Robot initial states").
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from rlinf_bench.suites import TaskInfo

__all__ = ["place_arm_at_initial_joints", "starts_from_variant_arm"]

#: The robot variant in a LIBERO-plus task name (``initstate_0`` is LIBERO's own arm).
_ROBOT_VARIANT = re.compile(r"_initstate_(\d+)")


def starts_from_variant_arm(task: TaskInfo) -> bool:
    """Whether ``task`` is a LIBERO-plus variant whose arm starts at perturbed initial joints."""
    if task.package != "liberoplus":
        return False
    found = _ROBOT_VARIANT.search(task.name)
    return found is not None and int(found.group(1)) != 0


def place_arm_at_initial_joints(env: Any) -> np.ndarray:
    """Set the arm of robosuite env ``env`` to its robot's initial joints, at rest; return them (rad).

    Only the arm's joints change (the gripper's and every object's stay as loaded); the simulation is
    forwarded so that the next observation and the controller read the new pose.
    """
    robot = env.robots[0]
    sim = env.sim
    target = np.asarray(robot.init_qpos, dtype=np.float64)
    for name, angle in zip(robot.robot_joints, target, strict=True):
        joint = sim.model.joint_name2id(name)
        sim.data.qpos[sim.model.jnt_qposadr[joint]] = angle
        sim.data.qvel[sim.model.jnt_dofadr[joint]] = 0.0
    sim.forward()
    return target
