from gcd import gcd, lcm


def test_gcd_basic():
    assert gcd(12, 18) == 6
    assert gcd(12, 8) == 4


def test_gcd_with_zero():
    assert gcd(0, 7) == 7
    assert gcd(7, 0) == 7


def test_gcd_negative():
    assert gcd(12, -18) == 6
    assert gcd(-4, -6) == 2


def test_lcm():
    assert lcm(4, 6) == 12
    assert lcm(-3, 5) == 15


def test_lcm_zero():
    assert lcm(0, 5) == 0
    assert lcm(0, 0) == 0
