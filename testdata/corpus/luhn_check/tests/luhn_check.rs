use luhn_check::{check_digit, luhn_valid};

#[test]
fn valid_numbers() {
    assert!(luhn_valid("79927398713"));
    assert!(luhn_valid("4539 3195 0343 6467"));
    assert!(luhn_valid("059"));
}

#[test]
fn invalid_numbers() {
    assert!(!luhn_valid("79927398710"));
    assert!(!luhn_valid("8273 1232 7352 0569"));
}

#[test]
fn too_short_or_not_digits() {
    assert!(!luhn_valid("0"));
    assert!(!luhn_valid(""));
    assert!(!luhn_valid("4539-3195"));
}

#[test]
fn check_digits() {
    assert_eq!(check_digit("7992739871"), 3);
    assert_eq!(check_digit("10"), 9);
    assert_eq!(check_digit("19"), 0);
}
