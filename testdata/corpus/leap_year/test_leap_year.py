import pytest

from leap_year import days_in_month, is_leap


def test_leap_years():
    assert is_leap(2024)
    assert is_leap(2000)
    assert is_leap(1600)


def test_common_years():
    assert not is_leap(2023)
    assert not is_leap(1900)
    assert not is_leap(2100)


def test_february():
    assert days_in_month(2024, 2) == 29
    assert days_in_month(2023, 2) == 28


def test_other_months():
    assert days_in_month(2023, 1) == 31
    assert days_in_month(2023, 11) == 30
    assert days_in_month(2023, 12) == 31


def test_bad_month():
    with pytest.raises(ValueError):
        days_in_month(2023, 0)
    with pytest.raises(ValueError):
        days_in_month(2023, 13)
