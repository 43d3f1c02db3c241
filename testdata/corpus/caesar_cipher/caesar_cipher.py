def shift_char(ch, k):
    """ch shifted k places along the alphabet, keeping its case; other characters unchanged."""
    if "a" <= ch <= "z":
        base = ord("a")
    elif "A" <= ch <= "Z":
        base = ord("A")
    else:
        return ch
    return chr(base + (ord(ch) - base + k) % 26)


def encrypt(text, k):
    return "".join(shift_char(ch, k) for ch in text)


def decrypt(text, k):
    return encrypt(text, -k)
