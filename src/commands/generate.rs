//! `autocoder generate man|completions --out-dir DIR`: the man pages and shell completions that
//! are committed under `man/` and `completions/` (a test fails when they are stale).

use std::path::Path;

use clap::CommandFactory;

use crate::cli::{Cli, GenerateArgs, GenerateWhat};
use crate::error::Failure;

pub(crate) fn run(args: GenerateArgs) -> Result<i32, Failure> {
    std::fs::create_dir_all(&args.out_dir).map_err(|err| {
        Failure::usage(format!("cannot create {}: {err}", args.out_dir.display()))
    })?;
    match args.what {
        GenerateWhat::Man => write_man_pages(&args.out_dir)?,
        GenerateWhat::Completions => write_completions(&args.out_dir)?,
    }
    Ok(0)
}

fn write_man_pages(dir: &Path) -> Result<(), Failure> {
    // `help` is clap's own subcommand: it has no page (`--help` and `man` are the help).
    let mut command = Cli::command().disable_help_subcommand(true);
    // Built, so that each subcommand carries the global flags its page lists.
    command.build();
    let mut pages = vec![("autocoder".to_string(), command.clone())];
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
        let name = format!("autocoder-{}", sub.get_name());
        // The page is autocoder-NAME(1), as git's are; the synopsis shows the command typed.
        let page = sub
            .clone()
            .display_name(&name)
            .bin_name(format!("autocoder {}", sub.get_name()));
        pages.push((name, page));
    }
    for (name, page) in pages {
        let mut buffer = Vec::new();
        clap_mangen::Man::new(page)
            .source(format!("autocoder {}", env!("CARGO_PKG_VERSION")))
            .render(&mut buffer)
            .map_err(|err| {
                Failure::external(format!("cannot render the man page {name}: {err}"))
            })?;
        write(&dir.join(format!("{name}.1")), &buffer)?;
    }
    Ok(())
}

fn write_completions(dir: &Path) -> Result<(), Failure> {
    use clap_complete::Shell;
    for shell in [
        Shell::Bash,
        Shell::Zsh,
        Shell::Fish,
        Shell::Elvish,
        Shell::PowerShell,
    ] {
        let mut command = Cli::command();
        let mut buffer = Vec::new();
        clap_complete::generate(shell, &mut command, "autocoder", &mut buffer);
        let file = match shell {
            Shell::Bash => "autocoder.bash",
            Shell::Zsh => "_autocoder",
            Shell::Fish => "autocoder.fish",
            Shell::Elvish => "autocoder.elv",
            _ => "_autocoder.ps1",
        };
        write(&dir.join(file), &buffer)?;
    }
    Ok(())
}

fn write(path: &Path, bytes: &[u8]) -> Result<(), Failure> {
    std::fs::write(path, bytes)
        .map_err(|err| Failure::external(format!("cannot write {}: {err}", path.display())))
}
