from rotate_list import rotate_left, rotate_right


def test_left():
    assert rotate_left([1, 2, 3, 4, 5], 2) == [3, 4, 5, 1, 2]


def test_right():
    assert rotate_right([1, 2, 3, 4, 5], 1) == [5, 1, 2, 3, 4]


def test_large_k():
    assert rotate_left([1, 2, 3], 7) == [2, 3, 1]


def test_zero_and_empty():
    assert rotate_left([1, 2, 3], 0) == [1, 2, 3]
    assert rotate_left([], 3) == []
