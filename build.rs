//! Links the `autocoder` executable at a fixed address (not position-independent). A PIE
//! carries some 27,000 relative relocations that the loader applies at every start, dirtying
//! hundreds of kilobytes that the sandbox's clone then copies and tears down again: measured
//! here, 0.5–1 ms of each `autocoder sandbox` run. Libraries, heap, stack and mappings stay
//! randomized; only the executable's own image does not move.

fn main() {
    println!("cargo:rustc-link-arg-bins=-no-pie");
}
