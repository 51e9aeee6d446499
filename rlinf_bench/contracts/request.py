"""What to evaluate: the request for one checkpoint and the runs (Jobs) it expands into."""

from __future__ import annotations

import hashlib
import json
import re
from typing import Annotated, Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from rlinf_bench.contracts.checkpoint import CheckpointRef
from rlinf_bench.contracts.identifiers import ascii_part, check_path_segments, check_request_id
from rlinf_bench.contracts.layout import result_root, run_result_uri
from rlinf_bench.contracts.limits import (
    DAY_S,
    MAX_DEADLINE_S,
    MAX_QUEUE_LIMIT_MIN,
    MAX_STEPS,
    MAX_TRIALS,
    Name,
    Seed,
    SettingText,
    Uri,
)
from rlinf_bench.contracts.origin import RequestOrigin
from rlinf_bench.contracts.probes import OPT_IN_PROBES, PROBE_REQUIRED_ARGS, ProbeName
from rlinf_bench.contracts.protocol_profiles import DEFAULT_PROTOCOL
from rlinf_bench.contracts.robustness import RobustnessSetting
from rlinf_bench.contracts.suite_names import DEFAULT_SUITES, canonical_suite_name
from rlinf_bench.contracts.versioned import Contract

#: The brief's defaults for every eval matrix (EvalMatrix): the paper's "Reference Results" suites
#: (DEFAULT_SUITES), one seed per run of its three runs, and the published numbers, then the previous and
#: best checkpoints.
DEFAULT_SEEDS = (0, 1, 2)
DEFAULT_BASELINES = ("libero/openvla-oft-rlinf", "previous", "best")
#: Episode videos kept per task and run by default: enough to see how it fails (failures first), cheap to keep.
DEFAULT_VIDEOS = 2
#: Baseline names that are not tables but earlier checkpoints, read back from MLflow.
REFERENCE_BASELINES = frozenset({"previous", "best"})
#: The probes a matrix runs by default: those that start without arguments (gpu, nccl). storage and
#: checkpoint_io need a --path, throughput a training run: they run only when listed with those.
#: sim_canary is opt-in (OPT_IN_PROBES): it needs the eval image and LIBERO.
DEFAULT_PROBES = tuple(name for name in ProbeName if not PROBE_REQUIRED_ARGS[name] and name not in OPT_IN_PROBES)
#: ``shards: auto`` aims at runs (Jobs) of at most this long, worst case to the horizon (rlinf_bench.sharding):
#: 20 min splits no LIBERO suite at the default 30 workers (libero_10 ~590 s at the measured rate), and
#: libero_10 in two with 8 workers (~1,515 s).
DEFAULT_SHARD_TARGET_S = 1200
#: Matrix fields that change how the work is split into Jobs, not what is measured: left out of the digest.
# kueue: where Jobs wait; origin: who started it (the words of a fix), not what is measured
_LAYOUT_ONLY_FIELDS = ("videos", "shards", "shard_target_s", "kueue", "origin")
#: Parallel environment workers of one Job (the CPU count of the largest GPU nodes).
MAX_WORKERS = 256
#: Episode videos kept per task and run.
MAX_VIDEOS = 100
#: Runs of a suite (the paper uses 3, the adaptive budget extends to 6).
MAX_RUNS = 100
#: The matrix's free ``extra`` settings, as JSON: it travels in every Step Functions input (256 KiB at most).
MAX_EXTRA_BYTES = 16 * 1024
#: Task ids of one suite (LIBERO-90 has 90, RoboTwin 50).
MAX_TASKS = 1000
TaskId = Annotated[int, Field(ge=0, le=MAX_TASKS * 100)]


class Resources(BaseModel):
    """Kubernetes-style resource requests for one Job's container."""

    model_config = ConfigDict(extra="forbid")

    gpu: int = Field(default=1, ge=0, le=64, description="GPUs of the container (count)")
    #: What the measured suite-runs used per GPU (bench/results/gpu_suites.json): 16 cores (1 for the policy,
    #: 15 for 30 env workers) and up to ~3 GiB per worker (docs/kubernetes.md, "Sizing the eval Job").
    cpu: Name = Field(default="16", description="CPU cores of the container (Kubernetes quantity)")
    memory: Name = Field(default="96Gi", description="Memory of the container (Kubernetes quantity)")
    gpu_resource_key: Name = "nvidia.com/gpu"


