"""Kubernetes Jobs for evaluations and probes: manifests, cluster access, submission, status.

Modules (import the one you need; the package itself imports nothing heavy):

- ``names``: DNS-1123 names and label values (validated when users choose them, derived otherwise).
- ``jobspec``: typed builders returning official ``kubernetes`` client models.
- ``jobs``: an ``EvalRequest`` to its Jobs (one per suite x run, one per probe).
- ``pod_security``: the Pod Security "restricted" checks.
- ``eks_auth`` / ``client``: EKS bearer tokens, DescribeCluster, ApiClient with bounded retries.
- ``submitter``: the interface; ``kubernetes_backend`` implements it here, the embedded default's
  ``rlinf_local.local_executor`` on one machine; ``submitter_factory`` picks a cluster from one string.
"""
