def flatten(nested):
    """All the non-list items of an arbitrarily nested list, in order."""
    result = []
    for item in nested:
        if isinstance(item, list):
            result.extend(flatten(item))
        else:
            result.append(item)
    return result


def flatten_depth(nested, depth):
    """Flatten only `depth` levels; depth 0 gives a shallow copy."""
    if depth <= 0:
        return list(nested)
    result = []
    for item in nested:
        if isinstance(item, list):
            result.extend(flatten_depth(item, depth - 1))
        else:
            result.append(item)
    return result
