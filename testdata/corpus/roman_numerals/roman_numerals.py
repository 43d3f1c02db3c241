NUMERALS = [
    (1000, "M"), (900, "CM"), (500, "D"), (400, "CD"),
    (100, "C"), (90, "XC"), (50, "L"), (40, "XL"),
    (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I"),
]


def to_roman(n):
    """Roman numeral for 1 <= n <= 3999."""
    if n < 1 or n > 3999:
        raise ValueError("out of range")
    parts = []
    for value, letters in NUMERALS:
        while n >= value:
            parts.append(letters)
            n -= value
    return "".join(parts)


def from_roman(text):
    """Value of a Roman numeral (subtractive pairs allowed)."""
    values = {letters: value for value, letters in NUMERALS if len(letters) == 1}
    total = 0
    for i, ch in enumerate(text):
        v = values[ch]
        if i + 1 < len(text) and values[text[i + 1]] > v:
            total -= v
        else:
            total += v
    return total
