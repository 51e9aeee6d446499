"""``rlinf-bench doctor``: name every environment problem before it costs a run (docs/doctor.md)."""

from rlinf_bench.doctor.context import DoctorContext
from rlinf_bench.doctor.model import CheckResult, CheckStatus, DoctorReport, Target
from rlinf_bench.doctor.runner import run_doctor

__all__ = ["CheckResult", "CheckStatus", "DoctorContext", "DoctorReport", "Target", "run_doctor"]
