"""A real MLflow tracking server (its own Flask app) on a loopback port, for doctor's tests.

``python mlflow_app_server.py STORE_DIR`` prints the URI on its first line, then serves until killed.
Starting the app in-process takes seconds; ``mlflow server`` (gunicorn/uvicorn) took 23-84 s here.
"""

from __future__ import annotations

import os
import sys


def main(store: str) -> None:
    # The app reads its stores from these variables when it is imported.
    os.environ["_MLFLOW_SERVER_FILE_STORE"] = f"sqlite:///{store}/mlflow.db"
    os.environ["_MLFLOW_SERVER_ARTIFACT_ROOT"] = f"{store}/artifacts"
    from mlflow.server import app
    from werkzeug.serving import make_server

    server = make_server("127.0.0.1", 0, app, threaded=True)
    print(f"http://127.0.0.1:{server.server_port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main(sys.argv[1])
