"""The env kinds of the one evaluator (``python -m eval_runner``): LIBERO and RoboTwin 2.0.

:mod:`eval_runner.envs.kinds` is the seam: what a kind gives the one loop (:mod:`eval_runner.loop`:
workers, scheduler, batching, resume, videos, the result writer) and which kind a suite needs (from the
suite's ``simulator`` in :mod:`rlinf_bench.suites`). LIBERO: ``libero_kind`` (the run's side) and
``libero_scene`` (the workers'); RoboTwin: ``robotwin_kind`` and ``robotwin_env``, with its tasks, seeds,
assets and policies in the other ``robotwin_*`` modules (its runtime in its own venv or image). These
modules never import the CLI.
"""
