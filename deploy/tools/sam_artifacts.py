"""Build the SAM app in a scratch copy of the repo, measure every artifact, import each under Python 3.12.

    .venv/bin/python deploy/tools/sam_artifacts.py [--out bench/results/sam_artifacts.json] [--python PY312]

What a fresh clone gets: the repo's files (git ls-files, untracked but not ignored ones included) are copied to
a temporary folder and `sam build` runs there with .venv-tools' SAM CLI (makefile builds: no Docker, no local
python3.12). Then, per function: its unzipped size alone and with the shared layer (Lambda's 250 MB limit
counts both), and an import of its app module the way Lambda does it (code, then the layer, then boto3 as the
runtime provides it) under a real python3.12 started with -I -S, so nothing from this machine leaks in.
Prints the figures as JSON; exit 1 when the build or an import fails.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))  # scripts.pinned_uv when run as a script

from rlinf_local.stack import read_template  # noqa: E402
from scripts.pinned_uv import pinned_uv  # noqa: E402

SAM = REPO / ".venv-tools" / "bin" / "sam"
ACCOUNT = "123456789012"
# Values for variables whose template value is an intrinsic (a Ref to a resource, a GetAtt, a Sub).
PLACEHOLDERS = {
    "STATE_MACHINE_ARN": f"arn:aws:states:us-east-1:{ACCOUNT}:stateMachine:evaluate",
    "IDEMPOTENCY_TABLE": "rlinf-bench-idempotency",
    "DEAD_LETTER_QUEUE_URL": f"https://sqs.us-east-1.amazonaws.com/{ACCOUNT}/intake-dlq",
    "RESULTS_PREFIX": "s3://rlinf-bench-checkpoints/results",
    "COMPUTE": "eks:gpu-training@us-east-1",
    "RESULTS_TOPIC_ARN": f"arn:aws:sns:us-east-1:{ACCOUNT}:rlinf-bench-results",
    "SLACK_WEBHOOK_SECRET_ARN": f"arn:aws:secretsmanager:us-east-1:{ACCOUNT}:secret:slack-AbCdEf",
    "EVAL_IMAGE": f"{ACCOUNT}.dkr.ecr.us-east-1.amazonaws.com/rlinf-eval@sha256:{'1' * 64}",
    "PROBE_IMAGE": f"{ACCOUNT}.dkr.ecr.us-east-1.amazonaws.com/rlinf-probe@sha256:{'2' * 64}",
    "MLFLOW_TRACKING_URI": "http://127.0.0.1:9",
}


def repo_files(repo: Path) -> list[str]:
    """What a fresh clone plus this work tree's new files hold (ignored build outputs and venvs left out)."""
    out = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard"], cwd=repo, capture_output=True, text=True, check=True
    )
    return [f for f in out.stdout.splitlines() if (repo / f).is_file()]


def scratch_copy(repo: Path, dest: Path) -> None:
    """Copy the repo's files into ``dest``."""
    for rel in repo_files(repo):
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(repo / rel, target)


def size_mb(root: Path) -> float:
    """Unzipped bytes in MB (10^6), as Lambda counts its limit."""
    return round(sum(p.stat().st_size for p in root.rglob("*") if p.is_file()) / 1e6, 1)


def function_env(template: dict[str, Any], name: str) -> dict[str, str]:
    """The function's environment as the stack would set it, intrinsics replaced by parameter defaults or placeholders."""
    params = template.get("Parameters", {})
    variables = dict(template["Globals"]["Function"]["Environment"]["Variables"])
    variables.update(template["Resources"][name]["Properties"].get("Environment", {}).get("Variables", {}))
    env = {}
    for key, value in variables.items():
        if isinstance(value, dict) and "Ref" in value and "Default" in params.get(value["Ref"], {}):
            value = params[value["Ref"]]["Default"]
        elif isinstance(value, dict):
            value = PLACEHOLDERS.get(key, "placeholder")
        env[key] = str(value)
    return env


def installer() -> list[str]:
    """The package installer of this checkout: the Makefile's pinned uv (venvs built by uv have no pip), else pip."""
    uv = pinned_uv()
    if uv is not None:
        return [uv, "pip", "install", "--python-platform", "x86_64-manylinux_2_28"]
    return [sys.executable, "-m", "pip", "install", "--disable-pip-version-check", "--implementation", "cp"]


