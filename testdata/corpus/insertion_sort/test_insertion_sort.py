from insertion_sort import insertion_sort


def test_sorts():
    assert insertion_sort([5, 2, 4, 6, 1, 3]) == [1, 2, 3, 4, 5, 6]


def test_smallest_last():
    assert insertion_sort([2, 3, 1]) == [1, 2, 3]


def test_empty_and_single():
    assert insertion_sort([]) == []
    assert insertion_sort([7]) == [7]


def test_input_untouched():
    data = [3, 1, 2]
    insertion_sort(data)
    assert data == [3, 1, 2]


def test_duplicates():
    assert insertion_sort([2, 1, 2, 1]) == [1, 1, 2, 2]
