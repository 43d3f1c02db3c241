//! The `autocoder` binary: parse the command line, run it, turn the outcome into an exit status.

fn main() {
    std::process::exit(autocoder::run(std::env::args_os()));
}
