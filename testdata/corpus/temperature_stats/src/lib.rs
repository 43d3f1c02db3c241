#[derive(Debug, PartialEq)]
pub struct Stats {
    pub min: f64,
    pub max: f64,
    pub mean: f64,
}

/// Min, max and mean of the readings; None when there are none.
pub fn stats(readings: &[f64]) -> Option<Stats> {
    if readings.is_empty() {
        return None;
    }
    let mut min = readings[0];
    let mut max = readings[0];
    let mut sum = 0.0;
    for &r in readings {
        if r < min {
            min = r;
        }
        if r > max {
            max = r;
        }
        sum += r;
    }
    Some(Stats { min, max, mean: sum / readings.len() as f64 })
}

/// Length of the longest run of consecutive readings strictly above `threshold`.
pub fn longest_run_above(readings: &[f64], threshold: f64) -> usize {
    let mut best = 0;
    let mut run = 0;
    for &r in readings {
        if r > threshold {
            run += 1;
            best = best.max(run);
        } else {
            run = 0;
        }
    }
    best
}
