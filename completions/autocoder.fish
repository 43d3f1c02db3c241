# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_autocoder_global_optspecs
    string join \n C= pretty q/quiet v/verbose color= h/help V/version
end

function __fish_autocoder_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_autocoder_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_autocoder_using_subcommand
    set -l cmd (__fish_autocoder_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c autocoder -n "__fish_autocoder_needs_command" -s C -d 'Run as if started in DIR' -r -F
complete -c autocoder -n "__fish_autocoder_needs_command" -l color -d 'When to colour messages on stderr (auto: on a terminal, unless NO_COLOR is set)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c autocoder -n "__fish_autocoder_needs_command" -l pretty -d 'Indent the JSON written to stdout'
complete -c autocoder -n "__fish_autocoder_needs_command" -s q -l quiet -d 'Print nothing on stderr but errors'
complete -c autocoder -n "__fish_autocoder_needs_command" -s v -l verbose -d 'Explain each step on stderr'
complete -c autocoder -n "__fish_autocoder_needs_command" -s h -l help -d 'Print help'
complete -c autocoder -n "__fish_autocoder_needs_command" -s V -l version -d 'Print version'
complete -c autocoder -n "__fish_autocoder_needs_command" -f -a "fetch-issue" -d 'Fetch the issue a repair starts from, into the run document'
complete -c autocoder -n "__fish_autocoder_needs_command" -f -a "heal" -d 'Repair the code until the failing tests pass, with a model, in a private copy'
complete -c autocoder -n "__fish_autocoder_needs_command" -f -a "mcp" -d 'Serve autocoder\'s tools to editors and agents over the Model Context Protocol (stdio)'
complete -c autocoder -n "__fish_autocoder_needs_command" -f -a "open-pr" -d 'Commit the repair on a branch, push it and open (or update) a pull request'
complete -c autocoder -n "__fish_autocoder_needs_command" -f -a "review" -d 'Review a change: what it touches, what could go wrong, with evidence'
complete -c autocoder -n "__fish_autocoder_needs_command" -f -a "run-tests" -d 'Run the project\'s tests in the sandbox and report the failures as data'
complete -c autocoder -n "__fish_autocoder_needs_command" -f -a "sandbox" -d 'Run one command in a rootless sandbox that can touch nothing but the workspace'
complete -c autocoder -n "__fish_autocoder_needs_command" -f -a "generate" -d 'Write the man pages or shell completions (for packagers; `make generate`)'
complete -c autocoder -n "__fish_autocoder_needs_command" -f -a "git-reader" -d 'The MCP server\'s git reader, run in the sandbox: answers requests on stdin about the repository in its current directory'
complete -c autocoder -n "__fish_autocoder_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c autocoder -n "__fish_autocoder_using_subcommand fetch-issue" -s C -d 'Run as if started in DIR' -r -F
complete -c autocoder -n "__fish_autocoder_using_subcommand fetch-issue" -l color -d 'When to colour messages on stderr (auto: on a terminal, unless NO_COLOR is set)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c autocoder -n "__fish_autocoder_using_subcommand fetch-issue" -l api-url -d 'The GitHub API base URL' -r
complete -c autocoder -n "__fish_autocoder_using_subcommand fetch-issue" -l pretty -d 'Indent the JSON written to stdout'
complete -c autocoder -n "__fish_autocoder_using_subcommand fetch-issue" -s q -l quiet -d 'Print nothing on stderr but errors'
complete -c autocoder -n "__fish_autocoder_using_subcommand fetch-issue" -s v -l verbose -d 'Explain each step on stderr'
complete -c autocoder -n "__fish_autocoder_using_subcommand fetch-issue" -l no-comments -d 'Skip the issue\'s comments'
complete -c autocoder -n "__fish_autocoder_using_subcommand fetch-issue" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c autocoder -n "__fish_autocoder_using_subcommand heal" -s C -d 'Run as if started in DIR' -r -F
complete -c autocoder -n "__fish_autocoder_using_subcommand heal" -l color -d 'When to colour messages on stderr (auto: on a terminal, unless NO_COLOR is set)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c autocoder -n "__fish_autocoder_using_subcommand heal" -l workspace -d 'The project to repair [default: the run document\'s workspace, else the current directory]' -r -F
complete -c autocoder -n "__fish_autocoder_using_subcommand heal" -l engine -d 'The engine that makes the changes' -r -f -a "auto\t'The offline engine first, then the model when one is configured'
llm\t'A language model'
mutate\t'The offline engine (mutations of the failing code; no model)'"
complete -c autocoder -n "__fish_autocoder_using_subcommand heal" -l provider -d 'The model\'s wire format [default: anthropic for api.anthropic.com or a claude-* model without a base URL, else openai]' -r -f -a "openai\t'Chat completions, as OpenAI and every local server serve them'
anthropic\t'Anthropic\'s Messages API'"
complete -c autocoder -n "__fish_autocoder_using_subcommand heal" -l model -d 'The model\'s name [default: AUTOCODER_MODEL; with a local server\'s URL, its first model]' -r
complete -c autocoder -n "__fish_autocoder_using_subcommand heal" -l base-url -d 'The API\'s base URL, e.g. http://127.0.0.1:11434/v1 [default: AUTOCODER_BASE_URL, else OPENAI_BASE_URL, else the provider\'s]' -r
complete -c autocoder -n "__fish_autocoder_using_subcommand heal" -l max-attempts -d 'The model\'s attempts at most' -r
complete -c autocoder -n "__fish_autocoder_using_subcommand heal" -l max-candidates -d 'The offline engine\'s candidates at most, a safety cap under --mutate-time (the alternatives tested beside a green one, at most 8, come on top)' -r
complete -c autocoder -n "__fish_autocoder_using_subcommand heal" -l jobs -d 'The offline engine\'s candidates tested at once, each in a copy of its own [default: the cores]' -r
complete -c autocoder -n "__fish_autocoder_using_subcommand heal" -l mutate-time -d 'The offline engine\'s time: its candidates are tried until it is spent, then a model has its turn when one is configured' -r
complete -c autocoder -n "__fish_autocoder_using_subcommand heal" -l token-budget -d 'Tokens (in and out, all attempts) at most' -r
complete -c autocoder -n "__fish_autocoder_using_subcommand heal" -l timeout -d 'The whole repair\'s wall time at most, e.g. 10m' -r
complete -c autocoder -n "__fish_autocoder_using_subcommand heal" -l test-timeout -d 'One test run\'s time at most' -r
complete -c autocoder -n "__fish_autocoder_using_subcommand heal" -l events -d 'Write one JSON line per step (model call, edit, test run) to FILE' -r -F
complete -c autocoder -n "__fish_autocoder_using_subcommand heal" -l patch-out -d 'Write the change as a patch to FILE [default: when it is not applied, a file in the workspace\'s .git/autocoder]' -r -F
complete -c autocoder -n "__fish_autocoder_using_subcommand heal" -l env -d 'Pass an environment variable to the tests: KEY=VALUE sets it, KEY copies it' -r
complete -c autocoder -n "__fish_autocoder_using_subcommand heal" -l task -d 'Task mode: carry out TEXT (a feature, a change) with the model and the tool catalogue, tests first, instead of repairing failing tests' -r
complete -c autocoder -n "__fish_autocoder_using_subcommand heal" -l paths -d 'With --task: files or directories to look at first' -r
complete -c autocoder -n "__fish_autocoder_using_subcommand heal" -l max-steps -d 'With --task: the model\'s steps (replies) at most' -r
complete -c autocoder -n "__fish_autocoder_using_subcommand heal" -l context-tokens -d 'With --task: the model\'s context window in tokens (else AUTOCODER_CONTEXT_TOKENS or LOCAL_CODER_CONTEXT_TOKENS, else 32000); above 60% of it, older tool results are masked' -r
complete -c autocoder -n "__fish_autocoder_using_subcommand heal" -l pretty -d 'Indent the JSON written to stdout'
complete -c autocoder -n "__fish_autocoder_using_subcommand heal" -s q -l quiet -d 'Print nothing on stderr but errors'
complete -c autocoder -n "__fish_autocoder_using_subcommand heal" -s v -l verbose -d 'Explain each step on stderr'
complete -c autocoder -n "__fish_autocoder_using_subcommand heal" -l cold -d 'Run the offline engine\'s candidates cold, each as the runner runs it (by default pytest\'s, unittest\'s, jest\'s and vitest\'s run in a worker that loaded the runner once, and node --test\'s without the runner\'s own process)'
complete -c autocoder -n "__fish_autocoder_using_subcommand heal" -l allow-test-edits -d 'Let the model edit test files too (read-only otherwise)'
complete -c autocoder -n "__fish_autocoder_using_subcommand heal" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c autocoder -n "__fish_autocoder_using_subcommand mcp" -s C -d 'Run as if started in DIR' -r -F
complete -c autocoder -n "__fish_autocoder_using_subcommand mcp" -l color -d 'When to colour messages on stderr (auto: on a terminal, unless NO_COLOR is set)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c autocoder -n "__fish_autocoder_using_subcommand mcp" -l root -d 'A directory the tools may work in (repeatable); relative paths are taken from the first' -r -F
complete -c autocoder -n "__fish_autocoder_using_subcommand mcp" -l pretty -d 'Indent the JSON written to stdout'
complete -c autocoder -n "__fish_autocoder_using_subcommand mcp" -s q -l quiet -d 'Print nothing on stderr but errors'
complete -c autocoder -n "__fish_autocoder_using_subcommand mcp" -s v -l verbose -d 'Explain each step on stderr'
complete -c autocoder -n "__fish_autocoder_using_subcommand mcp" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c autocoder -n "__fish_autocoder_using_subcommand open-pr" -s C -d 'Run as if started in DIR' -r -F
complete -c autocoder -n "__fish_autocoder_using_subcommand open-pr" -l color -d 'When to colour messages on stderr (auto: on a terminal, unless NO_COLOR is set)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c autocoder -n "__fish_autocoder_using_subcommand open-pr" -l workspace -d 'The project: the repository\'s clone or a directory in it [default: the run document\'s workspace, else the current directory]' -r -F
complete -c autocoder -n "__fish_autocoder_using_subcommand open-pr" -l repo -d 'The GitHub repository [default: the run document\'s repo, else its issue\'s; never the workspace\'s remote, which sandboxed code can change]' -r
complete -c autocoder -n "__fish_autocoder_using_subcommand open-pr" -l remote -d 'The remote to push to' -r
complete -c autocoder -n "__fish_autocoder_using_subcommand open-pr" -l base -d 'The branch to merge into [default: the repository\'s default branch]' -r
complete -c autocoder -n "__fish_autocoder_using_subcommand open-pr" -l branch -d 'The branch to push [default: autocoder/issue-N-title]' -r
complete -c autocoder -n "__fish_autocoder_using_subcommand open-pr" -l title -d 'The pull request\'s title [default: fix: <issue title>]' -r
complete -c autocoder -n "__fish_autocoder_using_subcommand open-pr" -l add -d 'Also commit this file, named from the workspace (repeatable): an untracked one, or one that looks like credentials' -r
complete -c autocoder -n "__fish_autocoder_using_subcommand open-pr" -l api-url -d 'The GitHub API base URL [default: the issue\'s host, else GITHUB_API_URL, else https://api.github.com]' -r
complete -c autocoder -n "__fish_autocoder_using_subcommand open-pr" -l pretty -d 'Indent the JSON written to stdout'
complete -c autocoder -n "__fish_autocoder_using_subcommand open-pr" -s q -l quiet -d 'Print nothing on stderr but errors'
complete -c autocoder -n "__fish_autocoder_using_subcommand open-pr" -s v -l verbose -d 'Explain each step on stderr'
complete -c autocoder -n "__fish_autocoder_using_subcommand open-pr" -l draft -d 'Open a draft pull request (also when heal is not green)'
complete -c autocoder -n "__fish_autocoder_using_subcommand open-pr" -l dry-run -d 'Do everything local (the commit, in refs/autocoder/dry-run/BRANCH) and print the request that would be sent; push nothing, call no API'
complete -c autocoder -n "__fish_autocoder_using_subcommand open-pr" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c autocoder -n "__fish_autocoder_using_subcommand review" -s C -d 'Run as if started in DIR' -r -F
complete -c autocoder -n "__fish_autocoder_using_subcommand review" -l color -d 'When to colour messages on stderr (auto: on a terminal, unless NO_COLOR is set)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c autocoder -n "__fish_autocoder_using_subcommand review" -l workspace -d 'The project [default: the run document\'s workspace, else the current directory]' -r -F
complete -c autocoder -n "__fish_autocoder_using_subcommand review" -l base -d 'Review the working tree against REF' -r
complete -c autocoder -n "__fish_autocoder_using_subcommand review" -l diff -d 'Review the unified diff in FILE (- for stdin)' -r -F
complete -c autocoder -n "__fish_autocoder_using_subcommand review" -l format -d 'What to write' -r -f -a "json\t'The run document, with `review`'
markdown\t'Markdown, for a pull request\'s body'
sarif\t'SARIF 2.1.0, for GitHub code scanning'
rdjsonl\t'reviewdog\'s diagnostics, one JSON object per line'"
complete -c autocoder -n "__fish_autocoder_using_subcommand review" -l budget -d 'The context\'s size at most, in characters' -r
complete -c autocoder -n "__fish_autocoder_using_subcommand review" -l fail-on -d 'Exit 1 when a risk at least this severe is found' -r -f -a "high\t''
medium\t''
low\t''
never\t''"
complete -c autocoder -n "__fish_autocoder_using_subcommand review" -l provider -d 'The model\'s wire format [default: anthropic for api.anthropic.com or a claude-* model without a base URL, else openai]' -r -f -a "openai\t'Chat completions, as OpenAI and every local server serve them'
anthropic\t'Anthropic\'s Messages API'"
complete -c autocoder -n "__fish_autocoder_using_subcommand review" -l model -d 'The model\'s name [default: AUTOCODER_MODEL; with a local server\'s URL, its first model]' -r
complete -c autocoder -n "__fish_autocoder_using_subcommand review" -l base-url -d 'The API\'s base URL, e.g. http://127.0.0.1:11434/v1 [default: AUTOCODER_BASE_URL, else OPENAI_BASE_URL, else the provider\'s]' -r
complete -c autocoder -n "__fish_autocoder_using_subcommand review" -l pr -d 'With --post: the pull request\'s number [default: the run document\'s pr.number]' -r
complete -c autocoder -n "__fish_autocoder_using_subcommand review" -l repo -d 'With --post: the GitHub repository OWNER/NAME [default: the run document\'s repo, else its pull request\'s]' -r
complete -c autocoder -n "__fish_autocoder_using_subcommand review" -l api-url -d 'With --post: the GitHub API base URL [default: GITHUB_API_URL, else https://api.github.com]' -r
complete -c autocoder -n "__fish_autocoder_using_subcommand review" -l pretty -d 'Indent the JSON written to stdout'
complete -c autocoder -n "__fish_autocoder_using_subcommand review" -s q -l quiet -d 'Print nothing on stderr but errors'
complete -c autocoder -n "__fish_autocoder_using_subcommand review" -s v -l verbose -d 'Explain each step on stderr'
complete -c autocoder -n "__fish_autocoder_using_subcommand review" -l llm -d 'Ask the configured model for findings too (each must cite the context\'s evidence); the model is chosen as for heal: --provider, --model and --base-url, else the environment'
complete -c autocoder -n "__fish_autocoder_using_subcommand review" -l post -d 'Post the review on the pull request, its risks as comments on the lines of the diff'
complete -c autocoder -n "__fish_autocoder_using_subcommand review" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c autocoder -n "__fish_autocoder_using_subcommand run-tests" -s C -d 'Run as if started in DIR' -r -F
complete -c autocoder -n "__fish_autocoder_using_subcommand run-tests" -l color -d 'When to colour messages on stderr (auto: on a terminal, unless NO_COLOR is set)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c autocoder -n "__fish_autocoder_using_subcommand run-tests" -l workspace -d 'The project [default: the run document\'s workspace, else the current directory]' -r -F
complete -c autocoder -n "__fish_autocoder_using_subcommand run-tests" -l framework -d 'The test runner [default: detected from the project\'s files]' -r -f -a "pytest\t''
unittest\t''
cargo\t''
nextest\t''
go\t''
node\t''
jest\t''
vitest\t''
junit\t''
make\t''"
complete -c autocoder -n "__fish_autocoder_using_subcommand run-tests" -l command -d 'Run this instead of the runner\'s usual command (shell syntax runs under sh -c)' -r
complete -c autocoder -n "__fish_autocoder_using_subcommand run-tests" -l tests -d 'Run only this test (repeatable), by the id a report gives' -r
complete -c autocoder -n "__fish_autocoder_using_subcommand run-tests" -l parse -d 'Read a saved log or JUnit XML report instead of running anything' -r -F
complete -c autocoder -n "__fish_autocoder_using_subcommand run-tests" -l timeout -d 'Wall-clock limit, e.g. 90s, 10m, 1h30m, 1500ms; plain numbers are seconds' -r
complete -c autocoder -n "__fish_autocoder_using_subcommand run-tests" -l memory -d 'Memory limit for all the processes together, e.g. 512M, 2G' -r
complete -c autocoder -n "__fish_autocoder_using_subcommand run-tests" -l pids -d 'Limit on the number of processes and threads (at least 2; where rlimits hold it, the sandbox\'s own init counts too)' -r
complete -c autocoder -n "__fish_autocoder_using_subcommand run-tests" -l cpus -d 'CPU cores that may be used, e.g. 1, 2, 0.5, or all' -r
complete -c autocoder -n "__fish_autocoder_using_subcommand run-tests" -l env -d 'Pass an environment variable: KEY=VALUE sets it, KEY copies it from this environment' -r
complete -c autocoder -n "__fish_autocoder_using_subcommand run-tests" -l ro -d 'Also allow reading (and executing) PATH, e.g. a module a Go `replace` directive points to' -r -F
complete -c autocoder -n "__fish_autocoder_using_subcommand run-tests" -l caches-of -d 'The workspace whose toolchain caches the run shares: heal\'s copy gives its original' -r -F
complete -c autocoder -n "__fish_autocoder_using_subcommand run-tests" -l pretty -d 'Indent the JSON written to stdout'
complete -c autocoder -n "__fish_autocoder_using_subcommand run-tests" -s q -l quiet -d 'Print nothing on stderr but errors'
complete -c autocoder -n "__fish_autocoder_using_subcommand run-tests" -s v -l verbose -d 'Explain each step on stderr'
complete -c autocoder -n "__fish_autocoder_using_subcommand run-tests" -l network -d 'Allow network access (off by default: no TCP, UDP, raw, netlink or host UNIX sockets)'
complete -c autocoder -n "__fish_autocoder_using_subcommand run-tests" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c autocoder -n "__fish_autocoder_using_subcommand sandbox" -s C -d 'Run as if started in DIR' -r -F
complete -c autocoder -n "__fish_autocoder_using_subcommand sandbox" -l color -d 'When to colour messages on stderr (auto: on a terminal, unless NO_COLOR is set)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c autocoder -n "__fish_autocoder_using_subcommand sandbox" -l workspace -d 'The directory the command can read and write, and starts in [default: the current directory]' -r -F
complete -c autocoder -n "__fish_autocoder_using_subcommand sandbox" -l timeout -d 'Wall-clock limit, e.g. 90s, 10m, 1h30m, 1500ms; plain numbers are seconds' -r
complete -c autocoder -n "__fish_autocoder_using_subcommand sandbox" -l memory -d 'Memory limit for all the processes together, e.g. 512M, 2G' -r
complete -c autocoder -n "__fish_autocoder_using_subcommand sandbox" -l pids -d 'Limit on the number of processes and threads (at least 2; where rlimits hold it, the sandbox\'s own init counts too)' -r
complete -c autocoder -n "__fish_autocoder_using_subcommand sandbox" -l cpus -d 'CPU cores that may be used, e.g. 1, 2, 0.5, or all' -r
complete -c autocoder -n "__fish_autocoder_using_subcommand sandbox" -l env -d 'Pass an environment variable: KEY=VALUE sets it, KEY copies it from this environment' -r
complete -c autocoder -n "__fish_autocoder_using_subcommand sandbox" -l ro -d 'Also allow reading (and executing) PATH, e.g. a module a Go `replace` directive points to' -r -F
complete -c autocoder -n "__fish_autocoder_using_subcommand sandbox" -l file-size -d 'Largest file the command may write, e.g. 64M, 1G' -r
complete -c autocoder -n "__fish_autocoder_using_subcommand sandbox" -l disk -d 'Most all the files the command writes in the workspace may take together, e.g. 100M (native backend). Its changes reach the workspace when it ends by itself within it; a run that fills it, or times out or is interrupted before the command ends, changes nothing' -r
complete -c autocoder -n "__fish_autocoder_using_subcommand sandbox" -l rw -d 'Also allow reading and writing PATH' -r -F
complete -c autocoder -n "__fish_autocoder_using_subcommand sandbox" -l max-output -d 'Output kept per stream; beyond it the head and the tail are kept, e.g. 1M, 64K' -r
complete -c autocoder -n "__fish_autocoder_using_subcommand sandbox" -l result -d 'Write the result to FILE instead of stdout (or stderr with --stream)' -r -F
complete -c autocoder -n "__fish_autocoder_using_subcommand sandbox" -l backend -d 'Where the command runs' -r -f -a "native\t'Landlock, seccomp, namespaces, cgroups or rlimits, in this process tree; no daemon'
docker\t'A container on the local Docker engine'"
complete -c autocoder -n "__fish_autocoder_using_subcommand sandbox" -l image -d 'The image for --backend docker' -r
complete -c autocoder -n "__fish_autocoder_using_subcommand sandbox" -l pretty -d 'Indent the JSON written to stdout'
complete -c autocoder -n "__fish_autocoder_using_subcommand sandbox" -s q -l quiet -d 'Print nothing on stderr but errors'
complete -c autocoder -n "__fish_autocoder_using_subcommand sandbox" -s v -l verbose -d 'Explain each step on stderr'
complete -c autocoder -n "__fish_autocoder_using_subcommand sandbox" -l network -d 'Allow network access (off by default: no TCP, UDP, raw, netlink or host UNIX sockets)'
complete -c autocoder -n "__fish_autocoder_using_subcommand sandbox" -l stream -d 'Let the command\'s output through live; the result goes to stderr as one JSON line (or to --result)'
complete -c autocoder -n "__fish_autocoder_using_subcommand sandbox" -l allow-degraded -d 'Run even when an isolation layer cannot be applied (the result says which were in force)'
complete -c autocoder -n "__fish_autocoder_using_subcommand sandbox" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c autocoder -n "__fish_autocoder_using_subcommand generate" -s C -d 'Run as if started in DIR' -r -F
complete -c autocoder -n "__fish_autocoder_using_subcommand generate" -l color -d 'When to colour messages on stderr (auto: on a terminal, unless NO_COLOR is set)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c autocoder -n "__fish_autocoder_using_subcommand generate" -l out-dir -d 'The directory to write into' -r -F
complete -c autocoder -n "__fish_autocoder_using_subcommand generate" -l pretty -d 'Indent the JSON written to stdout'
complete -c autocoder -n "__fish_autocoder_using_subcommand generate" -s q -l quiet -d 'Print nothing on stderr but errors'
complete -c autocoder -n "__fish_autocoder_using_subcommand generate" -s v -l verbose -d 'Explain each step on stderr'
complete -c autocoder -n "__fish_autocoder_using_subcommand generate" -s h -l help -d 'Print help'
complete -c autocoder -n "__fish_autocoder_using_subcommand git-reader" -s C -d 'Run as if started in DIR' -r -F
complete -c autocoder -n "__fish_autocoder_using_subcommand git-reader" -l color -d 'When to colour messages on stderr (auto: on a terminal, unless NO_COLOR is set)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c autocoder -n "__fish_autocoder_using_subcommand git-reader" -l git-dir -d 'The linked worktree\'s own git directory, checked by the server; its `.git` file is not followed' -r -F
complete -c autocoder -n "__fish_autocoder_using_subcommand git-reader" -l pretty -d 'Indent the JSON written to stdout'
complete -c autocoder -n "__fish_autocoder_using_subcommand git-reader" -s q -l quiet -d 'Print nothing on stderr but errors'
complete -c autocoder -n "__fish_autocoder_using_subcommand git-reader" -s v -l verbose -d 'Explain each step on stderr'
complete -c autocoder -n "__fish_autocoder_using_subcommand git-reader" -s h -l help -d 'Print help'
complete -c autocoder -n "__fish_autocoder_using_subcommand help; and not __fish_seen_subcommand_from fetch-issue heal mcp open-pr review run-tests sandbox generate git-reader help" -f -a "fetch-issue" -d 'Fetch the issue a repair starts from, into the run document'
complete -c autocoder -n "__fish_autocoder_using_subcommand help; and not __fish_seen_subcommand_from fetch-issue heal mcp open-pr review run-tests sandbox generate git-reader help" -f -a "heal" -d 'Repair the code until the failing tests pass, with a model, in a private copy'
complete -c autocoder -n "__fish_autocoder_using_subcommand help; and not __fish_seen_subcommand_from fetch-issue heal mcp open-pr review run-tests sandbox generate git-reader help" -f -a "mcp" -d 'Serve autocoder\'s tools to editors and agents over the Model Context Protocol (stdio)'
complete -c autocoder -n "__fish_autocoder_using_subcommand help; and not __fish_seen_subcommand_from fetch-issue heal mcp open-pr review run-tests sandbox generate git-reader help" -f -a "open-pr" -d 'Commit the repair on a branch, push it and open (or update) a pull request'
complete -c autocoder -n "__fish_autocoder_using_subcommand help; and not __fish_seen_subcommand_from fetch-issue heal mcp open-pr review run-tests sandbox generate git-reader help" -f -a "review" -d 'Review a change: what it touches, what could go wrong, with evidence'
complete -c autocoder -n "__fish_autocoder_using_subcommand help; and not __fish_seen_subcommand_from fetch-issue heal mcp open-pr review run-tests sandbox generate git-reader help" -f -a "run-tests" -d 'Run the project\'s tests in the sandbox and report the failures as data'
complete -c autocoder -n "__fish_autocoder_using_subcommand help; and not __fish_seen_subcommand_from fetch-issue heal mcp open-pr review run-tests sandbox generate git-reader help" -f -a "sandbox" -d 'Run one command in a rootless sandbox that can touch nothing but the workspace'
complete -c autocoder -n "__fish_autocoder_using_subcommand help; and not __fish_seen_subcommand_from fetch-issue heal mcp open-pr review run-tests sandbox generate git-reader help" -f -a "generate" -d 'Write the man pages or shell completions (for packagers; `make generate`)'
complete -c autocoder -n "__fish_autocoder_using_subcommand help; and not __fish_seen_subcommand_from fetch-issue heal mcp open-pr review run-tests sandbox generate git-reader help" -f -a "git-reader" -d 'The MCP server\'s git reader, run in the sandbox: answers requests on stdin about the repository in its current directory'
complete -c autocoder -n "__fish_autocoder_using_subcommand help; and not __fish_seen_subcommand_from fetch-issue heal mcp open-pr review run-tests sandbox generate git-reader help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
