from running_median import median, running_median


def test_odd():
    assert median([3, 1, 2]) == 2


def test_even():
    assert median([4, 1, 3, 2]) == 2.5
    assert median([1, 2]) == 1.5


def test_single():
    assert median([7]) == 7


def test_running():
    assert running_median([5, 1, 3, 8]) == [5, 3, 3, 4]
