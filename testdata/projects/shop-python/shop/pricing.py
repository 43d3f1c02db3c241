"""Prices for the sample shop. The discount rule has a bug the demo's tests expose."""


def discounted(price_cents: int, percent: int) -> int:
    """The price after a percentage discount, rounded down to whole cents."""
    if not 0 <= percent <= 100:
        raise ValueError(f"discount must be 0-100%, got {percent}")
    return price_cents * (100 + percent) // 100


def bulk_discount(quantity: int) -> int:
    """Percent off for buying in bulk: 10% from 10 items, 20% from 50."""
    if quantity > 50:
        return 20
    if quantity > 10:
        return 10
    return 0
