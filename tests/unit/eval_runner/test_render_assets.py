"""When one OpenGL render context may serve the next hard reset's model: exactly when its assets match."""

from __future__ import annotations

import mujoco

from eval_runner.render_context import same_render_assets

SCENE = """
<mujoco>
  <asset>
    <texture name="grid" type="2d" builtin="checker" width="{tex}" height="{tex}" rgb1="0 0 0" rgb2="1 1 1"/>
    <material name="grid" texture="grid"/>
    <mesh name="tetra" vertex="0 0 0  1 0 0  0 1 0  0 0 {apex}"/>
  </asset>
  <worldbody>
    <body pos="{x} 0 0"><geom type="mesh" mesh="tetra" material="grid"/></body>
  </worldbody>
</mujoco>
"""


def _model(*, x: float = 0.0, tex: int = 64, apex: float = 1.0) -> mujoco.MjModel:
    return mujoco.MjModel.from_xml_string(SCENE.format(x=x, tex=tex, apex=apex))


def test_given_a_scene_whose_bodies_moved_then_the_render_context_can_be_kept() -> None:
    # what a LIBERO hard reset changes: where the fixtures are, not what they look like
    assert same_render_assets(_model(x=0.0), _model(x=0.3))


def test_given_another_texture_or_mesh_then_a_new_render_context_is_built() -> None:
    base = _model()
    assert not same_render_assets(base, _model(tex=32))
    assert not same_render_assets(base, _model(apex=2.0))
