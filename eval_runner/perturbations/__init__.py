"""Robustness perturbations: wrappers at the environment seam, applied to one episode at its start (and, for
sensor noise, to every observation), drawn from (run seed, suite, task, initial state, axis, level) only.

- :mod:`.draw`: an episode's (axis, level) and its random generator;
- :mod:`.visual`: camera, light and texture, edits of the scene's MuJoCo model (no physics changes);
- :mod:`.physical`: robot_init and layout, edits of the initial state, layouts checked physically valid;
- :mod:`.language`: the instruction the policy reads;
- :mod:`.images`: sensor noise and blur on the images the policy gets;
- :mod:`.libero`: the LIBERO scene's side, which applies them in order.

Level 0 of every axis changes nothing: the episode is its control twin, bit for bit.
"""
