from word_wrap import word_wrap


def test_wraps():
    assert word_wrap("the quick brown fox", 10) == ["the quick", "brown fox"]


def test_exact_fit():
    assert word_wrap("ab cd ef", 5) == ["ab cd", "ef"]


def test_long_word():
    assert word_wrap("a extraordinary b", 5) == ["a", "extraordinary", "b"]


def test_empty():
    assert word_wrap("", 10) == []
    assert word_wrap("   ", 10) == []


def test_single_line():
    assert word_wrap("one two", 80) == ["one two"]
