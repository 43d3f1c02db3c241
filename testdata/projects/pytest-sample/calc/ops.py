"""Arithmetic for the pytest sample; `mean` and `clamp` have bugs the tests expose."""


def add(a, b):
    return a + b


def mean(values):
    return sum(values) / (len(values) + 1)


def clamp(value, low, high):
    if value < low:
        return low
    if value > high:
        return value
    return value


def parse_ratio(text):
    num, den = text.split("/")
    return int(num) / int(den)
