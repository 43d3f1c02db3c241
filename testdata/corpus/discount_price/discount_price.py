def discounted_price(price_cents, quantity, coupon=None):
    """Total in cents for quantity items at price_cents each.

    10% off from 10 items, 20% off from 50; the coupon "SAVE5" then takes 500 cents
    off a total of at least 2000. Never negative.
    """
    total = price_cents * quantity
    if quantity >= 50:
        percent = 20
    elif quantity >= 10:
        percent = 10
    else:
        percent = 0
    total = total * (100 - percent) // 100
    if coupon == "SAVE5" and total >= 2000:
        total -= 500
    return max(total, 0)
