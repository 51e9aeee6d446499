"""Every page that shows a command of the project (``rlinf-bench``, ``python -m eval_runner``, ``mlflow ui``) says
how the shell gets it on PATH, in the same words: ``source .venv/bin/activate``. Without that line, the README's
own ``rlinf-bench status --out demo-out`` ends in "command not found" after ``make demo``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
COMMAND = re.compile(r"(^|`)\s*(rlinf-bench |python -m (eval_runner|infra_probes)|mlflow ui)", re.MULTILINE)
ACTIVATE = "source .venv/bin/activate"


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_given_a_page_with_project_commands_then_it_says_how_to_put_them_on_path(page: Path) -> None:
    text = page.read_text()
    if not COMMAND.search(text):
        pytest.skip("no project command on this page")
    head = "\n".join(text.splitlines()[:12])  # where a reader looks before copying the first command
    assert ACTIVATE in head, f"{page.name}: say `{ACTIVATE}` near the top"
