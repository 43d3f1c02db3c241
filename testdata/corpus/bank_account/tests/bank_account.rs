use bank_account::{Account, Error};

#[test]
fn deposit_and_withdraw() {
    let mut a = Account::new(0);
    assert_eq!(a.deposit(1000), Ok(1000));
    assert_eq!(a.withdraw(300), Ok(700));
    assert_eq!(a.balance(), 700);
}

#[test]
fn non_positive_amounts() {
    let mut a = Account::new(0);
    assert_eq!(a.deposit(0), Err(Error::NonPositiveAmount));
    assert_eq!(a.withdraw(-5), Err(Error::NonPositiveAmount));
    assert_eq!(a.withdraw(0), Err(Error::NonPositiveAmount));
}

#[test]
fn overdraft_limit() {
    let mut a = Account::new(500);
    a.deposit(100).unwrap();
    assert_eq!(a.withdraw(600), Ok(-500));
    assert_eq!(a.withdraw(1), Err(Error::InsufficientFunds { balance: -500, requested: 1 }));
}

#[test]
fn insufficient_funds() {
    let mut a = Account::new(0);
    a.deposit(50).unwrap();
    assert_eq!(a.withdraw(80), Err(Error::InsufficientFunds { balance: 50, requested: 80 }));
    assert_eq!(a.balance(), 50);
}

#[test]
fn transfer() {
    let mut a = Account::new(0);
    let mut b = Account::new(0);
    a.deposit(500).unwrap();
    a.transfer(&mut b, 200).unwrap();
    assert_eq!((a.balance(), b.balance()), (300, 200));
    assert!(a.transfer(&mut b, 1000).is_err());
    assert_eq!((a.balance(), b.balance()), (300, 200));
}
