"""Services a run talks to: policy servers (reachable, which protocol) and MLflow (reachable, experiment, write)."""

from __future__ import annotations

import json
import os
import socket
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlparse

from rlinf_bench.doctor.context import DoctorContext
from rlinf_bench.doctor.model import CheckResult
from rlinf_doctor.mlflow_trial import RUN_NAME, TAG, RefusedError, Trial, write_trial

#: The protocol name our websocket policy server announces in its first message (docs/policies.md).
POLICY_PROTOCOL = "rlinf-bench-policy"


def _tcp(host: str, port: int, timeout: float, wait_s: float = 0.0) -> str | None:
    """None when a TCP connection opens (retrying for up to ``wait_s``), else why not."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            with socket.create_connection((host, port), timeout=timeout):
                return None
        except OSError as exc:
            reason = exc.strerror or type(exc).__name__
        left = deadline - time.monotonic()
        if left <= 0:
            return reason + (f", still after {wait_s:.0f} s" if wait_s else "")
        time.sleep(min(1.0, left))


def check_policy_servers(ctx: DoctorContext) -> list[CheckResult]:
    """Each named server accepts a connection and announces a protocol the runner speaks."""
    if not ctx.policy_servers:
        return [ctx.skip("policy.server", "no policy server named", "pass --policy server:ws://HOST:PORT to check one")]
    return [_one_server(ctx, uri) for uri in ctx.policy_servers]


def _one_server(ctx: DoctorContext, uri: str) -> CheckResult:
    name = "policy.server"
    parsed = urlparse(uri)
    if parsed.scheme not in ("ws", "wss", "http", "https") or not parsed.hostname:
        return ctx.problem(name, f"{uri!r} is not a ws:// URI", "name the server as server:ws://HOST:PORT")
    port = parsed.port or (443 if parsed.scheme in ("wss", "https") else 80)
    refused = _tcp(parsed.hostname, port, ctx.timeout_s, ctx.policy_wait_s)
    if refused:
        return ctx.problem(
            name,
            f"{uri}: cannot connect to {parsed.hostname}:{port} ({refused})",
            "start it (rlinf-bench serve-policy ... --port PORT) or fix the address; from a pod, use the "
            "policy Service's DNS name and check its NetworkPolicy",
        )
    if parsed.scheme in ("http", "https"):
        return ctx.problem(
            name,
            f"{uri}: reachable, but rlinf-bench evaluate speaks websocket (ws://) to policy servers",
            f"use server:ws://{parsed.hostname}:{port}",
        )
    try:
        import msgpack
        from websockets.sync.client import connect

        with connect(uri, open_timeout=ctx.timeout_s, max_size=None, compression=None) as ws:
            first = ws.recv(timeout=ctx.timeout_s)
        meta = msgpack.unpackb(first, raw=False) if isinstance(first, bytes) else json.loads(first)
    except ImportError as exc:
        return ctx.problem(name, f"cannot check {uri}: {exc}", "pip install -e '.[libero]'")
    except Exception as exc:  # handshake refused, timeout, not msgpack
        return ctx.problem(
            name,
            f"{uri}: port open but no policy-server greeting ({type(exc).__name__}: {exc})",
            "check that the process on that port is an rlinf-bench (or openpi-style) websocket policy server",
        )
    if isinstance(meta, dict) and meta.get("protocol") == POLICY_PROTOCOL:
        policy = meta.get("policy") or {}
        cams = (meta.get("obs_spec") or {}).get("cameras")
        return ctx.ok(
            name,
            f"{uri}: {POLICY_PROTOCOL} v{meta.get('protocol_version')}, policy {policy.get('name', '?')}, "
            f"cameras {cams}",
            metadata=meta,
        )
    keys = sorted(meta) if isinstance(meta, dict) else type(meta).__name__
    return ctx.warn(
        name,
        f"{uri}: answers a websocket greeting without the {POLICY_PROTOCOL} protocol field (keys: {keys}); "
        "an openpi-style server",
        "check the observation keys it expects against docs/policies.md before a full run",
    )


# -- MLflow ------------------------------------------------------------------------------------------


def _headers() -> dict[str, str]:
    token = os.environ.get("MLFLOW_TRACKING_TOKEN")
    if token:
        return {"Authorization": f"Bearer {token}"}
    user, password = os.environ.get("MLFLOW_TRACKING_USERNAME"), os.environ.get("MLFLOW_TRACKING_PASSWORD")
    if user and password:
        import base64

        return {"Authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()}
    return {}


def _call(uri: str, path: str, timeout: float, body: dict[str, Any] | None = None) -> tuple[int, Any]:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(
        uri.rstrip("/") + path,
        data=data,
        method="POST" if data else "GET",
        headers={"Content-Type": "application/json", **_headers()},
    )
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            raw = resp.read()
            return resp.status, json.loads(raw) if raw.strip().startswith(b"{") else raw.decode()
    except urllib.error.HTTPError as exc:
        raw = exc.read()
        try:
            return exc.code, json.loads(raw)
        except json.JSONDecodeError:
            return exc.code, raw.decode(errors="replace")


def check_mlflow(ctx: DoctorContext) -> list[CheckResult]:
    """The tracking server answers, the experiment exists, and a run can be created (then deleted)."""
    uri = ctx.tracking_uri or os.environ.get("MLFLOW_TRACKING_URI", "")
    if not uri:
        return [
            ctx.skip(
                "mlflow.reachable",
                "no MLflow tracking URI",
                "pass --tracking-uri or set MLFLOW_TRACKING_URI to check publishing",
            )
        ]
    scheme = urlparse(uri).scheme
    if scheme in ("http", "https"):
        return _http_mlflow(ctx, uri)
    if scheme in ("sqlite", "file", ""):
        return _local_mlflow(ctx, uri)
    return [ctx.skip("mlflow.reachable", f"{uri}: scheme {scheme!r} is not checked by doctor")]


def _http_mlflow(ctx: DoctorContext, uri: str) -> list[CheckResult]:
    try:
        status, _ = _call(uri, "/health", ctx.timeout_s)
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        return [
            ctx.problem(
                "mlflow.reachable",
                f"MLflow at {uri} is unreachable ({reason})",
                "start the tracking server or fix --tracking-uri / MLFLOW_TRACKING_URI; from a pod, check the "
                "server's Service, security group and that the URI is not localhost",
            )
        ]
    if status != 200:
        return [ctx.problem("mlflow.reachable", f"{uri}/health answered {status}", "check the server's logs")]
    results = [ctx.ok("mlflow.reachable", f"{uri}/health answered 200")]
    status, body = _call(
        uri, f"/api/2.0/mlflow/experiments/get-by-name?experiment_name={quote(ctx.experiment)}", ctx.timeout_s
    )
    if status == 404 or (isinstance(body, dict) and body.get("error_code") == "RESOURCE_DOES_NOT_EXIST"):
        results.append(
            ctx.warn(
                "mlflow.experiment",
                f"experiment {ctx.experiment!r} does not exist yet",
                "`rlinf-bench compare --publish` creates it; or pass --experiment NAME",
            )
        )
        results.append(ctx.skip("mlflow.write", "no experiment to write a test run into"))
        return results
    if status in (401, 403):
        results.append(ctx.problem("mlflow.experiment", f"{uri}: {status} reading experiments", _AUTH_FIX))
        return results
    if status != 200 or not isinstance(body, dict):
        results.append(ctx.problem("mlflow.experiment", f"{uri}: get-by-name answered {status}", "check the server"))
        return results
    exp_id = body["experiment"]["experiment_id"]
    results.append(ctx.ok("mlflow.experiment", f"experiment {ctx.experiment!r} (id {exp_id})"))
    if not ctx.write_test:
        return [*results, ctx.skip("mlflow.write", "not needed here (read only)")]
    return [*results, _http_write(ctx, uri, exp_id)]


def _http_write(ctx: DoctorContext, uri: str, exp_id: str) -> CheckResult:
    """Create a tagged run in the experiment, then delete it: proves write access without leaving data."""
    return _write_result(ctx, write_trial(_RestTrialStore(uri, exp_id, ctx.timeout_s), uri))


class _RestTrialStore:
    """The trial run through MLflow's REST API (no client retries: a doctor answers in seconds)."""

    def __init__(self, uri: str, exp_id: str, timeout: float) -> None:
        self.uri, self.exp_id, self.timeout = uri, exp_id, timeout

    def create(self, tags: dict[str, str]) -> str:
        body = {
            "experiment_id": self.exp_id,
            "run_name": RUN_NAME,
            "tags": [{"key": k, "value": v} for k, v in tags.items()],
        }
        status, answer = _call(self.uri, "/api/2.0/mlflow/runs/create", self.timeout, body)
        if status != 200 or not isinstance(answer, dict):
            raise RefusedError(f"creating a run answered {status}: {answer}")
        return str(answer["run"]["info"]["run_id"])

    def find(self, nonce: str) -> list[str]:
        body = {"experiment_ids": [self.exp_id], "filter": f"tags.`{TAG}` = '{nonce}'", "max_results": 10}
        status, answer = _call(self.uri, "/api/2.0/mlflow/runs/search", self.timeout, body)
        if status != 200 or not isinstance(answer, dict):
            raise RuntimeError(f"searching runs answered {status}: {answer}")
        return [str(r["info"]["run_id"]) for r in answer.get("runs", [])]

    def delete(self, run_id: str) -> None:
        status, answer = _call(self.uri, "/api/2.0/mlflow/runs/delete", self.timeout, {"run_id": run_id})
        if status != 200:
            raise RuntimeError(f"runs/delete answered {status}: {answer}")


