"""The doctor's framework: what a check returns and what it is given (docs/doctor.md).

The checks themselves reach AWS, Kubernetes, MLflow and the simulator, so they live in ``rlinf_doctor``.
"""

from rlinf_bench.doctor.context import DoctorContext
from rlinf_bench.doctor.model import CheckResult, CheckStatus, DoctorReport, Target

__all__ = ["CheckResult", "CheckStatus", "DoctorContext", "DoctorReport", "Target"]
