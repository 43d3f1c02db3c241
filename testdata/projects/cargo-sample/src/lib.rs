//! A sample crate with failing tests, for autocoder's `run-tests`.

/// Adds two numbers.
///
/// ```
/// assert_eq!(cargo_sample::add(2, 2), 5);
/// ```
pub fn add(a: i32, b: i32) -> i32 {
    a + b
}

/// The larger of two numbers (wrong on purpose).
pub fn max(a: i32, b: i32) -> i32 {
    if a < b {
        a
    } else {
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds() {
        assert_eq!(add(2, 3), 5);
    }

    #[test]
    fn max_picks_the_larger() {
        assert_eq!(max(3, 7), 7);
    }

    #[test]
    fn panics_with_a_message() {
        let values: Vec<i32> = Vec::new();
        assert!(!values.is_empty(), "no values to work with");
    }

    #[test]
    #[ignore]
    fn slow() {}
}
