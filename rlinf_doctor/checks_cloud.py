"""Where Jobs are submitted from: AWS (credentials, region, the stack's outputs) and Kubernetes
(kubeconfig or EKS, the namespace, RBAC to create Jobs, GPU nodes with the expected label and taint)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from rlinf_bench.doctor.context import DoctorContext
from rlinf_bench.doctor.model import CheckResult

CREDENTIALS_FIX = (
    "aws configure / aws sso login / export AWS_PROFILE=NAME; in a pod, give its service account an IAM role "
    "(IRSA or EKS Pod Identity)"
)
RBAC_FIX = (
    "kubectl apply -k deploy/k8s (Role rlinf-bench-submitter) and map this identity to the group "
    "rlinf-bench-submitters (EKS access entry); see docs/kubernetes.md"
)
#: What submitting and following a Job needs (deploy/k8s/rbac.yaml); the first one is indispensable.
RBAC_NEEDS: tuple[tuple[str, str, str, str], ...] = (
    ("create", "batch", "jobs", ""),
    ("get", "batch", "jobs", ""),
    ("delete", "batch", "jobs", ""),
    ("list", "", "pods", ""),
    ("get", "", "pods", "log"),
    ("create", "", "services", ""),
)


def _on_ec2() -> bool:
    """True on EC2 hardware (where the instance metadata service is the credential source of last resort)."""
    try:
        return "amazon" in Path("/sys/class/dmi/id/sys_vendor").read_text().lower()
    except OSError:
        return False


@contextlib.contextmanager
def _no_imds_off_ec2() -> Iterator[None]:
    # Off EC2 the metadata address answers nothing (or something else): do not send it credential lookups.
    if _on_ec2() or "AWS_EC2_METADATA_DISABLED" in os.environ:
        yield
        return
    os.environ["AWS_EC2_METADATA_DISABLED"] = "true"
    try:
        yield
    finally:
        os.environ.pop("AWS_EC2_METADATA_DISABLED", None)


def check_aws(ctx: DoctorContext, session: Any = None) -> list[CheckResult]:
    """Credentials resolve and work (STS), a region is set, and the intake stack's outputs are there."""
    try:
        import boto3
        from botocore.config import Config
    except ImportError:
        return [ctx.problem("aws.credentials", "boto3 is not installed", "pip install -e '.[aws]'")]
    with _no_imds_off_ec2():
        session = session or boto3.session.Session(region_name=ctx.region or None)
        creds = session.get_credentials()
        if creds is None:
            return [
                _missing(
                    ctx,
                    "aws.credentials",
                    "no AWS credentials (environment, profile, SSO, web identity)",
                    CREDENTIALS_FIX,
                ),
                ctx.skip("aws.region", "no credentials"),
                ctx.skip("aws.stack", "no credentials"),
                ctx.skip("aws.buckets", "no credentials"),
            ]
        region = session.region_name
        results: list[CheckResult] = []
        config = Config(connect_timeout=ctx.timeout_s, read_timeout=ctx.timeout_s, retries={"max_attempts": 1})
        try:
            who = session.client("sts", region_name=region or "us-east-1", config=config).get_caller_identity()
            results.append(ctx.ok("aws.credentials", f"{who['Arn']} ({creds.method})", account=who["Account"]))
        except Exception as exc:  # ClientError (expired, invalid), EndpointConnectionError
            return [
                ctx.problem("aws.credentials", f"credentials from {creds.method} do not work: {exc}", CREDENTIALS_FIX),
                ctx.skip("aws.region", "credentials do not work"),
                ctx.skip("aws.stack", "credentials do not work"),
                ctx.skip("aws.buckets", "credentials do not work"),
            ]
        if not region:
            results.append(ctx.problem("aws.region", "no AWS region set", "export AWS_REGION=us-east-1 (or --region)"))
            return [*results, ctx.skip("aws.stack", "no region"), ctx.skip("aws.buckets", "no region")]
        results.append(ctx.ok("aws.region", region))
        stack = _stack(ctx, session, region, config)
        results.append(stack)
        results.append(_buckets(ctx, session, region, config, stack.details.get("outputs") or {}))
        return results


