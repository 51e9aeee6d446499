"""Expand template.yaml's SAM resources into plain CloudFormation, offline, and print it as JSON.

    .venv-tools/bin/python deploy/tools/sam_transform.py template.yaml > transformed.json

Runs in .venv-tools (aws-sam-translator pins a pydantic older than .venv's). What `sam package` would do
first is done here: local CodeUri/ContentUri become placeholder S3 URIs, and DefinitionUri is inlined as
Definition, so the state machine's DefinitionSubstitutions are part of the output. tests/unit/deploy reads
the output to check IAM and wiring on the template CloudFormation really deploys.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from samtranslator.translator.transform import transform
from samtranslator.yaml_helper import yaml_parse


class _NoManagedPolicies:
    """The policy loader samtranslator asks for AWS managed policy ARNs; this template uses none."""

    def load(self) -> dict[str, str]:
        return {}


def packaged(template: dict[str, Any], root: Path) -> dict[str, Any]:
    """The template as `sam package` leaves it: code in S3, state machine definitions inline."""
    for name, resource in template.get("Resources", {}).items():
        props = resource.get("Properties", {})
        for key in ("CodeUri", "ContentUri"):
            if isinstance(props.get(key), str) and not props[key].startswith("s3://"):
                props[key] = f"s3://placeholder-bucket/{name}.zip"
        uri = props.get("DefinitionUri")
        if isinstance(uri, str) and not uri.startswith("s3://"):
            props["Definition"] = json.loads((root / uri).read_text())
            del props["DefinitionUri"]
    return template


def main(argv: list[str]) -> int:
    """Print the transformed template; exit 2 naming the file when it cannot be read."""
    if len(argv) != 1:
        print("usage: sam_transform.py template.yaml", file=sys.stderr)
        return 2
    path = Path(argv[0])
    if not path.is_file():
        print(f"sam_transform: no template at {path}", file=sys.stderr)
        return 2
    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")  # samtranslator builds ARNs for a region
    template = packaged(yaml_parse(path.read_text()), path.resolve().parent)
    print(json.dumps(transform(template, {}, _NoManagedPolicies()), indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
