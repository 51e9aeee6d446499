"""bench/render_cost.py: which geoms could be culled without changing a pixel."""

from __future__ import annotations

import numpy as np
import pytest

from bench.render_cost import main, sphere_in_view


def test_a_sphere_ahead_of_the_camera_is_in_view_and_one_behind_it_is_not() -> None:
    # MuJoCo's camera looks along -z
    assert sphere_in_view(np.array([0.0, 0.0, -1.0]), 0.1, fovy_deg=45)
    assert not sphere_in_view(np.array([0.0, 0.0, 1.0]), 0.1, fovy_deg=45)
    assert sphere_in_view(np.array([0.0, 0.0, 0.05]), 0.1, fovy_deg=45)  # the camera inside it


def test_a_sphere_beside_the_view_counts_only_while_its_radius_reaches_across_the_edge() -> None:
    # at depth 1 with a 90 degree field of view the edge is at x = 1; the plane is at 45 degrees
    edge_distance = (2.0 - 1.0) / np.sqrt(2)  # a centre at x = 2 lies this far outside the plane
    assert not sphere_in_view(np.array([2.0, 0.0, -1.0]), edge_distance - 0.01, fovy_deg=90)
    assert sphere_in_view(np.array([2.0, 0.0, -1.0]), edge_distance + 0.01, fovy_deg=90)
    assert not sphere_in_view(np.array([0.0, -2.0, -1.0]), edge_distance - 0.01, fovy_deg=90)


def test_a_wider_image_sees_further_sideways_but_not_further_up() -> None:
    centre = np.array([1.5, 0.0, -1.0])
    assert not sphere_in_view(centre, 0.1, fovy_deg=90, aspect=1.0)
    assert sphere_in_view(centre, 0.1, fovy_deg=90, aspect=2.0)
    assert not sphere_in_view(np.array([0.0, 1.5, -1.0]), 0.1, fovy_deg=90, aspect=2.0)


def test_a_suite_that_is_not_libero_is_refused_with_the_suites_it_can_take(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--suites", "robotwin"])
    assert exited.value.code == 2
    assert "robotwin is not a LIBERO suite" in capsys.readouterr().err
