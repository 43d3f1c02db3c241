def clamp(value, low, high):
    """value limited to the range [low, high]; ValueError if low > high."""
    if low > high:
        raise ValueError("low must not exceed high")
    return max(low, min(value, high))


def clamp_all(values, low, high):
    """Every value clamped."""
    return [clamp(v, low, high) for v in values]