def _buckets(ctx: DoctorContext, session: Any, region: str, config: Any, outputs: dict[str, str]) -> CheckResult:
    """Every bucket the stack outputs (checkpoints, results) answers HeadBucket from here."""
    names = sorted({v.removeprefix("s3://").split("/")[0] for k, v in outputs.items() if k.endswith("Bucket")})
    if not names:
        return ctx.skip("aws.buckets", "no bucket among the stack's outputs")
    s3 = session.client("s3", region_name=region, config=config)
    failed = []
    for name in names:
        try:
            s3.head_bucket(Bucket=name)
        except Exception as exc:  # ClientError 403/404, EndpointConnectionError
            failed.append(f"{name}: {exc}")
    if failed:
        return ctx.problem(
            "aws.buckets",
            "; ".join(failed),
            "grant this identity s3:ListBucket/GetObject/PutObject on those buckets, or check the VPC endpoint",
        )
    return ctx.ok("aws.buckets", f"reachable: {', '.join(names)}")


def _stack(ctx: DoctorContext, session: Any, region: str, config: Any) -> CheckResult:
    stack = ctx.stack_name or os.environ.get("RLINF_BENCH_STACK", "")
    if not stack:
        return ctx.skip("aws.stack", "no stack named", "pass --stack NAME (or set RLINF_BENCH_STACK) once deployed")
    try:
        found = session.client("cloudformation", region_name=region, config=config).describe_stacks(StackName=stack)
    except Exception as exc:  # ClientError: does not exist / access denied
        return ctx.problem(
            "aws.stack",
            f"stack {stack} in {region}: {exc}",
            "deploy it (sam build && sam deploy --guided) or name the right stack and region",
        )
    info = found["Stacks"][0]
    outputs = {o["OutputKey"]: o["OutputValue"] for o in info.get("Outputs", [])}
    status = info["StackStatus"]
    if not status.endswith("_COMPLETE") or "ROLLBACK" in status:
        return ctx.problem("aws.stack", f"stack {stack} is {status}", "see its events in the CloudFormation console")
    return ctx.ok(
        "aws.stack", f"stack {stack} {status}; outputs: {', '.join(sorted(outputs)) or 'none'}", outputs=outputs
    )


def _missing(ctx: DoctorContext, name: str, measured: str, fix: str) -> CheckResult:
    """Not configured at all: a failure where the target needs it, else a skip that says how to enable it."""
    if ctx.required(name.split(".", 1)[0]):
        return ctx.problem(name, measured, fix)
    return ctx.skip(name, measured, fix)


# -- Kubernetes --------------------------------------------------------------------------------------


def kubeconfig_path(ctx: DoctorContext) -> Path:
    if ctx.kubeconfig:
        return Path(ctx.kubeconfig)
    env = os.environ.get("KUBECONFIG", "")
    return Path(env.split(os.pathsep)[0]) if env else Path.home() / ".kube" / "config"


