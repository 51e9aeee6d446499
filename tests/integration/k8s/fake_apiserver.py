"""An HTTP-level fake of the Kubernetes API server, on loopback, for the paths rlinf-bench uses.

It speaks real REST + JSON (the official client cannot tell it from a cluster for these calls):
batch/v1 Jobs (create/get/get status/list/delete), core/v1 Services (create), Pods (list by label)
and pod logs, Kueue Workloads (listed; tests set them with ``set_workload``), plus what ``rlinf-bench doctor`` reads: Namespaces, Nodes (by label) and
SelfSubjectAccessReviews (answered from ``denied``). Like the real server it validates bodies against the OpenAPI schema (422), answers 409
AlreadyExists, 404 NotFound, 401 for tokens it does not accept, and garbage-collects owned objects on
a Background delete. Tests inject faults (a status code for the next N matching requests) and set Job
status and pods to play the controller's part.
"""

from __future__ import annotations

import base64
import copy
import json
import re
import threading
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse

import kubernetes_validate

K8S_VERSION = "1.31.0"
TOKEN_PREFIX = "k8s-aws-v1."

_ROUTES = [
    ("jobs", re.compile(r"^/apis/batch/v1/namespaces/(?P<ns>[^/]+)/jobs(?:/(?P<name>[^/]+))?(?P<sub>/status)?$")),
    ("services", re.compile(r"^/api/v1/namespaces/(?P<ns>[^/]+)/services(?:/(?P<name>[^/]+))?$")),
    ("pods", re.compile(r"^/api/v1/namespaces/(?P<ns>[^/]+)/pods(?:/(?P<name>[^/]+))?(?P<sub>/log)?$")),
    (
        "workloads",
        re.compile(r"^/apis/kueue\.x-k8s\.io/v1beta1/namespaces/(?P<ns>[^/]+)/workloads(?:/(?P<name>[^/]+))?$"),
    ),
]
_KIND = {
    "jobs": ("Job", "batch/v1"),
    "services": ("Service", "v1"),
    "pods": ("Pod", "v1"),
    "workloads": ("Workload", "kueue.x-k8s.io/v1beta1"),
}


@dataclass
class Fault:
    method: str
    resource: str
    status: int
    remaining: int


@dataclass
class Recorded:
    method: str
    path: str
    query: dict[str, list[str]]
    token: str | None
    status: int = 0


@dataclass
class FakeCluster:
    """The fake's state; tests read and change it directly (under ``lock``)."""

    objects: dict[str, dict[tuple[str, str], dict[str, Any]]] = field(
        default_factory=lambda: {"jobs": {}, "services": {}, "pods": {}, "workloads": {}}
    )
    logs: dict[tuple[str, str], str] = field(default_factory=dict)
    faults: list[Fault] = field(default_factory=list)
    requests: list[Recorded] = field(default_factory=list)
    require_eks_token: bool = False  # True: only tokens shaped like EKS IAM tokens pass
    # What `rlinf-bench doctor` reads: Namespace objects, nodes, and SelfSubjectAccessReview answers.
    namespaces: set[str] = field(default_factory=lambda: {"rlinf-eval"})
    nodes: list[dict[str, Any]] = field(default_factory=list)
    denied: set[tuple[str, str]] = field(default_factory=set)  # (verb, resource[/subresource]) answered "not allowed"
    forbidden_reads: set[str] = field(default_factory=set)  # "namespaces" / "nodes": answered 403
    rejected_tokens: set[str] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def fail_next(self, method: str, resource: str, status: int, times: int = 1) -> None:
        with self.lock:
            self.faults.append(Fault(method, resource, status, times))

    def set_job_status(self, ns: str, name: str, status: dict[str, Any]) -> None:
        with self.lock:
            self.objects["jobs"][(ns, name)]["status"] = status

    def add_pod(self, ns: str, job: str, pod_name: str, status: dict[str, Any], log: str = "") -> None:
        with self.lock:
            self.objects["pods"][(ns, pod_name)] = {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": _meta(pod_name, ns, labels={"batch.kubernetes.io/job-name": job, "job-name": job}),
                "spec": {"containers": [{"name": "eval", "image": "x"}]},
                "status": status,
            }
            self.logs[(ns, pod_name)] = log

    def set_workload(self, ns: str, job: str, conditions: list[dict[str, Any]]) -> None:
        """Kueue's part: the Workload it keeps for ``job`` (owned by the Job), with these status conditions."""
        with self.lock:
            owner = self.objects["jobs"][(ns, job)]["metadata"]
            name = f"job-{job}-{owner['uid'][:5]}"
            self.objects["workloads"][(ns, name)] = {
                "apiVersion": "kueue.x-k8s.io/v1beta1",
                "kind": "Workload",
                "metadata": {
                    **_meta(name, ns, labels={"kueue.x-k8s.io/job-uid": owner["uid"]}),
                    "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": job, "uid": owner["uid"]}],
                },
                "status": {"conditions": conditions},
            }

    def add_node(self, name: str, labels: dict[str, str], taints: list[str], gpus: int) -> None:
        """A node with these labels, NoSchedule taints (by key) and allocatable nvidia.com/gpu."""
        with self.lock:
            self.nodes.append(
                {
                    "apiVersion": "v1",
                    "kind": "Node",
                    "metadata": _meta(name, "", labels=labels),
                    "spec": {"taints": [{"key": k, "effect": "NoSchedule"} for k in taints]},
                    "status": {"allocatable": {"cpu": "16", "nvidia.com/gpu": str(gpus)}},
                }
            )

    def count(self, method: str, resource: str) -> int:
        with self.lock:
            return sum(1 for r in self.requests if r.method == method and f"/{resource}" in r.path)


