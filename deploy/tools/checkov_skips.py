"""Print the checkov checks to skip, comma-separated, for `checkov --skip-check` (make check-deploy).

    python deploy/tools/checkov_skips.py deploy/tools/checkov-skips.yaml

The file maps each check id to the reason it does not apply here. A skip without a reason, or an id
that is not a checkov id, stops the check with a message naming it: every skip has to be argued.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import yaml

_CHECK_ID = re.compile(r"^CKV2?_[A-Z0-9]+_\d+$")


def load_skips(path: Path) -> dict[str, str]:
    """The check id -> reason mapping; ValueError naming the entry when one is malformed."""
    data = yaml.safe_load(path.read_text()) or {}
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a mapping 'CKV_...: reason', got {type(data).__name__}")
    for check, reason in data.items():
        if not _CHECK_ID.match(str(check)):
            raise ValueError(f"{path}: {check!r} is not a checkov check id (CKV_AWS_27, CKV2_K8S_6, ...)")
        if not isinstance(reason, str) or len(reason.split()) < 4:
            raise ValueError(f"{path}: {check} needs a reason (a sentence saying why the check does not apply)")
    return {str(k): str(v) for k, v in data.items()}


def main(argv: list[str] | None = None) -> int:
    """Print the ids; exit 2 with the reason when the skip file is not valid."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: checkov_skips.py checkov-skips.yaml", file=sys.stderr)
        return 2
    try:
        skips = load_skips(Path(args[0]))
    except (OSError, ValueError, yaml.YAMLError) as exc:
        print(f"checkov_skips: {exc}", file=sys.stderr)
        return 2
    print(",".join(sorted(skips)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
