use rpn_calc::eval_rpn;

#[test]
fn arithmetic() {
    assert_eq!(eval_rpn("3 4 + 2 *"), Ok(14));
    assert_eq!(eval_rpn("10 4 -"), Ok(6));
    assert_eq!(eval_rpn("20 4 /"), Ok(5));
    assert_eq!(eval_rpn("2 3 4 * +"), Ok(14));
}

#[test]
fn single_number() {
    assert_eq!(eval_rpn("42"), Ok(42));
}

#[test]
fn division_by_zero() {
    assert_eq!(eval_rpn("1 0 /"), Err("division by zero".to_string()));
}

#[test]
fn missing_operand() {
    assert!(eval_rpn("1 +").is_err());
}

#[test]
fn leftovers_and_empty() {
    assert!(eval_rpn("1 2").is_err());
    assert!(eval_rpn("").is_err());
    assert!(eval_rpn("1 2 x").is_err());
}
