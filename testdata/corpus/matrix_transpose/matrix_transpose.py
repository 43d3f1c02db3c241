def transpose(matrix):
    """Rows become columns. All rows must have the same length (ValueError otherwise)."""
    if not matrix:
        return []
    rows, cols = len(matrix), len(matrix[0])
    for row in matrix:
        if len(row) != cols:
            raise ValueError("ragged matrix")
    return [[matrix[r][c] for r in range(rows)] for c in range(cols)]


def identity(n):
    """The n by n identity matrix."""
    return [[1 if r == c else 0 for c in range(n)] for r in range(n)]
