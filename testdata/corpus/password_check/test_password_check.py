from password_check import is_strong, password_problems


def test_strong():
    assert password_problems("Tr0ub4dor") == []
    assert is_strong("abcDEF12")


def test_too_short():
    assert password_problems("Ab1") == ["too short"]


def test_no_digit():
    assert password_problems("NoDigitsHere") == ["no digit"]


def test_mixed_case():
    assert password_problems("alllower1") == ["needs mixed case"]
    assert password_problems("ALLUPPER1") == ["needs mixed case"]


def test_common():
    assert password_problems("Qwerty123") == ["too common"]
