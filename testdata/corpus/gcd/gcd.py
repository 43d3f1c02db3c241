def gcd(a, b):
    """Greatest common divisor of two integers, always >= 0."""
    a, b = abs(a), abs(b)
    while b != 0:
        a, b = b, a % b
    return a


def lcm(a, b):
    """Least common multiple; 0 when either is 0."""
    if a == 0 or b == 0:
        return 0
    return abs(a * b) // gcd(a, b)
