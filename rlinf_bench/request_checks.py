"""The one check of an EvalRequest: everything a Job would trip over, found before any Job starts.

The Plan state runs :func:`validate_request` on the whole request, once; so does the direct route that
builds Jobs without the workflow (``rlinf_k8s.jobs.jobs_for_request``), which is its own plan. Nothing
between Plan and the Job checks the request again. The Job's edge checks its one run with
:func:`check_run` against what only it can see (the suite as installed in its image). Every error is an
:class:`InvalidRequestError` (or the suite/baseline registry's unknown-name error) naming the field and
the fix, so one bad value fails the execution once, at Plan, instead of failing every Job.
"""

from __future__ import annotations

from rlinf_bench.baselines import get_baselines
from rlinf_bench.contracts.probes import EVAL_IMAGE_PROBES, ProbeName, missing_probe_args
from rlinf_bench.contracts.request import REFERENCE_BASELINES, EvalRequest, EvalRun, ProbeSpec
from rlinf_bench.errors import ConfigError, InvalidRequestError
from rlinf_bench.suites import Benchmark, SuiteSpec, get_suite, resolve_task_ids

__all__ = [
    "JOB_SET_PROBE_ARGS",
    "check_probe",
    "check_robustness",
    "check_run",
    "check_suite",
    "image_for_probe",
    "image_for_suite",
    "validate_request",
]

#: Probe options the probe Job sets itself (the result path and the output format).
JOB_SET_PROBE_ARGS = ("--out", "--json")


def image_for_suite(request: EvalRequest, suite: str) -> str:
    """The image that runs ``suite``: the request field its benchmark's catalogue entry names (``image_field``)."""
    image: str = getattr(request, get_suite(suite).benchmark.image_field)
    return image


def image_for_probe(request: EvalRequest, probe: ProbeSpec) -> str:
    """The image that runs ``probe``: the eval image for the probes that play the simulator, else the probe image."""
    return request.image if probe.name in EVAL_IMAGE_PROBES else request.probe_image


def check_suite(name: str, tasks: list[int] | None, trials_per_task: int, *, where: str) -> SuiteSpec:
    """The suite ``name`` once its tasks and trial count fit it; ``where`` names the field (``suites[0]``)."""
    spec = get_suite(name)  # UnknownSuiteError lists the known suites and the closest one
    try:
        resolve_task_ids(spec, tasks)
    except ConfigError as exc:
        raise InvalidRequestError(f"{where}.tasks: {exc}") from exc
    if trials_per_task > spec.init_states:
        what = "initial states" if spec.benchmark.trials == "initial_states" else "seeded episodes in its protocol"
        raise InvalidRequestError(
            f"trials_per_task={trials_per_task} but suite {spec.name} ({where}) has {spec.init_states} {what} "
            f"per task, one trial each: set trials_per_task (--trials) to at most {spec.init_states}"
        )
    return spec


def check_run(run: EvalRun) -> SuiteSpec:
    """One eval run (what one Job executes) against its suite."""
    return check_suite(run.suite, run.task_ids, run.trials_per_task, where=f"suites[{run.suite}]")


#: The simulators whose scenes the native robustness axes perturb.
PERTURBABLE_SIMULATORS = ("libero",)


def check_robustness(spec: SuiteSpec, robustness: bool, *, where: str) -> None:
    """Refuse robustness on a suite whose simulator has no native axes (RoboTwin), naming the fix."""
    if robustness and spec.simulator not in PERTURBABLE_SIMULATORS:
        raise InvalidRequestError(
            f"robustness: suite {spec.name} ({where}) runs on {spec.simulator}, whose scenes have no robustness axes "
            f"here (only {', '.join(PERTURBABLE_SIMULATORS)} suites do): evaluate it in a request without "
            "robustness, or drop robustness"
        )


def check_probe(probe: ProbeSpec, *, where: str) -> None:
    """A probe's nodes and arguments; ``where`` names the field (``probes[1]``)."""
    if probe.nodes > 1 and probe.name != ProbeName.NCCL:
        raise InvalidRequestError(
            f"{where}.nodes: probe {probe.name!r} runs on one node; only 'nccl' takes nodes > 1 (got {probe.nodes})"
        )
    for arg in probe.args:
        if arg.split("=", 1)[0] in JOB_SET_PROBE_ARGS:
            raise InvalidRequestError(f"{where}.args: {arg!r} is set by the probe Job itself; remove it")
    missing = missing_probe_args(probe.name, probe.args)
    if missing:
        # Without them the probe exits on its argument parser before its first heartbeat.
        raise InvalidRequestError(
            f"{where}.args: probe {probe.name.value!r} cannot start without {'; '.join(missing)}: add it to the "
            f"probe's args (probes: [{{name: {probe.name.value}, args: [OPTION, VALUE]}}]) or remove the probe"
        )


