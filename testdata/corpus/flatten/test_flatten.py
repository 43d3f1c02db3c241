from flatten import flatten, flatten_depth


def test_flatten():
    assert flatten([1, [2, [3, [4]]], 5]) == [1, 2, 3, 4, 5]


def test_flat_and_empty():
    assert flatten([1, 2]) == [1, 2]
    assert flatten([[], [[]]]) == []


def test_depth_one():
    assert flatten_depth([1, [2, [3]]], 1) == [1, 2, [3]]


def test_depth_zero():
    assert flatten_depth([1, [2]], 0) == [1, [2]]


def test_depth_two():
    assert flatten_depth([[1, [2, [3]]]], 2) == [1, 2, [3]]