class SuiteSelection(BaseModel):
    """One benchmark suite of the eval matrix, with optional overrides."""

    model_config = ConfigDict(extra="forbid")

    name: Name = Field(description=f"Suite id, e.g. {DEFAULT_SUITES[0]}")
    tasks: list[TaskId] | None = Field(
        default=None, max_length=MAX_TASKS, description="Task ids to run; None means all"
    )
    max_steps: int | None = Field(default=None, ge=1, le=MAX_STEPS, description="Override the suite's max steps")

    @field_validator("name")
    @classmethod
    def _name_is_a_path(cls, value: str) -> str:
        # "LIBERO-Long" -> libero_10; robotwin/<task> is a folder under the result root
        return check_path_segments(canonical_suite_name(value), allow_slash=True)


class ProbeSpec(BaseModel):
    """One infrastructure probe to run next to the evaluations."""

    model_config = ConfigDict(extra="forbid")

    name: ProbeName = Field(description="Which probe: " + " | ".join(ProbeName))
    args: list[SettingText] = Field(
        default_factory=list, max_length=64, description="Extra CLI arguments for the probe"
    )
    nodes: int = Field(default=1, ge=1, le=1024)
    gpus_per_node: int = Field(default=1, ge=0, le=64)


class Toleration(BaseModel):
    """A Kubernetes toleration for the GPU node group's taint."""

    model_config = ConfigDict(extra="forbid")

    key: Name
    operator: Literal["Exists", "Equal"] = "Exists"
    value: Name | None = None
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"] | None = "NoSchedule"


class JobSettings(BaseModel):
    """Where and how eval and probe Jobs run on Kubernetes (defaults follow the brief's EKS manifest)."""

    model_config = ConfigDict(extra="forbid")

    namespace: Name = Field(
        default="rlinf-eval", description="Namespace of every Job (the RBAC in deploy/k8s is scoped to it)"
    )
    service_account: Name = Field(default="rlinf-bench-runner", description="Pod service account (IRSA / Pod Identity)")
    node_selector: dict[Name, Name] = Field(default_factory=lambda: {"role": "gpu-training"}, max_length=64)
    tolerations: list[Toleration] = Field(
        default_factory=lambda: [Toleration(key="nvidia.com/gpu", operator="Exists", effect="NoSchedule")],
        max_length=64,
    )
    checkpoint_pvc: Name = Field(
        default="fsx-claim", description="PVC of the FSx file system, mounted read-only; empty: no checkpoint volume"
    )
    checkpoint_mount_path: Uri = "/fsx"
    results_pvc: Name = Field(default="", description="PVC for results; empty: an emptyDir (results go to S3 anyway)")
    results_mount_path: Uri = "/results"
    shm_size: Name = Field(default="16Gi", description="Size limit of the in-memory /dev/shm")
    backoff_limit: int = Field(default=1, ge=0, le=100, description="Pod retries before the Job fails")
    eval_deadline_s: int = Field(
        default=4 * 3600, ge=1, le=MAX_DEADLINE_S, description="activeDeadlineSeconds of eval Jobs (seconds)"
    )
    probe_deadline_s: int = Field(
        default=3600, ge=1, le=MAX_DEADLINE_S, description="activeDeadlineSeconds of probe Jobs (seconds)"
    )
    ttl_after_finished_s: int = Field(
        default=7 * DAY_S, ge=0, le=365 * DAY_S, description="Finished Jobs are deleted after this (seconds)"
    )
    run_as_user: int = Field(default=1000, ge=1, le=2**31 - 1, description="Non-root UID of the containers")
    image_pull_policy: Literal["Always", "IfNotPresent", "Never"] = "IfNotPresent"
    priority_class: Name = ""
    env: dict[Name, SettingText] = Field(
        default_factory=dict, max_length=128, description="Extra environment variables for every container"
    )


