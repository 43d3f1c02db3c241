from run_length import decode, encode, encode_string


def test_encode():
    assert encode("aaabcc") == [("a", 3), ("b", 1), ("c", 2)]


def test_encode_empty():
    assert encode("") == []


def test_decode():
    assert decode([("x", 2), ("y", 3)]) == "xxyyy"


def test_round_trip():
    for text in ("", "a", "abba", "zzzzzz"):
        assert decode(encode(text)) == text


def test_encode_string():
    assert encode_string("aaab") == "3a1b"