def _api_client(ctx: DoctorContext) -> tuple[Any, CheckResult]:
    """An ApiClient and the k8s.config result (None client when there is nothing usable)."""
    name = "k8s.config"
    if ctx.eks_cluster:
        import boto3

        from rlinf_k8s.api_client import api_client_for_eks

        with _no_imds_off_ec2():
            session = boto3.session.Session(region_name=ctx.region or None)
            region = session.region_name
            if not region:
                return None, ctx.problem(name, f"eks:{ctx.eks_cluster}: no AWS region", "export AWS_REGION or --region")
            try:
                caller = api_client_for_eks(
                    session.client("eks", region_name=region),
                    session.client("sts", region_name=region),
                    ctx.eks_cluster,
                )
            except Exception as exc:
                return None, ctx.problem(name, f"EKS cluster {ctx.eks_cluster} in {region}: {exc}", CREDENTIALS_FIX)
        return caller.api_client, ctx.ok(name, f"EKS cluster {ctx.eks_cluster} at {caller.host}")
    path = kubeconfig_path(ctx)
    if not path.is_file():
        fix = "aws eks update-kubeconfig --name CLUSTER (or pass --kubeconfig / --eks CLUSTER)"
        return None, _missing(ctx, name, f"no kubeconfig at {path}", fix)
    try:
        doc = yaml.safe_load(path.read_text()) or {}
    except (OSError, yaml.YAMLError) as exc:
        return None, ctx.problem(name, f"{path} cannot be read: {exc}", "fix or regenerate the kubeconfig")
    contexts = [c.get("name") for c in doc.get("contexts") or []]
    context = ctx.kube_context or doc.get("current-context") or ""
    if not context:
        return None, ctx.problem(
            name,
            f"{path} has no current context (contexts: {', '.join(map(str, contexts)) or 'none'})",
            f"kubectl --kubeconfig {path} config use-context NAME, or pass --kube-context NAME",
        )
    if context not in contexts:
        return None, ctx.problem(name, f"{path}: context {context!r} is not defined", f"pick one of {contexts}")
    from kubernetes import config as kconfig

    try:
        client = kconfig.new_client_from_config(config_file=str(path), context=context)
    except Exception as exc:  # ConfigException: missing cluster/user entries, exec plugin errors
        return None, ctx.problem(name, f"{path} context {context}: {exc}", "fix the kubeconfig entry")
    client.configuration.retries = 0
    return client, ctx.ok(name, f"{path}, context {context}, API {client.configuration.host}")


def check_k8s(ctx: DoctorContext) -> list[CheckResult]:
    """Config, then the namespace, RBAC (SelfSubjectAccessReview) and GPU nodes, each named."""
    client, first = _api_client(ctx)
    if client is None:
        rest = ("k8s.namespace", "k8s.rbac", "k8s.gpu_nodes")
        return [first, *(ctx.skip(n, "no usable cluster configuration") for n in rest)]
    from kubernetes import client as k8s

    core = k8s.CoreV1Api(client)
    try:
        namespace = _namespace(ctx, core, k8s.BatchV1Api(client))
    except _Unreachable as exc:
        fix = "check the API endpoint, VPN/security group, and that the cluster runs"
        return [first, ctx.problem("k8s.namespace", f"API server {client.configuration.host}: {exc}", fix)] + [
            ctx.skip(n, "API server unreachable") for n in ("k8s.rbac", "k8s.gpu_nodes")
        ]
    return [first, namespace, _rbac(ctx, k8s.AuthorizationV1Api(client)), _gpu_nodes(ctx, core)]


class _Unreachable(Exception):
    pass


def _namespace(ctx: DoctorContext, core: Any, batch: Any) -> CheckResult:
    from kubernetes.client.exceptions import ApiException
    from urllib3.exceptions import HTTPError

    name, ns = "k8s.namespace", ctx.namespace
    timeout = (ctx.timeout_s, ctx.timeout_s)
    try:
        core.read_namespace(ns, _request_timeout=timeout)
        return ctx.ok(name, f"namespace {ns} exists")
    except HTTPError as exc:
        raise _Unreachable(str(exc)) from exc
    except ApiException as exc:
        if exc.status == 404:
            return ctx.problem(name, f"namespace {ns} does not exist", "kubectl apply -k deploy/k8s (or --namespace)")
        if exc.status == 401:
            return ctx.problem(name, "the API server rejected the credentials (401)", "refresh the kubeconfig token")
        if exc.status != 403:
            return ctx.problem(name, f"reading namespace {ns}: {exc.status} {exc.reason}", "check the API server")
    # Namespace-scoped RBAC (ours) may not read Namespace objects: listing Jobs there still proves access.
    try:
        batch.list_namespaced_job(ns, limit=1, _request_timeout=timeout)
    except ApiException as exc:
        return ctx.problem(name, f"namespace {ns}: cannot read it or list its Jobs ({exc.status})", RBAC_FIX)
    return ctx.ok(name, f"namespace {ns}: Jobs listable (Namespace objects not readable by this identity)")


