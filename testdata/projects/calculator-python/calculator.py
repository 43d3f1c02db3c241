"""A calculator whose tests pass: the sample for task mode, where a model adds to it."""


def add(a, b):
    return a + b


def subtract(a, b):
    return a - b
