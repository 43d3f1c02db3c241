#[test]
fn integration_adds() {
    assert_eq!(cargo_sample::add(1, 1), 2);
}

#[test]
fn integration_max() {
    assert_eq!(cargo_sample::max(1, 2), 2, "max of 1 and 2");
}
