from binary_search import binary_search, lower_bound


def test_finds_every_element():
    items = [1, 3, 5, 7, 9, 11]
    for i, x in enumerate(items):
        assert binary_search(items, x) == i


def test_single_element():
    assert binary_search([5], 5) == 0


def test_absent():
    assert binary_search([1, 3, 5], 4) == -1
    assert binary_search([1, 3, 5], 10) == -1
    assert binary_search([], 1) == -1


def test_lower_bound():
    items = [1, 2, 2, 2, 5]
    assert lower_bound(items, 2) == 1
    assert lower_bound(items, 3) == 4
    assert lower_bound(items, 0) == 0
    assert lower_bound(items, 9) == 5