#: A DNS-1123 label: what Kubernetes accepts as an object name that is also a label value (<= 63 characters).
#: Used with fullmatch only (``$`` with match() would accept a trailing newline).
_DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")


class KueueSettings(BaseModel):
    """Admission through Kueue: the LocalQueue the Jobs wait in and the WorkloadPriorityClass they carry."""

    model_config = ConfigDict(extra="forbid")

    queue: str = Field(description="LocalQueue in the Jobs' namespace (deploy/k8s/kueue/localqueue.yaml: rlinf-eval)")
    priority_class: str = Field(
        default="", description="WorkloadPriorityClass of the Jobs (deploy/k8s/kueue: rlinf-eval-low); empty: none"
    )
    queue_limit_min: int = Field(
        default=120,
        ge=1,
        le=MAX_QUEUE_LIMIT_MIN,
        description="Minutes a Job may wait, counted from its creation, its last admission or eviction, or its "
        "newest pod, for admission (or for a node) before its run fails as 'never admitted' (or 'no node'); the "
        "queue sentinel keeps it alive until then",
    )

    @field_validator("queue", "priority_class")
    @classmethod
    def _dns1123_label(cls, value: str, info: Any) -> str:
        if value and not _DNS1123_LABEL.fullmatch(value):
            raise ValueError(
                f"kueue.{info.field_name}={value!r} is not a DNS-1123 label: use at most 63 lowercase letters, "
                "digits and '-', starting and ending with a letter or digit (e.g. rlinf-eval)"
            )
        if info.field_name == "queue" and not value:
            raise ValueError("kueue.queue is empty: name the LocalQueue (e.g. rlinf-eval), or leave kueue out")
        return value


class WorkflowSettings(BaseModel):
    """How the state machine waits for Jobs: heartbeats, timeouts and how many Jobs run at once."""

    model_config = ConfigDict(extra="forbid")

    heartbeat_s: int = Field(
        default=1800,
        ge=1,
        le=DAY_S,
        description="A Job silent this long counts as lost (pod evicted, node gone). It must cover scheduling "
        "and the image pull, since heartbeats start with the Job's process",
    )
    queue_s: int = Field(
        default=1800,
        ge=0,
        le=MAX_DEADLINE_S,
        description="Added to a Job's activeDeadlineSeconds for the state's TimeoutSeconds (seconds)",
    )
    max_concurrency: int = Field(
        default=0, ge=0, le=10_000, description="Jobs of one Map running at once; 0 = no limit"
    )


class EvalRun(Contract):
    """One evaluation run of one suite: exactly what one eval Job executes."""

    request_id: str
    checkpoint: CheckpointRef
    suite: Name
    run_index: int = Field(ge=0, le=MAX_RUNS)
    seed: Seed
    task_ids: list[TaskId] | None = Field(default=None, max_length=MAX_TASKS)
    trials_per_task: int = Field(
        default=50,
        ge=1,
        le=MAX_TRIALS,
        description="Episodes per task, one per initial state (as in EvalMatrix and RunResult)",
    )
    max_steps: int | None = Field(default=None, ge=1, le=MAX_STEPS)
    policy: Uri = "builtin:demo"
    workers: int = Field(default=1, ge=1, le=MAX_WORKERS)
    videos: int = Field(
        default=0,
        ge=0,
        le=MAX_VIDEOS,
        description="Episode videos (MP4) kept per task: failures first, then successes; 0 records none",
    )
    output_uri: Uri | None = Field(default=None, description="Where the RunResult JSON goes (local path or s3://)")
    protocol: Literal["oft", "rlinf"] = Field(
        default=DEFAULT_PROTOCOL, description="Episode settings profile (docs/evaluation.md); default rlinf"
    )
    settle_steps: int | None = Field(default=None, ge=0, le=10_000, description="Override the protocol's settle steps")
    settle_gripper: float | None = Field(default=None, ge=-1, le=1, description="Override the settle action's gripper")
    resolution: int | None = Field(default=None, ge=16, le=1024, description="Override the camera render resolution")
    on_episode_error: Literal["fail-run", "fail-episode"] = Field(
        default="fail-run", description="A simulator exception fails the run, or only its episode (as OpenVLA-OFT)"
    )
    robustness: RobustnessSetting = Field(
        default=None,
        description="Perturbed episodes played beside the standard ones (docs/robustness.md); None: none",
    )

    @field_validator("request_id")
    @classmethod
    def _request_id_is_a_path_segment(cls, value: str) -> str:
        return check_request_id(value)

    @field_validator("suite")
    @classmethod
    def _suite_is_a_path(cls, value: str) -> str:
        return check_path_segments(canonical_suite_name(value), allow_slash=True)

    @property
    def run_id(self) -> str:
        return f"{self.request_id}-{self.suite}-r{self.run_index}"


