import pytest

from roman_numerals import from_roman, to_roman


def test_to_roman():
    assert to_roman(1) == "I"
    assert to_roman(4) == "IV"
    assert to_roman(1994) == "MCMXCIV"
    assert to_roman(48) == "XLVIII"


def test_limits():
    assert to_roman(3999) == "MMMCMXCIX"
    with pytest.raises(ValueError):
        to_roman(0)
    with pytest.raises(ValueError):
        to_roman(4000)


def test_from_roman():
    assert from_roman("IV") == 4
    assert from_roman("MCMXCIV") == 1994
    assert from_roman("VIII") == 8


def test_round_trip():
    for n in (1, 9, 14, 40, 90, 400, 2024):
        assert from_roman(to_roman(n)) == n
