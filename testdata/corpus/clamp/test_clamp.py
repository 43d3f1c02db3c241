import pytest

from clamp import clamp, clamp_all


def test_inside():
    assert clamp(5, 1, 10) == 5


def test_below_and_above():
    assert clamp(-3, 0, 10) == 0
    assert clamp(42, 0, 10) == 10


def test_single_point_range():
    assert clamp(5, 3, 3) == 3


def test_bad_range():
    with pytest.raises(ValueError):
        clamp(1, 5, 2)


def test_clamp_all():
    assert clamp_all([-1, 4, 9], 0, 5) == [0, 4, 5]