class EvalMatrix(BaseModel):
    """What to run for a checkpoint: suites x runs, the policy, images, probes, baselines, Job settings.

    Shared by :class:`EvalRequest` (one checkpoint's request) and the intake configuration, so both
    have the same fields and ONE set of defaults, the brief's: the four LIBERO suites of the paper,
    3 runs with seeds 0, 1, 2, 50 trials per task, the probes that need no arguments, and the baselines
    libero/openvla-oft-rlinf, previous and best. :meth:`digest` names a matrix in execution names.
    """

    model_config = ConfigDict(extra="forbid")

    suites: list[SuiteSelection] = Field(
        default_factory=lambda: [SuiteSelection(name=s) for s in DEFAULT_SUITES],
        max_length=64,
        description="Suites to evaluate (a name alone is enough); default: the paper's four LIBERO suites",
    )
    runs: int = Field(default=3, ge=1, le=MAX_RUNS, description="Evaluation runs per suite (the paper uses 3)")
    trials_per_task: int = Field(default=50, ge=1, le=MAX_TRIALS)
    seeds: list[Seed] = Field(
        default_factory=lambda: list(DEFAULT_SEEDS),
        max_length=MAX_RUNS,
        description="One seed per run, each from 0 to 2**32 - 1 (numpy's seeding range, which LIBERO's env.seed uses)",
    )
    policy: Uri = "builtin:demo"
    workers: int = Field(
        default=30,
        ge=1,
        le=MAX_WORKERS,
        description="Environment worker processes per Job: two per core beside the policy's (30 on 16 cores, the "
        "measured best with a served GPU policy); each holds a LIBERO scene, up to ~3 GiB",
    )
    videos: int = Field(
        default=DEFAULT_VIDEOS,
        ge=0,
        le=MAX_VIDEOS,
        description="Episode videos (MP4 at the policy's camera resolution) kept per task and run: failures first, "
        "then successes; 0 records none. Not part of the matrix digest: videos do not change what is measured",
    )
    protocol: Literal["oft", "rlinf"] = Field(
        default=DEFAULT_PROTOCOL,
        description="Episode settings of every run: rlinf (default, RLinf v0.3's, as the default baseline) or oft "
        "(OpenVLA-OFT's); a baseline measured with other episode settings (max steps, settle) gets the verdict "
        "not_comparable, one that only decodes otherwise gets its verdict with the difference named "
        "(docs/evaluation.md)",
    )
    on_episode_error: Literal["fail-run", "fail-episode"] = Field(
        default="fail-run", description="A simulator exception fails the run, or only its episode (as OpenVLA-OFT)"
    )
    shards: int | Literal["auto"] = Field(
        default=1,
        description="Jobs per suite-run: its tasks split into this many shards of whole tasks, balanced by horizon x "
        "trials, merged back into one RunResult episode-for-episode identical to the unsharded run; auto: enough "
        "shards for each to fit shard_target_s at the measured rate (docs/workflow.md). Not part of the matrix "
        "digest: sharding does not change what is measured",
    )
    shard_target_s: int = Field(
        default=DEFAULT_SHARD_TARGET_S,
        ge=60,
        le=DAY_S,
        description="With shards: auto, the longest a shard may take, worst case to the horizon, in seconds",
    )
    image: Uri = ""
    robotwin_image: Uri = Field(
        default="",
        description="Eval image for RoboTwin suites (docker/Dockerfile.eval-robotwin): the runtime's pins need their own",
    )
    probe_image: Uri = ""
    resources: Resources = Field(default_factory=Resources)
    probes: list[ProbeSpec] = Field(
        default_factory=lambda: [ProbeSpec(name=p) for p in DEFAULT_PROBES],
        max_length=32,
        description="Infrastructure probes to run next to the evaluations (a name alone is enough for gpu and nccl; "
        "storage and checkpoint_io need args [--path, DIR], throughput [--experiment, NAME]); default: gpu, nccl",
    )
    kubernetes: JobSettings = Field(default_factory=JobSettings, description="How the Jobs run on Kubernetes")
    workflow: WorkflowSettings = Field(
        default_factory=WorkflowSettings, description="Heartbeats, timeouts, concurrency"
    )
    kueue: KueueSettings | None = Field(
        default=None,
        description="Admit the Jobs through Kueue (created suspended, with the queue and priority labels); "
        "none: Jobs go straight to the scheduler. Not part of the matrix digest: the queue does not change what "
        "is measured",
    )
    baselines: list[Name] = Field(
        default_factory=lambda: list(DEFAULT_BASELINES),
        max_length=32,
        description="Baseline names: published (e.g. libero/openvla-oft-rlinf), previous, best",
    )
    output_prefix: Uri = Field(default="", description="Where RunResults and reports are written")
    robustness: RobustnessSetting = Field(
        default=None,
        description="Perturbed episodes beside every run's standard ones, each with its unperturbed twin: quick "
        "(all seven axes at level 2, one per perturbed initial state in turn: +10% episodes), full (levels 1-3 of "
        "every axis on each perturbed initial state: +210%), AXIS[:LEVELS],... (e.g. camera:1,2,3,light:2) or the "
        "object {profile|axes, states}; the perturbed initial states are the first tenth of each task's trials; off "
        "(default) plays none (docs/robustness.md)",
    )
    adaptive: bool = Field(
        default=False,
        description="Adaptive budget (docs/statistics.md): evaluate in rounds, stop once the verdicts are decided, "
        "extend a borderline suite up to 6 runs; default: the fixed protocol of `runs` runs",
    )
    extra: dict[str, Any] = Field(default_factory=dict)
    origin: RequestOrigin = Field(
        default_factory=RequestOrigin,
        description="Set by the command that builds the matrix (demo, pipeline, watch): what the user ran, so a "
        "verdict's fix names their own lever. Not part of the matrix digest",
    )

    @field_validator("suites", "probes", mode="before")
    @classmethod
    def _names_to_objects(cls, value: Any) -> Any:
        # Let users write `suites: [libero_10, libero_goal]` or `probes: [gpu, nccl]` instead of objects.
        if isinstance(value, list):
            return [{"name": v} if isinstance(v, str) else v for v in value]
        return value

    @field_validator("shards")
    @classmethod
    def _shards_positive(cls, value: int | str) -> int | str:
        if isinstance(value, int) and not 1 <= value <= MAX_TASKS:
            raise ValueError(
                f"shards: {value} is not a shard count; give an integer from 1 (no sharding) to {MAX_TASKS}, or auto"
            )
        return value

    @field_validator("extra")
    @classmethod
    def _extra_fits(cls, value: dict[str, Any]) -> dict[str, Any]:
        size = len(json.dumps(value, default=str).encode())
        if size > MAX_EXTRA_BYTES:
            raise ValueError(
                f"extra is {size} bytes as JSON; at most {MAX_EXTRA_BYTES} fit (it travels in every execution input)"
            )
        return value

    @model_validator(mode="after")
    def _one_seed_per_run(self) -> Self:
        if len(self.seeds) < self.runs:
            raise ValueError(
                f"seeds has {len(self.seeds)} entries but runs={self.runs}: give one distinct seed per run"
            )
        if len(set(self.seeds[: self.runs])) != self.runs:
            raise ValueError(f"seeds {self.seeds[: self.runs]} repeat: each run needs a distinct seed")
        return self

    def matrix_fields(self) -> dict[str, Any]:
        """The matrix fields of this object (also of a subclass such as EvalRequest or IntakeConfig)."""
        return {name: getattr(self, name) for name in EvalMatrix.model_fields}

    def queue_allowance_s(self) -> int:
        """Seconds a Job may wait before it starts, added to its deadline for the Task state's timeout.

        Under Kueue a Job's activeDeadlineSeconds only counts once it is admitted, so the state must also
        allow the whole queueing limit (the queue sentinel fails the run when that is spent).
        """
        kueue_s = self.kueue.queue_limit_min * 60 if self.kueue is not None else 0
        return max(self.workflow.queue_s, kueue_s)

    def digest(self) -> str:
        """8 hex characters of sha256 over the canonical JSON of the matrix fields: same matrix, same digest."""
        matrix = self.model_dump(mode="json", include=set(EvalMatrix.model_fields))
        # Videos change what is recorded, shards how the work is split into Jobs, not what is measured: the
        # same matrix with other videos or shards is the same one (and keeps the digest it had before shards).
        for name in _LAYOUT_ONLY_FIELDS:
            matrix.pop(name, None)
        for name in ("adaptive", "robustness"):
            if not matrix.get(name):
                matrix.pop(name, None)  # a matrix without the option keeps the digest it had before it existed
        canonical = json.dumps(matrix, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()[:8]


class EvalRequest(Contract, EvalMatrix):
    """Evaluate one checkpoint: which checkpoint (and attempt), plus the eval matrix fields, flat."""

    request_id: str = Field(default="", description="Derived from the checkpoint when empty")
    checkpoint: CheckpointRef
    attempt: int = Field(default=1, ge=1, description="Evaluation attempt of this checkpoint and matrix (re-runs)")

    @field_validator("request_id")
    @classmethod
    def _request_id_is_a_path_segment(cls, value: str) -> str:
        return check_request_id(value)  # a hand-written ../.. would write outside the results prefix

    @model_validator(mode="after")
    def _derive_request_id(self) -> Self:
        if not self.request_id:
            # Checked here too: an id that a later read-back would refuse must fail now, at first sight.
            self.request_id = check_request_id(request_id_for(self.checkpoint))
        return self

    def result_root(self, digest: str | None = None) -> str:
        """Where this request's results go (:mod:`rlinf_bench.contracts.layout`); empty without an output prefix."""
        return result_root(self.output_prefix, self.request_id, digest) if self.output_prefix else ""

    def expand(self, root: str | None = None) -> list[EvalRun]:
        """The eval matrix as one EvalRun per (suite, run), each writing under ``root`` (default: :meth:`result_root`)."""
        root = self.result_root() if root is None else root
        out: list[EvalRun] = []
        for suite in self.suites:
            for run_index in range(self.runs):
                output = run_result_uri(root, suite.name, run_index) if root else None
                out.append(
                    EvalRun(
                        request_id=self.request_id,
                        checkpoint=self.checkpoint,
                        suite=suite.name,
                        run_index=run_index,
                        seed=self.seeds[run_index],
                        task_ids=suite.tasks,
                        trials_per_task=self.trials_per_task,
                        max_steps=suite.max_steps,
                        policy=self.policy,
                        workers=self.workers,
                        videos=self.videos,
                        output_uri=output,
                        protocol=self.protocol,
                        on_episode_error=self.on_episode_error,
                        robustness=self.robustness,
                    )
                )
        return out


#: The EvalRequest fields that say *what to run*, as opposed to *which checkpoint*.
EVAL_MATRIX_FIELDS: frozenset[str] = frozenset(EvalMatrix.model_fields)


def request_id_for(checkpoint: CheckpointRef) -> str:
    """A short deterministic id for a checkpoint: the same checkpoint always gets the same id.

    Used as the Step Functions execution name and in Job names, which is what makes
    re-submission idempotent. ``<experiment's ASCII part>-s<step>-<URI digest>``: any experiment name
    (``实验``, ``café-run``, emoji, hundreds of characters) gives an id of at most 55 ASCII characters;
    the digest keeps apart checkpoints whose names fold alike.
    """
    digest = hashlib.sha256(checkpoint.uri.rstrip("/").encode()).hexdigest()[:10]
    exp = ascii_part(checkpoint.experiment, 30)
    return f"{exp or 'exp'}-s{checkpoint.global_step}-{digest}"
