import pytest

from calc.ops import add, clamp, mean, parse_ratio


def test_add():
    assert add(2, 3) == 5


def test_mean():
    assert mean([2, 4, 6]) == 4


@pytest.mark.parametrize("value,expected", [(5, 5), (-1, 0), (11, 10)])
def test_clamp(value, expected):
    assert clamp(value, 0, 10) == expected


@pytest.mark.parametrize("text", ["1/2", "a b::c [x]"], ids=["half", "odd id with spaces"])
def test_parse_ratio(text):
    assert parse_ratio(text) == 0.5


class TestGroup:
    def test_inside_class(self):
        assert add(1, 1) == 2

    def test_zero_division(self):
        assert parse_ratio("1/0") == 0


def test_uses_broken_fixture(broken_fixture):
    assert True


@pytest.mark.skip(reason="not today")
def test_skipped():
    assert False
