/// Evaluates a space-separated expression in reverse Polish notation over i64,
/// e.g. "3 4 + 2 *" is 14. Errors on unknown tokens, missing operands, leftover
/// operands and division by zero.
pub fn eval_rpn(expr: &str) -> Result<i64, String> {
    let mut stack: Vec<i64> = Vec::new();
    for token in expr.split_whitespace() {
        if let Ok(n) = token.parse::<i64>() {
            stack.push(n);
            continue;
        }
        if stack.len() < 2 {
            return Err(format!("not enough operands for {token}"));
        }
        let b = stack.pop().unwrap();
        let a = stack.pop().unwrap();
        let value = match token {
            "+" => a + b,
            "-" => a - b,
            "*" => a * b,
            "/" => {
                if b == 0 {
                    return Err("division by zero".to_string());
                }
                a / b
            }
            _ => return Err(format!("unknown token {token}")),
        };
        stack.push(value);
    }
    if stack.len() != 1 {
        return Err(format!("expected one result, found {}", stack.len()));
    }
    Ok(stack[0])
}
