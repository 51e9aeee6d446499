"""RoboTwin 2.0 adapter of the eval runner: runs in its own venv (``make setup-robotwin``) or image."""