def boto3_for_lambda(dest: Path) -> Path:
    """boto3 as Lambda's python3.12 runtime provides it (pure Python wheels for that interpreter)."""
    cmd = [*installer(), "--quiet", "--target", str(dest), "--python-version", "3.12", "--only-binary", ":all:"]
    subprocess.run([*cmd, "boto3"], check=True)
    return dest


def import_check(python: Path, code: Path, layer: Path, boto: Path, env: dict[str, str]) -> dict[str, Any]:
    """Import ``app`` the way Lambda does, then every package the artifact ships (the slimming must not have
    broken one); report success, or the first error."""
    packages = sorted(d.name for d in code.iterdir() if (d / "__init__.py").is_file())
    probe = (
        "import importlib, sys; "
        f"sys.path[:0] = {[str(code), str(layer), str(boto)]!r}; "
        "import app; "
        "assert callable(app.lambda_handler), 'app.lambda_handler is not callable'; "
        f"[importlib.import_module(p) for p in {packages!r}]"
    )
    run_env = {"PATH": os.environ.get("PATH", ""), "AWS_REGION": "us-east-1", "AWS_DEFAULT_REGION": "us-east-1"}
    run_env |= {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "HOME": str(code.parent), **env}
    # -I -S: nothing from this machine's site-packages; -B: no __pycache__ written into the measured artifacts.
    out = subprocess.run([str(python), "-I", "-S", "-B", "-c", probe], capture_output=True, text=True, env=run_env)
    if out.returncode != 0:
        return {"imports": False, "error": (out.stderr.strip().splitlines() or ["?"])[-1]}
    return {"imports": True, "packages_imported": len(packages)}


def find_python312(given: str | None) -> Path | None:
    """An explicit interpreter, pyenv's 3.12.x, or python3.12 on PATH (a pyenv shim there may not resolve)."""
    if given:
        return Path(given)
    candidates = sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.12*/bin/python3.12")))
    on_path = shutil.which("python3.12")
    candidates += [on_path] if on_path else []
    return Path(candidates[0]) if candidates else None


def measure(work: Path, python: Path | None) -> dict[str, Any]:
    """Build in ``work`` (a scratch copy) and return the figures."""
    started = time.perf_counter()
    build = subprocess.run(
        [str(SAM), "build"], cwd=work, capture_output=True, text=True, env={**os.environ, "SAM_CLI_TELEMETRY": "0"}
    )
    seconds = round(time.perf_counter() - started, 1)
    if build.returncode != 0:
        return {"build_ok": False, "build_s": seconds, "error": (build.stdout + build.stderr)[-3000:]}
    built = work / ".aws-sam" / "build"
    template = read_template(work / "template.yaml")
    layer = built / "SharedLayer" / "python"
    boto = boto3_for_lambda(work / "lambda-runtime-boto3") if python else None
    result: dict[str, Any] = {"build_ok": True, "build_s": seconds, "layer_mb": size_mb(layer), "functions": {}}
    for name, res in template["Resources"].items():
        if res["Type"] != "AWS::Serverless::Function":
            continue
        code = built / name
        entry: dict[str, Any] = {"code_mb": size_mb(code), "with_layer_mb": round(size_mb(code) + size_mb(layer), 1)}
        if python and boto:
            entry |= import_check(python, code, layer, boto, function_env(template, name))
        result["functions"][name] = entry
    result["python"] = str(python) if python else None
    return result


def main(argv: list[str] | None = None) -> int:
    """Build, measure, print (and save with --out); exit 1 if the build or an import failed."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", type=Path, help="also write the JSON here (e.g. bench/results/sam_artifacts.json)")
    p.add_argument("--python", help="python3.12 for the import check (default: ~/.pyenv/versions/3.12*, then PATH)")
    p.add_argument("--keep", type=Path, help="build in this folder and keep it (default: a temporary one)")
    args = p.parse_args(argv)
    if not SAM.exists():
        print(f"no SAM CLI at {SAM}: run `make setup-tools`", file=sys.stderr)
        return 2
    python = find_python312(args.python)
    with tempfile.TemporaryDirectory(prefix="sam-build-") as tmp:
        work = args.keep or Path(tmp)
        scratch_copy(REPO, work)
        result = measure(work, python)
    result["command"] = ".venv/bin/python deploy/tools/sam_artifacts.py" + (f" --out {args.out}" if args.out else "")
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n")
    ok = result["build_ok"] and all(f.get("imports", True) for f in result.get("functions", {}).values())
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
