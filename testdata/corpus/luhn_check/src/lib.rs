/// True if `number` (decimal digits, spaces allowed) passes the Luhn checksum.
pub fn luhn_valid(number: &str) -> bool {
    let mut sum = 0;
    let mut count = 0;
    for c in number.chars().rev() {
        if c == ' ' {
            continue;
        }
        let Some(d) = c.to_digit(10) else {
            return false;
        };
        let value = if count % 2 == 1 {
            let doubled = d * 2;
            if doubled > 9 {
                doubled - 9
            } else {
                doubled
            }
        } else {
            d
        };
        sum += value;
        count += 1;
    }
    count > 1 && sum % 10 == 0
}

/// The digit to append to `partial` (at least one digit) so that the result is valid.
pub fn check_digit(partial: &str) -> u32 {
    for d in 0..10 {
        if luhn_valid(&format!("{partial}{d}")) {
            return d;
        }
    }
    unreachable!("some digit always completes the checksum")
}
