COMMON = ("password", "letmein", "qwerty123")


def password_problems(password, min_length=8):
    """Why the password is too weak; an empty list means it is acceptable."""
    problems = []
    if len(password) < min_length:
        problems.append("too short")
    if not any(c.isdigit() for c in password):
        problems.append("no digit")
    if not (any(c.isupper() for c in password) and any(c.islower() for c in password)):
        problems.append("needs mixed case")
    if password.lower() in COMMON:
        problems.append("too common")
    return problems


def is_strong(password):
    return not password_problems(password)
