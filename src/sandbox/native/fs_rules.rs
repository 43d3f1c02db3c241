//! The Landlock layer: which paths the command may read and which it may write; everything else,
//! including what a symlink or a hardlink made in the workspace points at, is refused by the
//! kernel at open time. With the network off it also refuses TCP (ABI 4) and connecting to
//! abstract UNIX sockets outside the sandbox (ABI 6); signals to outside processes are refused
//! always (ABI 6).
//!
//! Every access right the running kernel knows is handled (best effort above ABI 1), so a newer
//! kernel's rights (for example ABI 9's pathname UNIX socket rule) are denied by default too.
//! The rules are built in the child after its mounts, because Landlock rules name inodes and the
//! private `/tmp` and `/proc` exist only there.

use std::path::PathBuf;

use landlock::{
    Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset,
    RulesetAttr, RulesetCreatedAttr, RulesetStatus, Scope, ABI,
};

/// The newest ABI this code knows; older kernels get the subset they support.
const NEWEST_ABI: ABI = ABI::V10;

/// Device files every program expects (read and write; `ioctl` for isatty checks).
const DEVICE_FILES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
];

#[derive(Debug, Clone, Default)]
pub struct FsRules {
    pub read_only: Vec<PathBuf>,
    pub read_write: Vec<PathBuf>,
    pub network: bool,
}

impl FsRules {
    /// Restricts the calling process; an error names what failed.
    pub fn restrict_self(&self) -> Result<(), String> {
        let error = |err: landlock::RulesetError| format!("Landlock: {err}");
        let all = AccessFs::from_all(NEWEST_ABI);
        let read = AccessFs::from_read(NEWEST_ABI);
        let write = all & !(AccessFs::MakeChar | AccessFs::MakeBlock);
        let device = (read | AccessFs::WriteFile | AccessFs::IoctlDev | AccessFs::Truncate)
            & AccessFs::from_file(NEWEST_ABI);

        let mut scopes: BitFlags<Scope> = Scope::Signal.into();
        if !self.network {
            scopes |= Scope::AbstractUnixSocket;
        }
        let ruleset = Ruleset::default()
            .set_compatibility(CompatLevel::BestEffort)
            .handle_access(all)
            .map_err(error)?
            .scope(scopes)
            .map_err(error)?;
        let ruleset = if self.network {
            ruleset
        } else {
            ruleset
                .handle_access(AccessNet::from_all(NEWEST_ABI))
                .map_err(error)?
        };
        let mut rules = Vec::new();
        let mut allow = |path: &PathBuf, access: BitFlags<AccessFs>| {
            // Paths that do not exist (an optional system directory) have nothing to allow.
            if let Ok(fd) = PathFd::new(path) {
                let access = if path.is_dir() {
                    access
                } else {
                    access & AccessFs::from_file(NEWEST_ABI)
                };
                rules.push(Ok::<_, landlock::RulesetError>(PathBeneath::new(
                    fd, access,
                )));
            }
        };
        for path in &self.read_only {
            allow(path, read);
        }
        for path in &self.read_write {
            allow(path, write);
        }
        for path in DEVICE_FILES {
            allow(&PathBuf::from(path), device);
        }
        let created = ruleset
            .create()
            .map_err(error)?
            .add_rules(rules)
            .map_err(error)?;
        let status = created.restrict_self().map_err(error)?;
        if status.ruleset == RulesetStatus::NotEnforced {
            return Err(
                "Landlock is not enabled in this kernel (needs Linux 5.13+ with lsm=landlock)"
                    .into(),
            );
        }
        Ok(())
    }
}