def _benchmarks(request: EvalRequest) -> dict[str, tuple[Benchmark, list[str]]]:
    """The request's benchmarks (catalogue order of first appearance), each with its suites."""
    out: dict[str, tuple[Benchmark, list[str]]] = {}
    for suite in request.suites:
        benchmark = get_suite(suite.name).benchmark
        out.setdefault(benchmark.key, (benchmark, []))[1].append(suite.name)
    return out


def _check_images(request: EvalRequest) -> None:
    for benchmark, suites in _benchmarks(request).values():
        if not getattr(request, benchmark.image_field).strip():
            raise InvalidRequestError(
                f"{benchmark.image_field}: the request has {benchmark.label} suites ({', '.join(suites)}) but no "
                f"`{benchmark.image_field}`: set it to {benchmark.image_hint}"
            )
    if any(p.name in EVAL_IMAGE_PROBES for p in request.probes) and not request.image.strip():
        raise InvalidRequestError(
            "image: probe sim_canary runs in the eval image (it plays the simulator) but the request has no `image`: "
            "set it to the eval image (docker/Dockerfile.eval; the workflow fills it from EVAL_IMAGE)"
        )
    if any(p.name not in EVAL_IMAGE_PROBES for p in request.probes) and not request.probe_image.strip():
        raise InvalidRequestError(
            "probe_image: the request has probes but no `probe_image`: set it to the probe image "
            "(see docker/Dockerfile.probe; the workflow fills it from PROBE_IMAGE)"
        )


def _check_timeouts(request: EvalRequest) -> None:
    wf, k8s = request.workflow, request.kubernetes
    deadlines = [k8s.eval_deadline_s] * bool(request.suites) + [k8s.probe_deadline_s] * bool(request.probes)
    if deadlines and wf.heartbeat_s >= min(deadlines) + wf.queue_s:
        raise InvalidRequestError(
            f"workflow.heartbeat_s={wf.heartbeat_s} must be below a Job's timeout ({min(deadlines) + wf.queue_s} s = "
            "deadline + workflow.queue_s); lower it or raise the deadline"
        )


def _check_seeds(request: EvalRequest) -> None:
    # The contract's 0 to 2**32 - 1 is the simulator's range; a benchmark that seeds its episodes above the run
    # seed takes fewer run seeds (the catalogue says how many).
    for benchmark, _ in _benchmarks(request).values():
        high = [seed for seed in request.seeds[: request.runs] if seed > benchmark.max_run_seed]
        if high:
            raise InvalidRequestError(
                f"seeds: {high} too large for {benchmark.label}, whose episodes of run seed s use "
                f"{benchmark.seeding}, within the simulator's 0 to 2**32 - 1: use seeds from 0 to "
                f"{benchmark.max_run_seed}"
            )


def _check_workflow(request: EvalRequest) -> None:
    if not request.suites:
        raise InvalidRequestError(
            "suites is empty: a checkpoint's evaluation needs at least one suite (e.g. the default matrix's); "
            "probes alone run with `rlinf-bench probe`"
        )
    if not request.output_prefix:
        raise InvalidRequestError("output_prefix: results need a place; set `output_prefix` or RESULTS_PREFIX")


def validate_request(request: EvalRequest, *, workflow: bool = False) -> None:
    """Raise naming the field and the fix for anything in ``request`` that no Job could run; with ``workflow``,
    also what the evaluation workflow needs (a suite to evaluate the checkpoint on, a place for the results)."""
    if not request.suites and not request.probes:
        raise InvalidRequestError("suites and probes are both empty: nothing to run; name at least one suite")
    if workflow:
        _check_workflow(request)
    for i, suite in enumerate(request.suites):
        spec = check_suite(suite.name, suite.tasks, request.trials_per_task, where=f"suites[{i}]")
        check_robustness(spec, request.robustness is not None, where=f"suites[{i}]")
    _check_seeds(request)
    _check_images(request)
    names = [p.name for p in request.probes]
    twice = sorted({str(n) for n in names if names.count(n) > 1})
    if twice:
        raise InvalidRequestError(f"probes: {', '.join(twice)} listed twice; each probe runs once per request")
    for i, probe in enumerate(request.probes):
        check_probe(probe, where=f"probes[{i}]")
    get_baselines([b for b in request.baselines if b not in REFERENCE_BASELINES])  # UnknownBaselineError
    _check_timeouts(request)
