"""Kubernetes Jobs for evaluations and probes: manifests, cluster access, submission, local execution.

Modules (import the one you need; the package itself imports nothing heavy):

- ``names``: DNS-1123 names and label values (validated when users choose them, derived otherwise).
- ``jobspec``: typed builders returning official ``kubernetes`` client models.
- ``jobs``: an ``EvalRequest`` to its Jobs (one per suite x run, one per probe).
- ``pod_security``: the Pod Security "restricted" checks.
- ``eks_auth`` / ``client``: EKS bearer tokens, DescribeCluster, ApiClient with bounded retries.
- ``submitter``: the interface; ``kubernetes_backend`` and ``local_executor`` implement it.
"""
