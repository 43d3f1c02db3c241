def is_leap(year):
    """Gregorian leap year: divisible by 4, except centuries not divisible by 400."""
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


def days_in_month(year, month):
    """Number of days in the month (1..12) of the year."""
    if month < 1 or month > 12:
        raise ValueError("month must be 1..12")
    if month == 2:
        return 29 if is_leap(year) else 28
    if month in (4, 6, 9, 11):
        return 30
    return 31
