"""The environment seam: what an env kind gives the one rollout loop, and which kind a suite needs.

The loop (:mod:`eval_runner.loop`: workers, scheduler, batching, resume, videos, the result writer) is
the same for every kind. A kind gives it, per run, an :class:`EnvRun` (in the loop's process: the tasks,
their step limits, how episodes are seeded, what the result records) and, through it, a
:class:`SceneMaker` that each worker process uses to build a task's :class:`Scene` (reset to an initial
state, step, success, video frames). Its options are a typed model (:class:`EnvOptions`) built once at
the edge from the command line or the defaults.

The kind is the suite's ``simulator`` (:func:`rlinf_bench.suites.get_suite`): ``libero`` for the LIBERO
suites, ``robotwin`` for ``robotwin``, ``robotwin_<group>`` and ``robotwin/<task>``. A kind's module is
imported only when asked for, and imports no simulator itself, so the CLI can list every kind's options
in either venv.
"""

from __future__ import annotations

import argparse
import importlib
import re
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from pydantic import BaseModel, ConfigDict, ValidationError

from eval_runner.run_result import EvalTask
from eval_runner.scheduler import EpisodeTask
from rlinf_bench.contracts import EvalRun, Perturbation, Provenance, RunResult
from rlinf_bench.errors import ConfigError, UnknownSuiteError
from rlinf_bench.protocols import RunProtocol
from rlinf_bench.registry import unknown_name
from rlinf_bench.suites import BENCHMARKS, get_suite

if TYPE_CHECKING:
    import numpy as np

    from eval_runner.failure_reasons import FailureCause
    from eval_runner.policies.base import Policy
    from eval_runner.settings import EvalSettings

__all__ = [
    "KIND_MODULES",
    "EnvKind",
    "EnvOptions",
    "EnvRun",
    "EpisodeStart",
    "Scene",
    "SceneMaker",
    "Spaces",
    "all_kinds",
    "check_options",
    "env_kind",
    "kind_for_suite",
]

#: A suite's ``simulator`` -> the module that defines its env kind (its ``KIND``). LIBERO-plus's and LIBERO-PRO's
#: suites are LIBERO scenes built by their own packages' scene classes: the LIBERO kind runs them.
KIND_MODULES = {
    "libero": "eval_runner.envs.libero_kind",
    "robotwin": "eval_runner.envs.robotwin_kind",
    "liberoplus": "eval_runner.envs.libero_kind",
    "liberopro": "eval_runner.envs.libero_kind",
}


class EnvOptions(BaseModel):
    """A kind's own options (none for LIBERO), built once at the edge; each CLI flag is a field."""

    model_config = ConfigDict(extra="forbid", frozen=True)


@dataclass(frozen=True)
class Spaces:
    """What a kind's policies see and do: one row of an observation batch, and one action."""

    #: values per action (a policy returns ``[B, action_dim]``, or ``[B, K, action_dim]`` chunks)
    action_dim: int
    #: what those values mean
    action: str
    #: what one row of the batch :meth:`Policy.act` gets holds (besides ``task_description`` and ``episode_id``)
    observation: str

    def describe(self) -> str:
        """One line for ``--list-tasks``."""
        return f"observation: {self.observation}; action: {self.action_dim} values, {self.action}"


@dataclass(frozen=True)
class EpisodeStart:
    """What a scene gives back when an episode starts."""

    #: the policy's first observation (one row of the batch :meth:`Policy.act` gets)
    observation: dict[str, Any]
    #: where the next initial state's reset starts: the scheduler's chain (eval_runner.scheduler)
    next_start: Any
    #: the env seed this episode runs with, when it is not the run seed (RoboTwin's expert-checked walk)
    seed: int | None = None
    #: this episode's own instruction, when a task words it per episode (RoboTwin); None: the task's
    instruction: str | None = None
    #: what the kind records about this start (RoboTwin: the seeds its walk skipped), see EnvRun.record_start
    notes: dict[str, Any] = field(default_factory=dict)
    #: a perturbed episode's record (axis, level, magnitude, what was drawn): EpisodeResult.perturbation
    perturbation: Perturbation | None = None
    #: why a perturbed episode is not played (no physically valid layout within the redraws); None: played
    refused: str | None = None


