from dedupe import dedupe, dedupe_by


def test_dedupe_keeps_order():
    assert dedupe([3, 1, 3, 2, 1]) == [3, 1, 2]


def test_dedupe_empty():
    assert dedupe([]) == []


def test_dedupe_strings():
    assert dedupe(["b", "a", "b"]) == ["b", "a"]


def test_dedupe_by_key():
    assert dedupe_by(["Apple", "apple", "Pear", "APPLE"], str.lower) == ["Apple", "Pear"]


def test_dedupe_by_len():
    assert dedupe_by(["aa", "b", "cc", "d", "eee"], len) == ["aa", "b", "eee"]
