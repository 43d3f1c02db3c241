from merge_intervals import merge_intervals


def test_overlapping():
    assert merge_intervals([[1, 3], [2, 6], [8, 10]]) == [[1, 6], [8, 10]]


def test_touching():
    assert merge_intervals([[1, 2], [2, 3]]) == [[1, 3]]


def test_contained():
    assert merge_intervals([[1, 5], [2, 3]]) == [[1, 5]]


def test_unsorted():
    assert merge_intervals([[8, 9], [1, 2], [3, 4]]) == [[1, 2], [3, 4], [8, 9]]


def test_empty():
    assert merge_intervals([]) == []
