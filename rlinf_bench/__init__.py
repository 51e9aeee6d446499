"""rlinf-bench: automatic, traceable evaluation of RLinf checkpoints and training-cluster probes."""

__version__ = "0.1.0"
