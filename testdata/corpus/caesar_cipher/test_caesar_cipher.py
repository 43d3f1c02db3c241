from caesar_cipher import decrypt, encrypt, shift_char


def test_shift():
    assert shift_char("a", 3) == "d"
    assert shift_char("A", 1) == "B"


def test_wraps_around():
    assert shift_char("z", 1) == "a"
    assert shift_char("Y", 3) == "B"


def test_encrypt_keeps_other_characters():
    assert encrypt("Hello, World!", 3) == "Khoor, Zruog!"


def test_round_trip():
    assert decrypt(encrypt("Attack at Dawn", 13), 13) == "Attack at Dawn"
    assert decrypt("Khoor", 3) == "Hello"
