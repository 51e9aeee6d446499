"""The evaluation workflow, one typed function per state of statemachine/evaluate_checkpoint.asl.json.

plan -> submit (per Map item) -> [Jobs call back] -> aggregate -> publish, and the failure states
explain_run_failure / notify_failure. The Lambdas under functions/ and the embedded default both call
these; nothing else does the join. Each function takes its clients as arguments.
"""
