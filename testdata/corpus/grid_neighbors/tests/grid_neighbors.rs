use grid_neighbors::{live_neighbors, step};

fn parse(rows: &[&str]) -> Vec<Vec<bool>> {
    rows.iter().map(|r| r.chars().map(|c| c == '#').collect()).collect()
}

#[test]
fn counts_neighbours() {
    let g = parse(&["#.#", ".#.", "###"]);
    assert_eq!(live_neighbors(&g, 1, 1), 5);
    assert_eq!(live_neighbors(&g, 0, 1), 3);
    assert_eq!(live_neighbors(&g, 1, 0), 4);
}

#[test]
fn corners_and_edges() {
    let g = parse(&["##..", "##..", "...."]);
    assert_eq!(live_neighbors(&g, 0, 0), 3);
    assert_eq!(live_neighbors(&g, 2, 3), 0);
    assert_eq!(live_neighbors(&g, 2, 2), 1);
    assert_eq!(live_neighbors(&g, 0, 2), 2);
}

#[test]
fn blinker_oscillates() {
    let horizontal = parse(&[".....", ".....", ".###.", ".....", "....."]);
    let vertical = parse(&[".....", "..#..", "..#..", "..#..", "....."]);
    assert_eq!(step(&horizontal), vertical);
    assert_eq!(step(&vertical), horizontal);
}

#[test]
fn block_is_still() {
    let block = parse(&["....", ".##.", ".##.", "...."]);
    assert_eq!(step(&block), block);
}
