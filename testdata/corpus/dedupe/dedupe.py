def dedupe(items):
    """items without repeats, keeping the first occurrence of each, in order."""
    seen = set()
    result = []
    for item in items:
        if item not in seen:
            seen.add(item)
            result.append(item)
    return result


def dedupe_by(items, key):
    """Like dedupe, but items repeat each other when their key(item) is equal."""
    seen = set()
    result = []
    for item in items:
        k = key(item)
        if k in seen:
            continue
        seen.add(k)
        result.append(item)
    return result
