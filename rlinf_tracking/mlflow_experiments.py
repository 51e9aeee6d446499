"""The MLflow experiment the runs live in: created typed for classic ML, with its artifacts beside the store,
and found from either its own name or the name of the training experiment whose runs it holds.

Runs of every training experiment go to one MLflow experiment (``RLinf`` by default: the brief's query reads
it), each tagged with its training experiment. Users know their training experiment's name (``demo``), so
every command that takes an experiment accepts that name too.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlparse

from rlinf_bench.errors import ConfigError
from rlinf_tracking import mlflow_names as names
from rlinf_tracking.tracking_retry import RetryPolicy, call_tracking

if TYPE_CHECKING:
    from mlflow.tracking import MlflowClient

DEFAULT_EXPERIMENT = "RLinf"
# MLflow 3's UI reads this experiment tag (mlflow/server/js: ExperimentKind) to choose the experiment's
# first page; untyped experiments open on the GenAI overview. Ours hold classic training/eval runs.
EXPERIMENT_KIND_TAG = "mlflow.experimentKind"
CLASSIC_ML_KIND = "custom_model_development"
ARTIFACTS_FOLDER = "mlartifacts"


def default_artifact_location(tracking_uri: str) -> str | None:
    """Where a new experiment's artifacts go when none is given.

    For a sqlite store, a folder beside the database (MLflow's own default is ``./mlruns`` in whatever the
    current directory happens to be); for a server or a file store, None: the store's artifact root.
    """
    parsed = urlparse(tracking_uri)
    if parsed.scheme != "sqlite":
        return None
    # sqlite:///relative.db or sqlite:////absolute/path.db (SQLAlchemy's spelling)
    path = unquote(tracking_uri.removeprefix("sqlite:///").split("?", 1)[0])
    if not path or path == ":memory:":
        return None
    return str(Path(path).resolve().parent / ARTIFACTS_FOLDER)


def _call(client: MlflowClient, what: str, fn: Any, policy: RetryPolicy) -> Any:
    return call_tracking(fn, what=what, target=str(client.tracking_uri), policy=policy)


def ensure_experiment(
    client: MlflowClient, name: str, *, artifact_location: str | None = None, retry: RetryPolicy | None = None
) -> str:
    """The id of experiment ``name``, created when missing; typed for classic ML either way."""
    policy = retry or RetryPolicy()
    exp = _call(client, "find the experiment", lambda: client.get_experiment_by_name(name), policy)
    if exp is None:
        location = artifact_location or default_artifact_location(str(client.tracking_uri))
        create = functools.partial(
            client.create_experiment, name, artifact_location=location, tags={EXPERIMENT_KIND_TAG: CLASSIC_ML_KIND}
        )
        return str(_call(client, "create the experiment", create, policy))
    if EXPERIMENT_KIND_TAG not in exp.tags:  # created by an older version or by hand
        tag = functools.partial(client.set_experiment_tag, exp.experiment_id, EXPERIMENT_KIND_TAG, CLASSIC_ML_KIND)
        _call(client, "type the experiment", tag, policy)
    return str(exp.experiment_id)


@dataclass(frozen=True)
class ExperimentChoice:
    """Where to read: the MLflow experiment, and the training experiment to keep (None: all of them)."""

    mlflow_experiment: str
    training_experiment: str | None


def training_experiments(client: MlflowClient, experiment_id: str, *, retry: RetryPolicy | None = None) -> list[str]:
    """Names of the training experiments with checkpoint runs in an MLflow experiment."""
    policy = retry or RetryPolicy()
    seen: set[str] = set()
    token: str | None = None
    while True:
        page = _call(
            client,
            "list training experiments",
            functools.partial(
                client.search_runs,
                [experiment_id],
                filter_string=f"tags.`{names.TAG_KIND}` = 'checkpoint'",
                max_results=1000,
                page_token=token,
            ),
            policy,
        )
        seen.update(str(r.data.tags.get(names.TAG_EXPERIMENT, "")) for r in page)
        token = page.token
        if not token:
            return sorted(s for s in seen if s)


def resolve_experiment(
    client: MlflowClient,
    name: str,
    *,
    default: str = DEFAULT_EXPERIMENT,
    training_experiment: str | None = None,
    retry: RetryPolicy | None = None,
) -> ExperimentChoice:
    """``name`` as an MLflow experiment, else as a training experiment inside ``default``.

    Raises ConfigError listing the MLflow experiments and the training experiments that exist when
    ``name`` is neither, so a typo never reads as "0 checkpoints".
    """
    policy = retry or RetryPolicy()
    exp = _call(client, "find the experiment", lambda: client.get_experiment_by_name(name), policy)
    if exp is not None:
        return ExperimentChoice(name, training_experiment)
    home = _call(client, "find the experiment", lambda: client.get_experiment_by_name(default), policy)
    trained = training_experiments(client, str(home.experiment_id), retry=policy) if home is not None else []
    if name in trained:
        if training_experiment and training_experiment != name:
            raise ConfigError(
                f"--experiment {name} is a training experiment and --training-experiment says "
                f"{training_experiment}; give one of them"
            )
        return ExperimentChoice(default, name)
    listed = _call(client, "list experiments", lambda: client.search_experiments(max_results=200), policy)
    mlflow_names = sorted(str(e.name) for e in listed if str(e.name) != "Default")
    raise ConfigError(
        f"experiment {name!r} not found at {client.tracking_uri}: it is neither an MLflow experiment "
        f"({', '.join(mlflow_names) or 'none'}) nor a training experiment with runs in {default!r} "
        f"({', '.join(trained) or 'none'}); pass one of those names to --experiment"
    )


def publish_experiment(
    client: MlflowClient,
    name: str,
    *,
    training_experiment: str,
    default: str = DEFAULT_EXPERIMENT,
    retry: RetryPolicy | None = None,
) -> str:
    """The MLflow experiment to publish into when the user named ``name``.

    Naming the checkpoint's own training experiment (``--experiment demo``) means "demo's runs", which live
    in ``default`` like every other training experiment's, unless an MLflow experiment of that name exists.
    """
    if not training_experiment or name != training_experiment or name == default:
        return name
    policy = retry or RetryPolicy()
    exp = _call(client, "find the experiment", lambda: client.get_experiment_by_name(name), policy)
    return name if exp is not None else default
