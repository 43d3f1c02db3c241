//! The workspace as the tools see it: paths confined to its roots (`jail`).

pub mod jail;
