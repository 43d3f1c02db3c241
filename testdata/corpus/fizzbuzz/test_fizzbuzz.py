from fizzbuzz import fizzbuzz, fizzbuzz_upto


def test_plain_numbers():
    assert fizzbuzz(1) == "1"
    assert fizzbuzz(7) == "7"


def test_fizz_and_buzz():
    assert fizzbuzz(9) == "Fizz"
    assert fizzbuzz(10) == "Buzz"
    assert fizzbuzz(5) == "Buzz"


def test_fizzbuzz():
    assert fizzbuzz(15) == "FizzBuzz"
    assert fizzbuzz(45) == "FizzBuzz"


def test_upto():
    assert fizzbuzz_upto(5) == ["1", "2", "Fizz", "4", "Buzz"]
    assert fizzbuzz_upto(0) == []
