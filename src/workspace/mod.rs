//! The workspace as the tools see it: paths confined to its roots (`jail`), and walks of its
//! directories that stay inside them (`walk`).

pub mod jail;
pub mod walk;
