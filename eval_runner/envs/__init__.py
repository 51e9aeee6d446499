"""The env kinds of the one evaluator (``python -m eval_runner``): LIBERO and RoboTwin 2.0.

:mod:`eval_runner.envs.kinds` says which kind a suite needs (from the suite's ``simulator`` in
:mod:`rlinf_bench.suites`); each kind brings its options, its task listing and its run, and writes the
same RunResult through :class:`eval_runner.result_writer.ResultWriter`. The LIBERO kind runs the
worker-process loop (:mod:`eval_runner.loop`); the RoboTwin kind (``robotwin_*`` modules) runs the
official one-scene-at-a-time protocol in its own venv or image. These modules never import the CLI.
"""
