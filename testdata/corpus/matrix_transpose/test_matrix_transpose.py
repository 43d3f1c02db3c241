import pytest

from matrix_transpose import identity, transpose


def test_rectangular():
    assert transpose([[1, 2, 3], [4, 5, 6]]) == [[1, 4], [2, 5], [3, 6]]


def test_square():
    assert transpose([[1, 2], [3, 4]]) == [[1, 3], [2, 4]]


def test_empty():
    assert transpose([]) == []


def test_ragged():
    with pytest.raises(ValueError, match="ragged"):
        transpose([[1, 2], [3]])


def test_identity():
    assert identity(3) == [[1, 0, 0], [0, 1, 0], [0, 0, 1]]
    assert transpose(identity(4)) == identity(4)
