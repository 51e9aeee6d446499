"""The evaluation workflow, one typed function per state of statemachine/evaluate_checkpoint.asl.json.

plan -> submit (per Map item) -> [Jobs call back] -> aggregate -> publish, and the failure states
explain_run_failure / notify_failure. The Lambdas under functions/ and the embedded default both call
these; nothing else does the join. Each function takes its clients as arguments.

Importing it makes every log record of the process redact its message (:mod:`rlinf_bench.redaction`): the
Lambdas log through Powertools and the runtime's handler, neither of which knows our secrets' shapes.
"""

from rlinf_bench.redaction import install_log_redaction

install_log_redaction()
