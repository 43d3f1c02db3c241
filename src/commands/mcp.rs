//! `autocoder mcp`: serve the tool catalogue to editors and agents over stdio.

use std::path::PathBuf;

use crate::cli::McpArgs;
use crate::error::Failure;
use crate::tools::Context;
use crate::workspace::jail::Roots;

pub(crate) fn run(args: McpArgs) -> Result<i32, Failure> {
    let roots = if !args.root.is_empty() {
        args.root
    } else if let Some(list) = std::env::var_os("ALLOWED_WORKSPACE_ROOTS")
        .map(|list| {
            // Empty entries (`/a::/b`, a trailing `:`) name nothing.
            std::env::split_paths(&list)
                .filter(|path| !path.as_os_str().is_empty())
                .collect::<Vec<_>>()
        })
        .filter(|roots| !roots.is_empty())
    {
        list
    } else if let Some(root) = std::env::var_os("ALLOWED_WORKSPACE_ROOT").filter(|v| !v.is_empty())
    {
        vec![PathBuf::from(root)]
    } else {
        vec![PathBuf::from(".")]
    };
    let roots = Roots::new(&roots).map_err(|err| {
        Failure::usage(err)
            .with_hint("give the projects' directories with --root (or in ALLOWED_WORKSPACE_ROOTS)")
    })?;
    crate::log::note(
        "mcp",
        &format!(
            "serving {}",
            roots
                .paths()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    );
    crate::mcp::server::serve(Context {
        roots,
        test_env: Vec::new(),
        caches_of: None,
        secrets: Default::default(),
    })
    .map_err(|err| Failure::external(format!("stdio failed: {err}")))?;
    Ok(0)
}
