def median(values):
    """Median of a non-empty list: the middle value, or the mean of the two middle ones."""
    ordered = sorted(values)
    n = len(ordered)
    mid = n // 2
    if n % 2 == 1:
        return ordered[mid]
    return (ordered[mid - 1] + ordered[mid]) / 2


def running_median(values):
    """The median of each prefix: values[:1], values[:2], ..."""
    return [median(values[: i + 1]) for i in range(len(values))]
