"""MLflow 3's model-centric view of a training run: one LoggedModel per checkpoint, a registered model per
training experiment with one version per checkpoint, and the alias ``best`` on the best of them.

The LoggedModel carries the checkpoint's eval metrics (logged with its model_id, so the MLflow UI's
model page shows them) and points back at the checkpoint's parent run. "Best" follows the verdict
rules' best-so-far: the highest mean success rate among complete evaluations, the later step on a tie
(:func:`rlinf_bench.stats.verdicts.pick_previous_and_best`). Aliases replace the registry stages that
MLflow deprecated in 2.9.
"""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rlinf_bench.contracts import CheckpointReport
from rlinf_tracking import mlflow_names as names
from rlinf_tracking.tracking_retry import RetryPolicy, call_tracking

if TYPE_CHECKING:
    from mlflow.tracking import MlflowClient

log = logging.getLogger(__name__)

BEST_ALIAS = "best"
MODEL_TYPE = "rlinf-checkpoint"
_TAG_SR = "success_rate"
_TAG_STEP = "global_step"
_TAG_COMPLETE = "complete"
# Over REST a ModelVersion comes back without its model_id; the tag keeps the link readable everywhere.
TAG_LOGGED_MODEL = "logged_model_id"


def registered_model_name(mlflow_experiment: str, training_experiment: str) -> str:
    """``RLinf.demo``: one registered model per training experiment, named after where its runs live."""
    return names.metric_key(f"{mlflow_experiment}.{training_experiment or 'checkpoint'}").replace("/", "_")


def logged_model_name(report: CheckpointReport) -> str:
    step = report.global_step if report.global_step is not None else "unknown"
    return names.metric_key(f"{report.experiment or 'checkpoint'}-global_step_{step}").replace("/", "_")


@dataclass(frozen=True)
class PublishedModel:
    model_id: str
    registered_model: str
    version: str
    best_version: str | None


class CheckpointModels:
    """Creates and links a checkpoint's LoggedModel and model version; moves the ``best`` alias."""

    def __init__(self, client: MlflowClient, *, mlflow_experiment: str, retry: RetryPolicy) -> None:
        self.client = client
        self.mlflow_experiment = mlflow_experiment
        self.retry = retry

    def _call(self, what: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
        call = functools.partial(fn, *args, **kwargs)
        return call_tracking(call, what=what, target=str(self.client.tracking_uri), policy=self.retry)

    def create(self, exp_id: str, run_id: str, report: CheckpointReport) -> str:
        """A LoggedModel for the checkpoint, made by the parent run ``run_id``; returns its model id."""
        params = {
            "checkpoint": report.checkpoint_uri,
            "global_step": str(report.global_step if report.global_step is not None else ""),
            "policy": report.policy,
        }
        tags = {names.TAG_EXPERIMENT: report.experiment, names.TAG_REQUEST: report.request_id or report.checkpoint_uri}
        model = self._call(
            "create the checkpoint's LoggedModel",
            self.client.create_logged_model,
            exp_id,
            name=logged_model_name(report),
            source_run_id=run_id,
            tags=tags,
            params=params,
            model_type=MODEL_TYPE,
        )
        return str(model.model_id)

    def finish(self, run_id: str, model_id: str, report: CheckpointReport) -> PublishedModel:
        """Mark the LoggedModel READY (FAILED when incomplete), register it, move ``best``."""
        from mlflow.entities import LoggedModelOutput

        step = report.global_step or 0
        self._call(
            "link the LoggedModel to its run", self.client.log_outputs, run_id, [LoggedModelOutput(model_id, step)]
        )
        self._call(
            "finalize the LoggedModel",
            self.client.finalize_logged_model,
            model_id,
            "READY" if report.complete else "FAILED",
        )
        name = registered_model_name(self.mlflow_experiment, report.experiment)
        self._ensure_registered(name, report.experiment)
        tags = {
            _TAG_STEP: str(report.global_step if report.global_step is not None else ""),
            _TAG_COMPLETE: str(report.complete),
            names.TAG_REQUEST: report.request_id or report.checkpoint_uri,
            TAG_LOGGED_MODEL: model_id,
        }
        if report.success_rate is not None:
            tags[_TAG_SR] = repr(float(report.success_rate))
        # The version's source is the LoggedModel's artifact location: a sqlite store cannot resolve a
        # ``models:/<id>`` source (it looks the id up in the registry's own store and fails).
        logged = self._call("read the LoggedModel", self.client.get_logged_model, model_id)
        version = self._call(
            "register the checkpoint",
            self.client.create_model_version,
            name,
            source=str(logged.artifact_location),
            run_id=run_id,
            model_id=model_id,
            tags=tags,
            description=f"{report.checkpoint_uri}",
        )
        best = self.move_best_alias(name)
        return PublishedModel(model_id, name, str(version.version), best)

    def _ensure_registered(self, name: str, training_experiment: str) -> None:
        from mlflow.exceptions import MlflowException

        try:
            self._call("find the registered model", self.client.get_registered_model, name)
        except MlflowException as exc:
            if getattr(exc, "error_code", "") != "RESOURCE_DOES_NOT_EXIST":
                raise
            self._call(
                "create the registered model",
                self.client.create_registered_model,
                name,
                description=f"Checkpoints of training experiment {training_experiment!r}, one version each; "
                f"alias '{BEST_ALIAS}' marks the best complete evaluation (highest success rate).",
            )

    def move_best_alias(self, name: str) -> str | None:
        """Point ``best`` at the complete version with the highest success rate (later step on a tie)."""
        versions = self._call(
            "list the checkpoint versions", self.client.search_model_versions, f"name = '{name.replace(chr(39), '')}'"
        )

        def key(v: Any) -> tuple[float, int]:
            step = v.tags.get(_TAG_STEP, "")
            digits = step.removeprefix("-")
            return float(v.tags[_TAG_SR]), int(step) if digits.isascii() and digits.isdigit() else -1

        ranked = [v for v in versions if v.tags.get(_TAG_COMPLETE) == "True" and _TAG_SR in v.tags]
        if not ranked:
            return None
        best = max(ranked, key=key)
        self._call("move the best alias", self.client.set_registered_model_alias, name, BEST_ALIAS, str(best.version))
        return str(best.version)

    def delete_for_run(self, run_id: str) -> None:
        """Remove the model versions and LoggedModels an earlier publication (run ``run_id``) made."""
        versions = self._call(
            "find the earlier publication's versions", self.client.search_model_versions, f"run_id = '{run_id}'"
        )
        for v in versions:
            self._call("delete an earlier version", self.client.delete_model_version, v.name, v.version)
            model_id = v.model_id or v.tags.get(TAG_LOGGED_MODEL)
            if model_id:
                self._call("delete an earlier LoggedModel", self.client.delete_logged_model, model_id)