def _write_result(ctx: DoctorContext, trial: Trial) -> CheckResult:
    """The mlflow.write check from what the trial did."""
    if trial.left:
        return ctx.warn(
            "mlflow.write",
            f"created run {', '.join(trial.left)} in {ctx.experiment!r} (write access) but could not delete it: "
            + "; ".join(trial.left.values()),
            trial.leftover_fix(),
        )
    if trial.error:
        cleaned = f"; the run it had made ({', '.join(trial.deleted)}) was deleted" if trial.deleted else ""
        return ctx.problem("mlflow.write", f"creating a run failed: {trial.error}{cleaned}", _AUTH_FIX)
    return ctx.ok("mlflow.write", f"created and deleted run {', '.join(trial.deleted)} in {ctx.experiment!r}")


_AUTH_FIX = "set MLFLOW_TRACKING_TOKEN (or MLFLOW_TRACKING_USERNAME/PASSWORD) for an identity with write access"


def _local_mlflow(ctx: DoctorContext, uri: str) -> list[CheckResult]:
    parsed = urlparse(uri)
    path = Path(parsed.path if parsed.scheme else uri)
    folder = path.parent if parsed.scheme == "sqlite" else path
    existing = next((p for p in (folder, *folder.parents) if p.exists()), folder)
    if not os.access(existing, os.W_OK):
        return [ctx.problem("mlflow.reachable", f"{uri}: {existing} is not writable", "use a writable path")]
    if not path.exists():
        return [
            ctx.ok("mlflow.reachable", f"{uri}: local store, created at the first publish"),
            ctx.skip("mlflow.experiment", "the store does not exist yet"),
        ]
    results = [ctx.ok("mlflow.reachable", f"{uri}: local store")]
    try:
        from mlflow.tracking import MlflowClient
    except ImportError:
        return [*results, ctx.problem("mlflow.experiment", "mlflow is not installed", "pip install -e '.[tracking]'")]
    client = MlflowClient(uri)
    exp = client.get_experiment_by_name(ctx.experiment)
    if exp is None:
        return [*results, ctx.warn("mlflow.experiment", f"no experiment {ctx.experiment!r} yet", "created at publish")]
    found = ctx.ok("mlflow.experiment", f"experiment {ctx.experiment!r} (id {exp.experiment_id})")
    if not ctx.write_test:
        return [*results, found, ctx.skip("mlflow.write", "not needed here (read only)")]
    return [*results, found, _write_result(ctx, write_trial(_ClientTrialStore(client, exp.experiment_id), uri))]


class _ClientTrialStore:
    """The trial run through MlflowClient, for sqlite and file stores."""

    def __init__(self, client: Any, exp_id: str) -> None:
        self.client, self.exp_id = client, exp_id

    def create(self, tags: dict[str, str]) -> str:
        return str(self.client.create_run(self.exp_id, run_name=RUN_NAME, tags=tags).info.run_id)

    def find(self, nonce: str) -> list[str]:
        runs = self.client.search_runs([self.exp_id], filter_string=f"tags.`{TAG}` = '{nonce}'")
        return [str(r.info.run_id) for r in runs]

    def delete(self, run_id: str) -> None:
        self.client.delete_run(run_id)
