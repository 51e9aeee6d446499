"""The Jobs' outermost frame: any exit that is not an interruption reports failure to Step Functions.

A Job started by the state machine must call back, or the state waits for its heartbeat timeout (30
minutes by default) and the execution learns nothing. The entry points' own code reports what it
catches; this frame catches what happens before or around it: an argument error (argparse's
SystemExit 2), an import error, a crash in start-up. Only an interruption (Ctrl-C, SIGTERM, exit 130)
is left to Kubernetes, whose retried pod keeps the heartbeats going. It imports nothing but the
standard library until it has to send, so an import error in the Job's own code is still reported.
"""

from __future__ import annotations

import logging
import os
import sys
import traceback
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["INTERRUPTED_EXIT", "run_job"]

log = logging.getLogger(__name__)

#: The exit status of an interrupted Job (128 + SIGINT): left to Kubernetes' retry.
INTERRUPTED_EXIT = 130
_TOKEN_ENV = "RLINF_BENCH_TASK_TOKEN"  # rlinf_aws.task_callback.TOKEN_ENV (not imported: see the docstring)
_CAUSE_TAIL = 4000


def run_job(
    load_main: Callable[[], Callable[[], int]],
    *,
    program: str,
    env: Mapping[str, str] = os.environ,
    send_failure: Callable[[str, str], None] | None = None,
) -> int:
    """Import the entry point with ``load_main``, run it, and report any non-interrupt failure; returns the exit status.

    ``send_failure(error, cause)`` defaults to SendTaskFailure with the Job's task token; it is not
    called when the Job's own code already sent its final callback (success or failure).
    """
    try:
        main = load_main()
        return main()
    except KeyboardInterrupt:
        return INTERRUPTED_EXIT
    except SystemExit as exc:
        code = _exit_code(exc)
        if code not in (0, INTERRUPTED_EXIT):
            _report(
                env,
                send_failure,
                "JobStartFailed",
                f"{program} exited with status {code} before it called back{_stderr_hint(code)}",
            )
        return code
    except BaseException as exc:  # import errors, crashes in start-up: the execution must hear of them
        tail = "".join(traceback.format_exception(exc))[-_CAUSE_TAIL:]
        _report(env, send_failure, type(exc).__name__ or "JobCrashed", f"{program} crashed: {exc}\n{tail}")
        traceback.print_exception(exc)
        return 1


def _exit_code(exc: SystemExit) -> int:
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code
    print(exc.code, file=sys.stderr)  # sys.exit("message") prints it and exits 1
    return 1


def _stderr_hint(code: int) -> str:
    return " (an argument error: see the Job's log for the option it names)" if code == 2 else " (see the Job's log)"


def _report(env: Mapping[str, str], send_failure: Callable[[str, str], None] | None, error: str, cause: str) -> None:
    token = env.get(_TOKEN_ENV, "")
    if not token or _final_callback_sent():
        return
    try:
        (send_failure or _sender(token))(error[:256], cause[:32768])
    except Exception as exc:  # the heartbeat timeout is the last resort; say why it will be needed
        why = f"{type(exc).__name__}: {str(exc).replace(token, '<redacted>')}"  # an SDK error may quote the token
        log.error("could not report the failure to the state machine: %s", why)
        print(f"could not report the failure to the state machine: {why}", file=sys.stderr)


def _final_callback_sent() -> bool:
    module = sys.modules.get("rlinf_aws.task_callback")
    return bool(module is not None and getattr(module, "final_callback_sent", lambda: False)())


def _sender(token: str) -> Callable[[str, str], None]:
    def send(error: str, cause: str) -> None:
        import boto3
        from botocore.config import Config

        client: Any = boto3.client("stepfunctions", config=Config(retries={"mode": "standard"}))
        client.send_task_failure(taskToken=token, error=error, cause=cause)

    return send
