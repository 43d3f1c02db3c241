//! The `autocoder` binary: parse the command line, run it, turn the outcome into an exit status.

fn main() {
    std::process::exit(autocoder::run(std::env::args_os()));
}

/// musl's own allocator makes start-up (argument parsing above all) slower than glibc's; Doug
/// Lea's, as a global allocator behind one lock, does not.
#[cfg(target_env = "musl")]
#[global_allocator]
static ALLOCATOR: dlmalloc::GlobalDlmalloc = dlmalloc::GlobalDlmalloc;