class Scene(Protocol):
    """One task's scene in a worker process: reset to an initial state, step until success or the limit."""

    #: seconds its build took
    setup_s: float
    #: whether it renders the frames of a video (LIBERO builds its video camera only when asked to)
    records_video: bool
    #: whether the policy's observation must be rendered (False: a step without rendering still gives it)
    observation_needs_render: bool

    def start_episode(self, episode: EpisodeTask, settle_steps: int) -> EpisodeStart:
        """Reset to ``episode``'s initial state, seeded as the kind's protocol says (``episode.rng``: where the
        scheduler's chain stands), and take ``settle_steps`` no-op steps."""
        ...

    def step(self, action: np.ndarray, *, render: bool) -> tuple[dict[str, Any], bool]:
        """One action; (observation, success). ``render=False``: nobody reads this step's images."""
        ...

    def failure(self) -> FailureCause | None:
        """Why the episode that just ran out of steps failed, from the simulator (:mod:`eval_runner.failure_reasons`);
        None for a kind without a tracker (RoboTwin), whose failures the loop records as ``timeout``."""
        ...

    def video_frame(self) -> np.ndarray | None:
        """The current video frame (H x W x 3 uint8), upright."""
        ...

    def close(self) -> None: ...


class SceneMaker(Protocol):
    """Builds a run's scenes in the worker processes; pickled to each worker, imports its simulator there."""

    def setup_worker(self) -> None:
        """Once per worker process, before its first scene (rendering, config, imports)."""
        ...

    def make(self, task_id: int, *, video: bool) -> Scene:
        """The scene of task ``task_id`` (with its video frames when ``video``)."""
        ...


class EnvRun(ABC):
    """One run's environment on the loop's side (:meth:`EnvKind.setup`): tasks, limits, seeding, records."""

    def __init__(
        self,
        run: EvalRun,
        settings: EvalSettings,
        *,
        tasks: Sequence[EvalTask],
        max_steps: int,
        settle_steps: int,
        spaces: Spaces,
        protocol: RunProtocol | None = None,
    ) -> None:
        self.run = run
        self.settings = settings
        self.tasks = list(tasks)
        #: recorded in the RunResult: the longest step limit where tasks have their own (RoboTwin)
        self.max_steps = max_steps
        self.settle_steps = settle_steps
        self.spaces = spaces
        self.protocol = protocol

    def step_limit(self, task_id: int) -> int:
        """The policy steps an episode of ``task_id`` may take."""
        return self.max_steps

    @abstractmethod
    def first_start(self, seed: int) -> Any:
        """The chain's state before initial state 0 of run seed ``seed`` (:class:`~eval_runner.scheduler.Scheduler`)."""

    def prepare(self, provenance: Provenance) -> Provenance:
        """Make this machine ready for the run (what can fail here writes a ``failed`` result listing the tasks);
        returns ``provenance`` with what the kind records about it."""
        return provenance

    def resumed_from(self, previous: RunResult) -> None:  # noqa: B027 - optional hook
        """Take over what an earlier attempt of this run found (its episodes are kept by the loop)."""

    def known_starts(self) -> dict[tuple[int, int], dict[int, Any]]:
        """Chain states known before any reset, per (task, seed) (an earlier attempt's, for instance)."""
        return {}

    def record_start(self, task_id: int, notes: Mapping[str, Any], extra: dict[str, Any]) -> None:  # noqa: B027
        """Record a start's :attr:`EpisodeStart.notes` in the result's ``provenance.extra`` (``extra``)."""

    @abstractmethod
    def scenes(self, policy: Policy) -> SceneMaker:
        """The workers' scene maker for ``policy`` (refuses a policy that cannot do the run's tasks)."""


