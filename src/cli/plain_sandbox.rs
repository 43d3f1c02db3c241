//! A plain `autocoder sandbox` command line, read without clap.
//!
//! The sandbox runs hundreds of times in a repair, and clap's building of its command and parse
//! of one is a part of each run worth saving. Only what this reader fully understands is taken:
//! the long flags (`--flag VALUE`, `--flag=VALUE`), `-C DIR`, `-q`, `-v`, each at most once (the
//! lists as often as given), and the command after `--`. Anything else (--help, bundled short
//! flags, an unknown or repeated flag, a value that starts with `-`, one that does not parse) is
//! left to clap, which says what is wrong. The tests below hold both readers to the same result.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::ValueEnum;

use super::{parse_cpus, Cli, ColorChoice, Command, GlobalArgs, SandboxArgs};
use crate::sandbox::policy::{parse_duration, parse_size, BackendKind};

/// `args` (the program's name first) read as clap reads them, when they are a plain `sandbox`
/// command line; `None` otherwise.
pub fn read(args: &[OsString]) -> Option<Cli> {
    let mut global = GlobalArgs {
        directory: None,
        pretty: false,
        quiet: false,
        verbose: false,
        color: ColorChoice::Auto,
    };
    // The defaults are clap's (`default_value` in `SandboxArgs`).
    let mut sandbox = SandboxArgs {
        workspace: None,
        timeout: parse_duration("10m").ok()?,
        memory: parse_size("512M").ok()?,
        pids: 100,
        cpus: parse_cpus("1").ok()?,
        file_size: parse_size("1G").ok()?,
        network: false,
        env: Vec::new(),
        ro: Vec::new(),
        rw: Vec::new(),
        max_output: parse_size("1M").ok()?,
        stream: false,
        result: None,
        backend: BackendKind::Native,
        image: None,
        allow_degraded: false,
        command: Vec::new(),
    };
    let mut seen: Vec<&str> = Vec::new();
    let mut in_sandbox = false;
    let mut rest = args.iter().skip(1);
    while let Some(arg) = rest.next() {
        let arg = arg.to_str()?;
        if !in_sandbox && arg == "sandbox" {
            in_sandbox = true;
            continue;
        }
        if in_sandbox && arg == "--" {
            sandbox.command = rest.cloned().collect();
            if sandbox.command.is_empty() || (global.quiet && global.verbose) {
                return None;
            }
            return Some(Cli {
                global,
                command: Command::Sandbox(sandbox),
            });
        }
        // `-C` has no long form: its name here is one no long flag can have.
        let (name, inline) = match arg {
            "-C" => ("-C", None),
            "-q" => ("quiet", None),
            "-v" => ("verbose", None),
            _ => {
                let long = arg
                    .strip_prefix("--")
                    .filter(|long| !long.starts_with('-'))?;
                match long.split_once('=') {
                    Some((name, value)) => (name, Some(value)),
                    None => (long, None),
                }
            }
        };
        if !matches!(name, "env" | "ro" | "rw") {
            if seen.contains(&name) {
                return None;
            }
            seen.push(name);
        }
        let mut value = || -> Option<&str> {
            let value = match inline {
                Some(value) => value,
                None => rest.next()?.to_str().filter(|v| !v.starts_with('-'))?,
            };
            (!value.is_empty()).then_some(value)
        };
        let flag = || inline.is_none().then_some(true);
        match name {
            "-C" => global.directory = Some(PathBuf::from(value()?)),
            "pretty" => global.pretty = flag()?,
            "quiet" => global.quiet = flag()?,
            "verbose" => global.verbose = flag()?,
            "color" => global.color = ColorChoice::from_str(value()?, false).ok()?,
            _ if !in_sandbox => return None,
            "workspace" => sandbox.workspace = Some(PathBuf::from(value()?)),
            "timeout" => sandbox.timeout = parse_duration(value()?).ok()?,
            "memory" => sandbox.memory = parse_size(value()?).ok()?,
            "pids" => {
                let digits = value()?;
                sandbox.pids = digits
                    .bytes()
                    .all(|b| b.is_ascii_digit())
                    .then(|| digits.parse().ok())
                    .flatten()
                    .filter(|&pids| pids >= 2)?;
            }
            "cpus" => sandbox.cpus = parse_cpus(value()?).ok()?,
            "file-size" => sandbox.file_size = parse_size(value()?).ok()?,
            "network" => sandbox.network = flag()?,
            "env" => sandbox.env.push(value()?.to_string()),
            "ro" => sandbox.ro.push(PathBuf::from(value()?)),
            "rw" => sandbox.rw.push(PathBuf::from(value()?)),
            "max-output" => sandbox.max_output = parse_size(value()?).ok()?,
            "stream" => sandbox.stream = flag()?,
            "result" => sandbox.result = Some(PathBuf::from(value()?)),
            "backend" => sandbox.backend = BackendKind::from_str(value()?, false).ok()?,
            "image" => sandbox.image = Some(value()?.to_string()),
            "allow-degraded" => sandbox.allow_degraded = flag()?,
            _ => return None,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn args(line: &str) -> Vec<OsString> {
        std::iter::once("autocoder")
            .chain(line.split(' '))
            .map(OsString::from)
            .collect()
    }

    /// Both readers give the same result (compared through `Debug`, which shows every field).
    #[track_caller]
    fn agree(line: &str) {
        let args = args(line);
        let clap = Cli::try_parse_from(&args).unwrap_or_else(|err| panic!("{line}: {err}"));
        let plain = read(&args).unwrap_or_else(|| panic!("not read: {line}"));
        assert_eq!(format!("{plain:?}"), format!("{clap:?}"), "{line}");
    }

    #[test]
    fn reads_what_clap_reads() {
        for line in [
            "sandbox -- true",
            "sandbox -- sh -c echo --help",
            "sandbox --workspace /w -- make test",
            "sandbox --workspace=/w --timeout 90s --memory=1G --pids 7 --cpus 0.5 -- true",
            "sandbox --file-size 64M --max-output=64K --network --stream -- true",
            "sandbox --env A --env=B=c=d --env C= --ro /r --ro=/s --rw /t -- true",
            "sandbox --result /out.json --backend docker --image busybox:1 --allow-degraded -- ls",
            "sandbox --backend=native -- --",
            "--pretty -C /tmp sandbox -q --color never -- true",
            "-v sandbox --color=always -- true",
            "sandbox --quiet -C /x -- true",
            "sandbox --timeout 1h30m --pids 0100 -- true",
        ] {
            agree(line);
        }
    }

    #[test]
    fn leaves_the_rest_to_clap() {
        for line in [
            "sandbox true",
            "sandbox --",
            "sandbox --help",
            "sandbox -h -- true",
            "--version",
            "run-tests -- true",
            "sandbox --bogus -- true",
            "sandbox --timeout 1s --timeout 2s -- true",
            "sandbox --network --network -- true",
            "sandbox --network=true -- true",
            "sandbox --timeout soon -- true",
            "sandbox --pids 1 -- true",
            "sandbox --pids +5 -- true",
            "sandbox --memory -1 -- true",
            "sandbox --cpus 0 -- true",
            "sandbox --backend podman -- true",
            "sandbox --color sometimes -- true",
            "sandbox --workspace -- true",
            "sandbox --workspace= -- true",
            "sandbox -q -v -- true",
            "sandbox -qv -- true",
            "sandbox -C/x -- true",
            "sandbox --directory /x -- true",
            "sandbox ---C /x -- true",
            "--workspace /w sandbox -- true",
            "-- sandbox -- true",
        ] {
            assert!(read(&args(line)).is_none(), "read: {line}");
        }
    }
}
