from bucket_counts import bucket_counts


def test_counts():
    assert bucket_counts([1, 5, 12, 19, 25], 10, 3) == [2, 2, 1]


def test_zero_and_edges():
    assert bucket_counts([0, 9, 10], 10, 2) == [2, 1]


def test_negative_ignored():
    assert bucket_counts([-1, -20, 3], 5, 2) == [1, 0]


def test_overflow_into_last():
    assert bucket_counts([20, 35, 100], 10, 3) == [0, 0, 3]


def test_empty():
    assert bucket_counts([], 10, 4) == [0, 0, 0, 0]
