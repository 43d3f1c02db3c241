def fizzbuzz(n):
    """The word for n: Fizz for multiples of 3, Buzz for multiples of 5, FizzBuzz for both."""
    if n % 15 == 0:
        return "FizzBuzz"
    if n % 3 == 0:
        return "Fizz"
    if n % 5 == 0:
        return "Buzz"
    return str(n)


def fizzbuzz_upto(n):
    """The words for 1..n."""
    return [fizzbuzz(i) for i in range(1, n + 1)]
