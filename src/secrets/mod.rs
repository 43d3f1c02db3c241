//! Every recogniser of a secret, and the way a text leaves without one. Everyone else asks here:
//!
//! - `names`: variables whose name says they hold a credential (`GITHUB_TOKEN`);
//! - `files`: files whose path says they do (`.env`, `*.pem`), where a workspace has them and
//!   what they hold;
//! - `known`: the secrets this run knows (those variables' and files' values, the model's key),
//!   withheld however they are spelled from what goes to a model or into a trace;
//! - `scan`: secrets nobody told us about, by their shape (providers' token formats, private
//!   keys, high-entropy values assigned to secret-looking names), in a change or a commit.

mod files;
mod known;
mod names;
pub(crate) mod scan;

pub(crate) use files::is_credential_file;
pub(crate) use known::{withheld_env, writes_stand_in, Secrets, WITHHELD};
pub(crate) use names::is_credential_name;
