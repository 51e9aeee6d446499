"""From a fresh shell after the demo: the commands the README's "What you just saw" shows and the closing lines
the pipeline prints run as printed, in a shell whose PATH has nothing of the project's until the printed
``source .venv/bin/activate`` line puts it there.

GIVEN a folder laid out as the checkout after ``make demo`` (``.venv``, ``demo-out`` with an evaluated step 100
and an unevaluated step 200), WHEN each command is run by bash with a user's minimal PATH, THEN it exits 0 (``mlflow
ui`` serves its page). The README's last line, ``pipeline … --policy …``, is run by test_pipeline_policy.py with a
smaller budget.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from eval_runner.demo_checkpoint import write_demo_checkpoint
from eval_runner.expert_checkpoint import ExpertSettings
from rlinf_local.budget import small_matrix_yaml

pytestmark = [pytest.mark.sim, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
#: What a user's shell has before anything of the project is on PATH.
USER_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": os.environ.get("HOME", "/tmp"), "LANG": "C.UTF-8"}


class Checkout:
    """The folder a user works in after ``make demo``: ``.venv`` and ``demo-out``, and what the pipeline printed."""

    def __init__(self, root: Path, printed: str) -> None:
        self.root = root
        self.printed = printed

    def closing_commands(self) -> tuple[str, list[str]]:
        """The activation line and the commands under "next, in your shell:", as printed."""
        block = self.printed.split("next, in your shell:\n", 1)[1].splitlines()
        commands = [line.strip() for line in block if line.startswith("  ")]
        activate = [c for c in commands if c.startswith("source ")]
        assert len(activate) == 1, self.printed  # the user's PATH has no venv: the line must be there
        return activate[0], [c for c in commands if not c.startswith("source ")]

    def readme_commands(self) -> tuple[str, list[str]]:
        """The block after "Then, from the same folder:" in the README's "What you just saw"."""
        text = (REPO / "README.md").read_text().split("Then, from the same folder:", 1)[1]
        block = re.search(r"```bash\n(.*?)```", text, re.DOTALL)
        assert block is not None
        commands = [line.strip() for line in block.group(1).splitlines() if line.strip()]
        return commands[0], commands[1:]

    def run(self, activate: str, command: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        script = f"{activate}\n{command}\n"
        return subprocess.run(
            ["bash", "-c", script], cwd=self.root, env=USER_ENV, capture_output=True, text=True, timeout=timeout
        )

    def serve(self, activate: str, command: str, url: str, timeout: float = 240) -> str:
        """Start ``command`` (a server), wait until ``url`` answers, stop it; returns the page's start."""
        proc = subprocess.Popen(
            ["bash", "-c", f"{activate}\nexec {command}"], cwd=self.root, env=USER_ENV,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
        )  # fmt: skip
        try:
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                assert proc.poll() is None, proc.communicate()[0][-3000:]
                try:
                    with urllib.request.urlopen(url, timeout=5) as page:
                        return page.read(200).decode(errors="replace")
                except OSError:
                    time.sleep(2)
            raise AssertionError(f"{command}: {url} did not answer within {timeout} s")
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=60)


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Checkout:
    root = tmp_path_factory.mktemp("checkout")
    (root / ".venv").symlink_to(Path(sys.prefix))
    runs = root / "demo-out" / "runs"
    for step, noise in ((100, 1.5), (200, 0.0)):
        write_demo_checkpoint(runs, "demo", step, expert=ExpertSettings(noise=noise))
    config = root / "tiny.yaml"
    config.write_text(
        small_matrix_yaml(root / "scratch", max_steps=5, tasks=(0,), trials=1, runs=1, workers=1,
                          probes=("storage",), videos=0, policy="builtin:expert?settings=checkpoint")
    )  # fmt: skip
    cli = [str(Path(sys.prefix) / "bin" / "rlinf-bench"), "pipeline", "demo-out/runs/demo/checkpoints/global_step_100"]
    proc = subprocess.run(
        [*cli, "--config", str(config), "--out", "demo-out"],
        cwd=root, env={**os.environ, **USER_ENV}, capture_output=True, text=True, timeout=1800,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    return Checkout(root, proc.stdout)


def _port_free(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) != 0


def test_given_the_pipelines_closing_lines_then_each_command_runs_as_printed(checkout: Checkout) -> None:
    activate, commands = checkout.closing_commands()
    assert any(c.startswith("rlinf-bench status --out") for c in commands)

    for command in commands:
        if command.startswith("mlflow ui"):
            if not _port_free(5000):
                pytest.skip("port 5000 is taken on this machine: mlflow ui cannot serve there")
            assert "<" in checkout.serve(activate, command, "http://127.0.0.1:5000/")  # the MLflow UI's page
            continue
        proc = checkout.run(activate, command)
        assert proc.returncode == 0, (command, proc.stderr[-3000:])
        assert "demo-s100" in proc.stdout


def test_given_the_readmes_what_you_just_saw_then_each_command_runs_as_printed(checkout: Checkout) -> None:
    activate, commands = checkout.readme_commands()
    assert activate.split("#")[0].strip() == "source .venv/bin/activate"

    ran = []
    for command in commands:
        if command.startswith("rlinf-bench pipeline"):
            continue  # test_pipeline_policy.py runs it with a smaller budget
        if command.startswith("mlflow ui"):
            if _port_free(5000):
                assert "<" in checkout.serve(activate, command, "http://127.0.0.1:5000/")
            continue
        proc = checkout.run(activate, command)
        assert proc.returncode == 0, (command, proc.stderr[-3000:])
        ran.append(proc.stdout)
    status, baselines, backfill = ran
    assert "demo-s100" in status and "libero/openvla-oft-rlinf" in baselines
    assert "step      100  already_evaluated" in backfill and "step      300  not_found" in backfill
