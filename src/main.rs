//! The `autocoder` binary: parse the command line, run it, turn the outcome into an exit status.

fn main() {
    std::process::exit(autocoder::run(std::env::args_os()));
}

/// musl's own allocator made start-up slower than glibc's (argument parsing alone took 0.3 ms
/// instead of 0.15); Doug Lea's, as a global allocator behind one lock, brings it back.
#[cfg(target_env = "musl")]
#[global_allocator]
static ALLOCATOR: dlmalloc::GlobalDlmalloc = dlmalloc::GlobalDlmalloc;
