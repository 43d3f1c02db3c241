//! This binary started again as a child, in a directory held open: how a process with threads
//! (the MCP server, the git tools) runs the sandbox, which forks and must start from a process
//! with one thread. The child is `autocoder sandbox ...` (or the git reader inside one).

use std::os::fd::RawFd;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// This binary (as it was started, even if the file was replaced since: a rebuild), to be run
/// in the directory open at `dir_fd`: that is its current directory, and the directory is never
/// given to it by name, so that one the sandbox swapped in under its name since cannot stand in
/// for it. If this process dies (a client that gave up on the server kills it), the child gets
/// SIGTERM (a sandbox then stops what it started): nothing is left running.
pub(crate) fn own_command(dir_fd: RawFd) -> Result<Command, String> {
    let exe = if Path::new("/proc/self/exe").exists() {
        PathBuf::from("/proc/self/exe")
    } else {
        std::env::current_exe().map_err(|err| format!("cannot find autocoder itself: {err}"))?
    };
    let parent = std::process::id() as libc::pid_t;
    let mut command = Command::new(exe);
    // SAFETY: prctl, getppid and fchdir are async-signal-safe, as the code between fork and exec
    // must be.
    unsafe {
        command.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) != 0 || libc::getppid() != parent
            {
                return Err(std::io::Error::other("the parent is gone"));
            }
            if libc::fchdir(dir_fd) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        })
    };
    Ok(command)
}
