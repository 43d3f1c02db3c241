#[derive(Debug, PartialEq)]
pub enum Error {
    NonPositiveAmount,
    InsufficientFunds { balance: i64, requested: i64 },
}

/// An account in cents that may go below zero by at most `overdraft`.
pub struct Account {
    balance: i64,
    overdraft: i64,
}

impl Account {
    pub fn new(overdraft: i64) -> Self {
        Account { balance: 0, overdraft }
    }

    pub fn balance(&self) -> i64 {
        self.balance
    }

    pub fn deposit(&mut self, amount: i64) -> Result<i64, Error> {
        if amount <= 0 {
            return Err(Error::NonPositiveAmount);
        }
        self.balance += amount;
        Ok(self.balance)
    }

    pub fn withdraw(&mut self, amount: i64) -> Result<i64, Error> {
        if amount <= 0 {
            return Err(Error::NonPositiveAmount);
        }
        if self.balance - amount < -self.overdraft {
            return Err(Error::InsufficientFunds { balance: self.balance, requested: amount });
        }
        self.balance -= amount;
        Ok(self.balance)
    }

    /// Moves `amount` to `other`; nothing changes when the withdrawal fails.
    pub fn transfer(&mut self, other: &mut Account, amount: i64) -> Result<(), Error> {
        self.withdraw(amount)?;
        other.deposit(amount)?;
        Ok(())
    }
}
