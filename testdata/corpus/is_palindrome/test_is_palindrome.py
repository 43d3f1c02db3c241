from is_palindrome import is_palindrome


def test_simple():
    assert is_palindrome("level")
    assert not is_palindrome("hello")


def test_case_and_punctuation():
    assert is_palindrome("Racecar")
    assert is_palindrome("A man, a plan, a canal: Panama!")


def test_digits_count():
    assert is_palindrome("12321")
    assert not is_palindrome("1a2")


def test_short():
    assert is_palindrome("")
    assert is_palindrome("x")
    assert not is_palindrome("ab")
