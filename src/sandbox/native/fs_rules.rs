//! The Landlock layer: within the command's view (see `view`), which paths it may read and
//! which it may write; what a symlink or a hardlink made in the workspace points at is checked
//! by the kernel at open time. With the network off it also refuses TCP (ABI 4) and connecting
//! to abstract UNIX sockets outside the sandbox (ABI 6); signals to outside processes are
//! refused always (ABI 6).
//!
//! Every access right the running kernel knows is handled (best effort above ABI 1), so a newer
//! kernel's rights (for example ABI 9's pathname UNIX socket rule) are denied by default too.
//! The rules are built in the child after its view is mounted, because Landlock rules name
//! inodes, and before it changes identity, so that every path can be opened. A path mounted
//! from one the parent opened (`OpenedPath`) needs no lookup: the mount shows the same inode.

use std::os::fd::{AsFd, BorrowedFd};
use std::path::{Path, PathBuf};

use landlock::{
    Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset,
    RulesetAttr, RulesetCreated, RulesetCreatedAttr, RulesetStatus, Scope, ABI,
};

use super::view::DEVICE_FILES;

/// The newest ABI this code knows; older kernels get the subset they support.
const NEWEST_ABI: ABI = ABI::V10;

#[derive(Debug, Clone, Default)]
pub(crate) struct FsRules {
    /// Everything under `/` may be read: the command's root is an allow-list view of its own.
    pub whole_view_readable: bool,
    pub read_only: Vec<PathBuf>,
    pub read_write: Vec<PathBuf>,
    pub network: bool,
}

/// A path the parent opened (a mount's source), with what it is.
pub(crate) struct OpenedPath<'a> {
    pub path: &'a Path,
    pub fd: BorrowedFd<'a>,
    pub is_dir: bool,
}

/// The file a rule names: opened by the parent, or here.
enum RuleFile<'a> {
    Inherited(BorrowedFd<'a>),
    Opened(PathFd),
}

impl AsFd for RuleFile<'_> {
    fn as_fd(&self) -> BorrowedFd<'_> {
        match self {
            RuleFile::Inherited(fd) => *fd,
            RuleFile::Opened(fd) => fd.as_fd(),
        }
    }
}

impl FsRules {
    /// Opens the rules' paths (those not in `opened`) and makes the ruleset, with rules for
    /// directories `beyond_view` (held open, readable, and writable where said); `restrict_self`
    /// then enforces it.
    pub(crate) fn prepare(
        &self,
        opened: &[OpenedPath],
        beyond_view: &[(BorrowedFd, bool)],
    ) -> Result<RulesetCreated, String> {
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
        let mut ruleset = Ruleset::default()
            .set_compatibility(CompatLevel::BestEffort)
            .handle_access(all)
            .map_err(error)?
            .scope(scopes)
            .map_err(error)?;
        if !self.network {
            ruleset = ruleset
                .handle_access(AccessNet::from_all(NEWEST_ABI))
                .map_err(error)?;
        }
        let known = |path: &Path| opened.iter().find(|known| known.path == path);
        let rule =
            |path: &Path, access: BitFlags<AccessFs>| -> Result<PathBeneath<RuleFile>, String> {
                let (file, is_dir) = match known(path) {
                    Some(known) => (RuleFile::Inherited(known.fd), known.is_dir),
                    None => {
                        let fd = PathFd::new(path).map_err(|err| {
                            format!("cannot open {} for a rule: {err}", path.display())
                        })?;
                        (RuleFile::Opened(fd), path.is_dir())
                    }
                };
                let access = if is_dir {
                    access
                } else {
                    access & AccessFs::from_file(NEWEST_ABI)
                };
                Ok(PathBeneath::new(file, access))
            };
        let mut rules = Vec::new();
        let root = self.whole_view_readable.then_some(Path::new("/"));
        for path in self
            .read_only
            .iter()
            .map(PathBuf::as_path)
            .chain([Path::new("/proc")])
            .chain(root)
        {
            rules.push(rule(path, read)?);
        }
        for path in &self.read_write {
            rules.push(rule(path, write)?);
        }
        for &(fd, writable) in beyond_view {
            rules.push(PathBeneath::new(
                RuleFile::Inherited(fd),
                if writable { write } else { read },
            ));
        }
        for path in DEVICE_FILES
            .iter()
            .map(Path::new)
            .filter(|p| known(p).is_some() || p.exists())
        {
            rules.push(rule(path, device)?);
        }
        ruleset
            .create()
            .map_err(error)?
            .add_rules(rules.into_iter().map(Ok::<_, landlock::RulesetError>))
            .map_err(error)
    }

    /// Restricts the calling process to a prepared ruleset.
    pub(crate) fn restrict_self(ruleset: RulesetCreated) -> Result<(), String> {
        let status = ruleset
            .restrict_self()
            .map_err(|err| format!("Landlock: {err}"))?;
        if status.ruleset == RulesetStatus::NotEnforced {
            return Err(
                "Landlock is not enabled in this kernel (needs Linux 5.13+ with lsm=landlock)"
                    .into(),
            );
        }
        Ok(())
    }
}
