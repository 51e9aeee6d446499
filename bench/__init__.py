"""The benchmarks: each ``bench/<name>.py`` measures one figure of docs/performance.md and writes it to
``bench/results/``; ``bench/LOG.md`` is the dated record of every measurement.

A package, so its modules import each other as ``bench.<name>`` and import-linter can hold them to the
product's public entry points. Each script still runs on its own, from the repository root
(``python3 bench/<name>.py``): it puts the root on ``sys.path`` first.
"""
