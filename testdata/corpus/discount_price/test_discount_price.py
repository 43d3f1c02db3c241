from discount_price import discounted_price


def test_no_discount():
    assert discounted_price(250, 4) == 1000


def test_volume_discounts():
    assert discounted_price(100, 10) == 900
    assert discounted_price(100, 50) == 4000
    assert discounted_price(100, 49) == 4410


def test_coupon():
    assert discounted_price(1000, 3, "SAVE5") == 2500
    assert discounted_price(1000, 2, "SAVE5") == 1500


def test_coupon_needs_minimum():
    assert discounted_price(100, 5, "SAVE5") == 500


def test_no_coupon_no_reduction():
    assert discounted_price(1000, 3) == 3000
    assert discounted_price(0, 3) == 0
