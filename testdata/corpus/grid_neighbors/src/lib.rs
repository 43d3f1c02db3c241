/// How many of the 8 neighbours of (row, col) are alive in a rectangular grid.
pub fn live_neighbors(grid: &[Vec<bool>], row: usize, col: usize) -> usize {
    let rows = grid.len() as i64;
    let cols = grid[0].len() as i64;
    let mut count = 0;
    for dr in -1..=1 {
        for dc in -1..=1 {
            if dr == 0 && dc == 0 {
                continue;
            }
            let r = row as i64 + dr;
            let c = col as i64 + dc;
            if r >= 0 && r < rows && c >= 0 && c < cols && grid[r as usize][c as usize] {
                count += 1;
            }
        }
    }
    count
}

/// One generation of Conway's Game of Life (cells beyond the edge are dead).
pub fn step(grid: &[Vec<bool>]) -> Vec<Vec<bool>> {
    let mut next = grid.to_vec();
    for r in 0..grid.len() {
        for c in 0..grid[r].len() {
            let n = live_neighbors(grid, r, c);
            next[r][c] = if grid[r][c] { n == 2 || n == 3 } else { n == 3 };
        }
    }
    next
}
