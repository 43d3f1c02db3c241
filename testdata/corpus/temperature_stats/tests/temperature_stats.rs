use temperature_stats::{longest_run_above, stats, Stats};

#[test]
fn basic_stats() {
    assert_eq!(
        stats(&[3.0, -1.0, 4.0, 2.0]),
        Some(Stats { min: -1.0, max: 4.0, mean: 2.0 })
    );
}

#[test]
fn single_reading() {
    assert_eq!(stats(&[7.5]), Some(Stats { min: 7.5, max: 7.5, mean: 7.5 }));
}

#[test]
fn no_readings() {
    assert_eq!(stats(&[]), None);
}

#[test]
fn runs_above() {
    let readings = [21.0, 25.0, 26.0, 20.0, 27.0, 28.0, 29.0, 22.0];
    assert_eq!(longest_run_above(&readings, 24.0), 3);
    assert_eq!(longest_run_above(&readings, 30.0), 0);
}

#[test]
fn threshold_is_not_above() {
    assert_eq!(longest_run_above(&[25.0, 25.0, 26.0], 25.0), 1);
}
