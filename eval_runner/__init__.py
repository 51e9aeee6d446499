"""What runs inside eval Jobs: the LIBERO rollout loop, environment and policy adapters."""
