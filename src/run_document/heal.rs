//! The run document's `heal`, as far as the stages after heal read it: whether the repair is
//! green, and its diff. The rest of what heal writes is kept as it is.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Heal {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<HealStatus>,
    /// The unified diff of the final change, against the state heal started from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// How a repair ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HealStatus {
    /// Every test passes.
    Green,
    /// Some still fail.
    Red,
    /// Nothing was changed.
    NoChange,
    /// A limit (attempts, tokens, time) ended it first.
    BudgetExhausted,
}

impl HealStatus {
    pub fn name(self) -> &'static str {
        match self {
            HealStatus::Green => "green",
            HealStatus::Red => "red",
            HealStatus::NoChange => "no_change",
            HealStatus::BudgetExhausted => "budget_exhausted",
        }
    }
}