def _rbac(ctx: DoctorContext, authz: Any) -> CheckResult:
    from kubernetes import client as k8s

    denied: list[str] = []
    for verb, group, resource, sub in RBAC_NEEDS:
        review = k8s.V1SelfSubjectAccessReview(
            spec=k8s.V1SelfSubjectAccessReviewSpec(
                resource_attributes=k8s.V1ResourceAttributes(
                    namespace=ctx.namespace, verb=verb, group=group, resource=resource, subresource=sub or None
                )
            )
        )
        try:
            answer = authz.create_self_subject_access_review(review, _request_timeout=(ctx.timeout_s, ctx.timeout_s))
        except Exception as exc:  # ApiException / connection errors
            return ctx.problem("k8s.rbac", f"SelfSubjectAccessReview failed: {exc}", RBAC_FIX)
        if not answer.status.allowed:
            what = f"{verb} {resource}{'/' + sub if sub else ''}"
            denied.append(what + (f" ({answer.status.reason})" if answer.status.reason else ""))
    if any(d.startswith("create jobs") for d in denied):
        return ctx.problem(
            "k8s.rbac", f"this identity may not create jobs in {ctx.namespace}; denied: {'; '.join(denied)}", RBAC_FIX
        )
    if denied:
        return ctx.warn("k8s.rbac", f"may create Jobs in {ctx.namespace}, but denied: {'; '.join(denied)}", RBAC_FIX)
    return ctx.ok("k8s.rbac", f"create/get/delete jobs, list pods, read logs, create services in {ctx.namespace}")


def _gpu_nodes(ctx: DoctorContext, core: Any) -> CheckResult:
    from kubernetes.client.exceptions import ApiException

    name = "k8s.gpu_nodes"
    selector = ",".join(f"{k}={v}" for k, v in ctx.gpu_node_selector.items())
    try:
        nodes = core.list_node(label_selector=selector, _request_timeout=(ctx.timeout_s, ctx.timeout_s)).items
    except ApiException as exc:
        if exc.status == 403:
            return ctx.warn(
                name,
                f"this identity may not list nodes (namespace-scoped RBAC): GPU nodes with {selector} not checked",
                f"ask a cluster admin: kubectl get nodes -l {selector} -o wide",
            )
        return ctx.problem(name, f"listing nodes: {exc.status} {exc.reason}", "check the API server")
    if not nodes:
        return ctx.problem(
            name,
            f"no node carries the label {selector}: Jobs would stay Pending",
            f"label the GPU node group {selector}, or set job_settings.node_selector to the label it has",
        )
    rows, untainted, no_gpu = [], [], []
    for node in nodes:
        taints = [t.key for t in (node.spec.taints or [])]
        gpus = (node.status.allocatable or {}).get("nvidia.com/gpu", "0")
        rows.append(f"{node.metadata.name} ({gpus} GPUs)")
        if ctx.gpu_taint_key not in taints:
            untainted.append(node.metadata.name)
        if str(gpus) in ("", "0"):
            no_gpu.append(node.metadata.name)
    if no_gpu:
        return ctx.problem(
            name,
            f"nodes with {selector} but no allocatable nvidia.com/gpu: {', '.join(no_gpu)}",
            "install the NVIDIA device plugin (or the GPU operator) on the GPU node group",
        )
    if untainted:
        return ctx.warn(
            name,
            f"{len(nodes)} GPU node(s); without the {ctx.gpu_taint_key} taint: {', '.join(untainted)}",
            f"taint GPU nodes {ctx.gpu_taint_key}=true:NoSchedule so other pods do not take their GPUs",
        )
    return ctx.ok(name, f"{len(nodes)} node(s) with {selector} and taint {ctx.gpu_taint_key}: {', '.join(rows)}")
