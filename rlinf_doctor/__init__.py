"""``rlinf-bench doctor``'s checks and the Jobs' preflight: each check reaches the thing it checks (AWS,
Kubernetes, MLflow, MuJoCo/EGL, LIBERO), so they live here, outside the core. The results' types
(``CheckResult``, ``DoctorReport``) and the check context are the core's (``rlinf_bench.doctor``).
"""
