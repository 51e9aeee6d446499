"""Policy adapters: builtin:zero|random|demo, server:URL, python:module:factory."""
