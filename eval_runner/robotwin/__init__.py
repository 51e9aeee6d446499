"""RoboTwin 2.0's venv files (requirements.txt, runtime.txt) and the ``python -m eval_runner.robotwin`` alias.

The RoboTwin evaluation itself is an env kind of the one evaluator: ``eval_runner/envs/robotwin_*.py``.
"""
