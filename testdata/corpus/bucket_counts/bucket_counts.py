def bucket_counts(values, width, buckets):
    """Counts of values in `buckets` bins of size `width` starting at 0.

    Negative values are ignored; values past the last bin go into the last bin.
    """
    counts = [0] * buckets
    for v in values:
        if v < 0:
            continue
        index = v // width
        if index >= buckets:
            index = buckets - 1
        counts[index] += 1
    return counts
