def is_palindrome(text):
    """True if text reads the same both ways, ignoring case and anything not alphanumeric."""
    chars = [c.lower() for c in text if c.isalnum()]
    left, right = 0, len(chars) - 1
    while left < right:
        if chars[left] != chars[right]:
            return False
        left += 1
        right -= 1
    return True
