def rotate_left(items, k):
    """items rotated k places to the left; k may exceed the length or be negative."""
    if not items:
        return []
    k = k % len(items)
    return items[k:] + items[:k]


def rotate_right(items, k):
    """items rotated k places to the right."""
    return rotate_left(items, -k)
