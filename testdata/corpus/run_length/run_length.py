def encode(text):
    """Run-length encoding: "aaab" -> [("a", 3), ("b", 1)]."""
    runs = []
    for ch in text:
        if runs and runs[-1][0] == ch:
            runs[-1] = (ch, runs[-1][1] + 1)
        else:
            runs.append((ch, 1))
    return runs


def decode(runs):
    """The text that encode(text) came from."""
    return "".join(ch * count for ch, count in runs)


def encode_string(text):
    """Compact form: "aaab" -> "3a1b"."""
    return "".join(f"{count}{ch}" for ch, count in encode(text))