def _meta(name: str, ns: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "name": name,
        "namespace": ns,
        "uid": str(uuid.uuid4()),
        "resourceVersion": "1",
        "creationTimestamp": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "labels": labels or {},
    }


def _status(code: int, reason: str, message: str) -> dict[str, Any]:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "status": "Failure",
        "code": code,
        "reason": reason,
        "message": message,
    }


def _matches(obj: dict[str, Any], selector: str | None) -> bool:
    if not selector:
        return True
    labels = obj.get("metadata", {}).get("labels") or {}
    for term in selector.split(","):
        key, _, value = term.partition("=")
        if labels.get(key) != value:
            return False
    return True


def _route(path: str) -> tuple[str, re.Match[str]] | None:
    for resource, pattern in _ROUTES:
        m = pattern.match(path)
        if m:
            return resource, m
    return None


def token_is_eks_shaped(token: str) -> bool:
    """True when ``token`` decodes to a presigned STS GetCallerIdentity URL signed with x-k8s-aws-id."""
    if not token.startswith(TOKEN_PREFIX):
        return False
    raw = token[len(TOKEN_PREFIX) :]
    url = base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4)).decode()
    q = parse_qs(urlparse(url).query)
    return q.get("Action") == ["GetCallerIdentity"] and "x-k8s-aws-id" in q.get("X-Amz-SignedHeaders", [""])[0]


