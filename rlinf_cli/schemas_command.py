"""``rlinf-bench schemas``: write the JSON Schema of every published contract into a folder."""

from __future__ import annotations

import argparse
from pathlib import Path

from rlinf_clikit.help_format import ExampleFormatter


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "schemas",
        help="write the contracts' JSON Schemas (docs/schemas/)",
        description="Write the JSON Schema of every contract that crosses a boundary (EvalRequest, EvalRun, "
        "RunResult, ProbeResult, CheckpointReport, ...) into a folder, one FILE.schema.json each, for clients "
        "written in other languages; --check fails when the committed ones differ from the code.",
        epilog="example: rlinf-bench schemas --check   # fail if docs/schemas is out of date",
        formatter_class=ExampleFormatter,
    )
    p.add_argument("--out", default="docs/schemas", help="output folder (default: docs/schemas)")
    p.add_argument("--check", action="store_true", help="fail if a committed schema is out of date")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from rlinf_bench.contracts import PUBLISHED, dumps_schema

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stale = []
    for name, model in PUBLISHED.items():
        path = out / f"{name}.schema.json"
        text = dumps_schema(model)
        if args.check:
            if not path.exists() or path.read_text() != text:
                stale.append(str(path))
            continue
        path.write_text(text)
        print(path)
    if stale:
        print("out of date (run `rlinf-bench schemas`): " + ", ".join(stale))
        return 1
    return 0
