"""The policies a checkpoint's own files point to, so an error can say which ``--policy`` evaluates it.

A checkpoint says what reads it only through files beside its weights: the demo's checkpoints carry the
scripted expert's settings (``actor/model_state_dict/expert_settings.json``), and an RLinf run keeps the
config it trained with in its output folder (Hydra's ``.hydra/config.yaml``, next to ``checkpoints/``),
from which the ``rlinf:`` policy builds the model. Files are only looked at, never read or executed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["EXPERT_SETTINGS_FILE", "RLINF_RUN_CONFIG", "NamedPolicy", "named_policies", "policy_advice"]

#: The scripted expert's settings in a demo checkpoint, relative to ``…/global_step_<N>``.
EXPERT_SETTINGS_FILE = "actor/model_state_dict/expert_settings.json"
#: The config an RLinf run trained with, relative to the run's folder (``<log root>/<experiment>``).
RLINF_RUN_CONFIG = ".hydra/config.yaml"


@dataclass(frozen=True)
class NamedPolicy:
    """A policy spec that evaluates a checkpoint, and the file that says so."""

    spec: str
    file: Path
    what: str

    def line(self) -> str:
        return f"--policy '{self.spec}' ({self.what}: {self.file})"


def named_policies(checkpoint: Path) -> list[NamedPolicy]:
    """The policies the files of ``checkpoint`` (a ``…/checkpoints/global_step_<N>`` folder) point to."""
    found: list[NamedPolicy] = []
    settings = checkpoint / EXPERT_SETTINGS_FILE
    if settings.is_file():
        found.append(
            NamedPolicy(
                "builtin:expert?settings=checkpoint",
                settings,
                "it carries a scripted expert's settings, as the demo's checkpoints do",
            )
        )
    config = checkpoint.parent.parent / RLINF_RUN_CONFIG
    if checkpoint.parent.name == "checkpoints" and config.is_file():
        found.append(
            NamedPolicy(
                f"rlinf:{config}",
                config,
                "its RLinf run's config; add &model_path=SFT_BASE when the config's does not exist here, and run "
                "from .venv-rlinf (docs/evaluate-rlinf.md)",
            )
        )
    return found


def policy_advice(checkpoint: Path, command: str = "") -> str:
    """What to tell a user whose policy cannot read ``checkpoint``: the policies its files name, each with the
    command that evaluates it (``command`` is the user's, with ``{policy}`` where the flag goes), or the
    kinds of policy there are when its files name none."""
    named = named_policies(checkpoint)
    if not named:
        return (
            "its files name no policy: pass the --policy that reads it (builtin:demo reads a demo state dict, "
            "rlinf:CONFIG an RLinf checkpoint, python:MODULE:FACTORY your own code, server:ws://HOST:PORT a policy "
            "server; rlinf-bench evaluate --help lists every kind)"
        )
    lines = [f"its files name a policy: {n.line()}" for n in named]
    if command:
        lines.append("run: " + command.format(policy=f"--policy '{named[0].spec}'"))
    return "; ".join(lines)