class _Handler(BaseHTTPRequestHandler):
    cluster: FakeCluster  # set on the subclass made per server
    _record: Recorded

    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
        return

    def _send(self, code: int, body: Any, content_type: str = "application/json") -> None:
        data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
        self._record.status = code  # before replying, so the client never sees an unrecorded answer
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _handle(self, method: str) -> None:
        url = urlparse(self.path)
        auth = self.headers.get("Authorization") or ""
        token = auth.removeprefix("Bearer ") if auth.startswith("Bearer ") else None
        c = self.cluster
        self._record = Recorded(method, url.path, parse_qs(url.query), token)
        with c.lock:
            c.requests.append(self._record)
        if token is None or token in c.rejected_tokens or (c.require_eks_token and not token_is_eks_shaped(token)):
            return self._send(401, _status(401, "Unauthorized", "Unauthorized"))
        answer = self._cluster_scoped(method, url)
        if answer is not None:
            return self._send(answer[0], answer[1])
        routed = _route(url.path)
        if routed is None:
            return self._send(404, _status(404, "NotFound", f"no route {url.path}"))
        resource, m = routed
        with c.lock:
            for fault in c.faults:
                if fault.remaining > 0 and fault.method == method and fault.resource == resource:
                    fault.remaining -= 1
                    return self._send(fault.status, _status(fault.status, "InternalError", "injected fault"))
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length)) if length else None
        code, out, ctype = self._dispatch(method, resource, m.group("ns"), m.group("name"), m.groupdict(), url, body)
        self._send(code, out, ctype)

    def _cluster_scoped(self, method: str, url: Any) -> tuple[int, Any] | None:
        """Namespaces, nodes and SelfSubjectAccessReview; None for every other path."""
        c = self.cluster
        if method == "POST" and url.path == "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews":
            length = int(self.headers.get("Content-Length") or 0)
            review = json.loads(self.rfile.read(length)) if length else {}
            attrs = (review.get("spec") or {}).get("resourceAttributes") or {}
            what = attrs.get("resource", "") + (f"/{attrs['subresource']}" if attrs.get("subresource") else "")
            with c.lock:
                allowed = (attrs.get("verb", ""), what) not in c.denied
            reason = "" if allowed else f"RBAC: no rule allows {attrs.get('verb')} {what}"
            return 201, {**review, "status": {"allowed": allowed, "reason": reason}}
        m = re.match(r"^/api/v1/namespaces/(?P<ns>[^/]+)$", url.path)
        if method == "GET" and m:
            if "namespaces" in c.forbidden_reads:
                return 403, _status(403, "Forbidden", "namespaces is forbidden")
            if m.group("ns") not in c.namespaces:
                return 404, _status(404, "NotFound", f'namespaces "{m.group("ns")}" not found')
            return 200, {"apiVersion": "v1", "kind": "Namespace", "metadata": _meta(m.group("ns"), "")}
        if method == "GET" and url.path == "/api/v1/nodes":
            if "nodes" in c.forbidden_reads:
                return 403, _status(403, "Forbidden", "nodes is forbidden")
            sel = (parse_qs(url.query).get("labelSelector") or [None])[0]
            with c.lock:
                items = [n for n in c.nodes if _matches(n, sel)]
            return 200, {"kind": "NodeList", "apiVersion": "v1", "metadata": {}, "items": items}
        return None

    def _dispatch(
        self, method: str, resource: str, ns: str, name: str | None, groups: dict[str, Any], url: Any, body: Any
    ) -> tuple[int, Any, str]:
        c = self.cluster
        q = parse_qs(url.query)
        store = c.objects[resource]
        kind, api_version = _KIND[resource]
        with c.lock:
            if method == "POST" and name is None:
                try:
                    kubernetes_validate.validate(body, K8S_VERSION, strict=True)
                except kubernetes_validate.ValidationError as exc:
                    return 422, _status(422, "Invalid", str(exc)), "application/json"
                key = (ns, body["metadata"]["name"])
                if key in store:
                    msg = f'{resource}.{api_version.split("/")[0]} "{key[1]}" already exists'
                    return 409, _status(409, "AlreadyExists", msg), "application/json"
                obj = copy.deepcopy(body)
                obj["metadata"] = {**obj["metadata"], **_meta(key[1], ns, obj["metadata"].get("labels"))}
                if resource == "jobs":
                    obj["status"] = {}
                store[key] = obj
                return 201, obj, "application/json"
            if method == "GET" and name is None:
                sel = (q.get("labelSelector") or [None])[0]
                items = [o for (n, _), o in store.items() if n == ns and _matches(o, sel)]
                return (
                    200,
                    {"kind": f"{kind}List", "apiVersion": api_version, "metadata": {}, "items": items},
                    "application/json",
                )
            obj = store.get((ns, name or ""))
            if obj is None:
                return 404, _status(404, "NotFound", f'{resource} "{name}" not found'), "application/json"
            if method == "GET" and groups.get("sub") == "/log":
                text = c.logs.get((ns, name or ""), "")
                tail = int((q.get("tailLines") or ["0"])[0])
                lines = text.splitlines()
                return 200, "\n".join(lines[-tail:] if tail else lines) + "\n", "text/plain"
            if method == "GET":
                return 200, obj, "application/json"
            if method == "DELETE":
                del store[(ns, name or "")]
                if (q.get("propagationPolicy") or [""])[0] in ("Background", "Foreground"):
                    self._collect_garbage(ns, obj)
                return 200, {"kind": "Status", "apiVersion": "v1", "status": "Success"}, "application/json"
        return 405, _status(405, "MethodNotAllowed", method), "application/json"

    def _collect_garbage(self, ns: str, owner: dict[str, Any]) -> None:
        uid = owner["metadata"]["uid"]
        name = owner["metadata"]["name"]
        for key, obj in list(self.cluster.objects["services"].items()):
            if any(ref.get("uid") == uid for ref in obj["metadata"].get("ownerReferences") or []):
                del self.cluster.objects["services"][key]
        for key, obj in list(self.cluster.objects["pods"].items()):
            if key[0] == ns and obj["metadata"]["labels"].get("batch.kubernetes.io/job-name") == name:
                del self.cluster.objects["pods"][key]

    def do_GET(self) -> None:
        self._handle("GET")

    def do_POST(self) -> None:
        self._handle("POST")

    def do_DELETE(self) -> None:
        self._handle("DELETE")


class FakeApiServer:
    """Start with ``with FakeApiServer() as fake:``; ``fake.url`` is the API endpoint."""

    def __init__(self) -> None:
        self.cluster = FakeCluster()
        handler = type("Handler", (_Handler,), {"cluster": self.cluster})
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> FakeApiServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