class EnvKind(ABC):
    """One env kind: its options, its task listing, what the Job's edge checks, and a run's environment."""

    name: ClassVar[str]
    #: title of its option group in ``--help``
    title: ClassVar[str]
    spaces: ClassVar[Spaces]
    options: ClassVar[type[EnvOptions]] = EnvOptions
    #: the ``dest`` of each command-line option of the kind (fields of :attr:`options`); another kind's
    #: suite refuses them when given
    flags: ClassVar[tuple[str, ...]] = ()
    #: whether its scenes play perturbed episodes (``EvalRun.robustness``: eval_runner.perturbations)
    perturbable: ClassVar[bool] = False

    def add_arguments(self, group: argparse._ArgumentGroup) -> None:  # noqa: B027 - optional hook
        """Add the kind's own options (each defaulting to None) to a parser's argument group."""

    def options_from(self, values: Mapping[str, Any]) -> EnvOptions:
        """The kind's options from command-line values (None: not given, the model's default)."""
        given = {flag: values[flag] for flag in self.flags if values.get(flag) is not None}
        try:
            return self.options.model_validate(given)
        except ValidationError as exc:
            first = exc.errors()[0]
            flag = "--" + str(first["loc"][0]).replace("_", "-") if first["loc"] else "an option"
            raise ConfigError(f"{flag}: {first['msg']} (a {self.name} option)") from None

    @abstractmethod
    def list_tasks(self, suite: str) -> str:
        """The ``--list-tasks`` text of a suite of this kind."""

    @abstractmethod
    def check_run(self, run: EvalRun) -> None:
        """What the Job's edge checks before anything starts: the run against the suite as this machine has it
        (its initial states present); raises ConfigError naming the input and the fix."""

    def preflight(
        self, run: EvalRun, *, out: str, settings: EvalSettings, command: Sequence[str], provenance: Provenance
    ) -> dict[str, Any] | None:
        """The Job's start checks (seconds), run before the loop; their record for ``provenance.extra["doctor"]``."""
        return None

    @abstractmethod
    def setup(self, run: EvalRun, options: EnvOptions, settings: EvalSettings) -> EnvRun:
        """The run's environment: tasks, step limits, seeding (no side effects; see :meth:`EnvRun.prepare`)."""


def env_kind(name: str) -> EnvKind:
    """The kind called ``name`` (a suite's ``simulator``)."""
    if name not in KIND_MODULES:
        raise unknown_name("env kind", name, KIND_MODULES)
    kind: EnvKind = importlib.import_module(KIND_MODULES[name]).KIND
    return kind


def all_kinds() -> list[EnvKind]:
    """Every kind once, in a fixed order (LIBERO first)."""
    kinds: dict[str, EnvKind] = {}
    for name in KIND_MODULES:
        kind = env_kind(name)
        kinds.setdefault(kind.name, kind)
    return list(kinds.values())


def kind_for_suite(suite: str) -> EnvKind:
    """The kind that runs ``suite``.

    A misspelt suite goes to the kind of the catalogue benchmark its name starts with (``robotwin/lift_pott``;
    else the catalogue's first, LIBERO), whose edge check writes the failed result with the closest valid name,
    as every run writes its result file.
    """
    try:
        return env_kind(get_suite(suite).benchmark.key)
    except UnknownSuiteError:
        head = re.split(r"[/_-]", suite.strip().lower(), maxsplit=1)[0]
        return env_kind(head if head in BENCHMARKS else BENCHMARKS.values()[0].key)


def check_options(kind: EnvKind, suite: str, values: Mapping[str, Any]) -> None:
    """Refuse options of another kind (e.g. ``--assets`` on a LIBERO suite) instead of ignoring them."""
    for other in all_kinds():
        if other.name == kind.name:
            continue
        given = [f"--{flag.replace('_', '-')}" for flag in other.flags if values.get(flag) is not None]
        if given:
            raise ConfigError(f"{', '.join(given)} only apply to {other.name} suites; {suite} is a {kind.name} suite")
