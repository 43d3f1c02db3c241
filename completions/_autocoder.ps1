
using namespace System.Management.Automation
using namespace System.Management.Automation.Language

Register-ArgumentCompleter -Native -CommandName 'autocoder' -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)

    $commandElements = $commandAst.CommandElements
    $command = @(
        'autocoder'
        for ($i = 1; $i -lt $commandElements.Count; $i++) {
            $element = $commandElements[$i]
            if ($element -isnot [StringConstantExpressionAst] -or
                $element.StringConstantType -ne [StringConstantType]::BareWord -or
                $element.Value.StartsWith('-') -or
                $element.Value -eq $wordToComplete) {
                break
        }
        $element.Value
    }) -join ';'

    $completions = @(switch ($command) {
        'autocoder' {
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Run as if started in DIR')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour messages on stderr (auto: on a terminal, unless NO_COLOR is set)')
            [CompletionResult]::new('--pretty', '--pretty', [CompletionResultType]::ParameterName, 'Indent the JSON written to stdout')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Explain each step on stderr')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Explain each step on stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('fetch-issue', 'fetch-issue', [CompletionResultType]::ParameterValue, 'Fetch the issue a repair starts from, into the run document')
            [CompletionResult]::new('heal', 'heal', [CompletionResultType]::ParameterValue, 'Repair the code until the failing tests pass, with a model, in a private copy')
            [CompletionResult]::new('mcp', 'mcp', [CompletionResultType]::ParameterValue, 'Serve autocoder''s tools to editors and agents over the Model Context Protocol (stdio)')
            [CompletionResult]::new('open-pr', 'open-pr', [CompletionResultType]::ParameterValue, 'Commit the repair on a branch, push it and open (or update) a pull request')
            [CompletionResult]::new('review', 'review', [CompletionResultType]::ParameterValue, 'Review a change: what it touches, what could go wrong, with evidence')
            [CompletionResult]::new('run-tests', 'run-tests', [CompletionResultType]::ParameterValue, 'Run the project''s tests in the sandbox and report the failures as data')
            [CompletionResult]::new('sandbox', 'sandbox', [CompletionResultType]::ParameterValue, 'Run one command in a rootless sandbox that can touch nothing but the workspace')
            [CompletionResult]::new('generate', 'generate', [CompletionResultType]::ParameterValue, 'Write the man pages or shell completions (for packagers; `make generate`)')
            [CompletionResult]::new('git-reader', 'git-reader', [CompletionResultType]::ParameterValue, 'The MCP server''s git reader, run in the sandbox: answers requests on stdin about the repository in its current directory')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'autocoder;fetch-issue' {
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Run as if started in DIR')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour messages on stderr (auto: on a terminal, unless NO_COLOR is set)')
            [CompletionResult]::new('--api-url', '--api-url', [CompletionResultType]::ParameterName, 'The GitHub API base URL')
            [CompletionResult]::new('--pretty', '--pretty', [CompletionResultType]::ParameterName, 'Indent the JSON written to stdout')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Explain each step on stderr')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Explain each step on stderr')
            [CompletionResult]::new('--no-comments', '--no-comments', [CompletionResultType]::ParameterName, 'Skip the issue''s comments')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autocoder;heal' {
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Run as if started in DIR')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour messages on stderr (auto: on a terminal, unless NO_COLOR is set)')
            [CompletionResult]::new('--workspace', '--workspace', [CompletionResultType]::ParameterName, 'The project to repair [default: the run document''s workspace, else the current directory]')
            [CompletionResult]::new('--engine', '--engine', [CompletionResultType]::ParameterName, 'The engine that makes the changes')
            [CompletionResult]::new('--provider', '--provider', [CompletionResultType]::ParameterName, 'The model''s wire format [default: anthropic for api.anthropic.com or a claude-* model without a base URL, else openai]')
            [CompletionResult]::new('--model', '--model', [CompletionResultType]::ParameterName, 'The model''s name [default: AUTOCODER_MODEL; with a local server''s URL, its first model]')
            [CompletionResult]::new('--base-url', '--base-url', [CompletionResultType]::ParameterName, 'The API''s base URL, e.g. http://127.0.0.1:11434/v1 [default: AUTOCODER_BASE_URL, else OPENAI_BASE_URL, else the provider''s]')
            [CompletionResult]::new('--max-attempts', '--max-attempts', [CompletionResultType]::ParameterName, 'The model''s attempts at most')
            [CompletionResult]::new('--max-candidates', '--max-candidates', [CompletionResultType]::ParameterName, 'The offline engine''s candidates at most, a safety cap under --mutate-time (the alternatives tested beside a green one, at most 8, come on top)')
            [CompletionResult]::new('--jobs', '--jobs', [CompletionResultType]::ParameterName, 'The offline engine''s candidates tested at once, each in a copy of its own [default: the cores]')
            [CompletionResult]::new('--mutate-time', '--mutate-time', [CompletionResultType]::ParameterName, 'The offline engine''s time: its candidates are tried until it is spent, then a model has its turn when one is configured')
            [CompletionResult]::new('--token-budget', '--token-budget', [CompletionResultType]::ParameterName, 'Tokens (in and out, all attempts) at most')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'The whole repair''s wall time at most, e.g. 10m')
            [CompletionResult]::new('--test-timeout', '--test-timeout', [CompletionResultType]::ParameterName, 'One test run''s time at most')
            [CompletionResult]::new('--events', '--events', [CompletionResultType]::ParameterName, 'Write one JSON line per step (model call, edit, test run) to FILE')
            [CompletionResult]::new('--patch-out', '--patch-out', [CompletionResultType]::ParameterName, 'Write the change as a patch to FILE [default: when it is not applied, a file in the workspace''s .git/autocoder]')
            [CompletionResult]::new('--env', '--env', [CompletionResultType]::ParameterName, 'Pass an environment variable to the tests: KEY=VALUE sets it, KEY copies it')
            [CompletionResult]::new('--task', '--task', [CompletionResultType]::ParameterName, 'Task mode: carry out TEXT (a feature, a change) with the model and the tool catalogue, tests first, instead of repairing failing tests')
            [CompletionResult]::new('--paths', '--paths', [CompletionResultType]::ParameterName, 'With --task: files or directories to look at first')
            [CompletionResult]::new('--max-steps', '--max-steps', [CompletionResultType]::ParameterName, 'With --task: the model''s steps (replies) at most')
            [CompletionResult]::new('--context-tokens', '--context-tokens', [CompletionResultType]::ParameterName, 'With --task: the model''s context window in tokens (else AUTOCODER_CONTEXT_TOKENS or LOCAL_CODER_CONTEXT_TOKENS, else 32000); above 60% of it, older tool results are masked')
            [CompletionResult]::new('--pretty', '--pretty', [CompletionResultType]::ParameterName, 'Indent the JSON written to stdout')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Explain each step on stderr')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Explain each step on stderr')
            [CompletionResult]::new('--cold', '--cold', [CompletionResultType]::ParameterName, 'Run the offline engine''s candidates cold, each as the runner runs it (by default pytest''s, unittest''s, jest''s and vitest''s run in a worker that loaded the runner once, and node --test''s without the runner''s own process)')
            [CompletionResult]::new('--allow-test-edits', '--allow-test-edits', [CompletionResultType]::ParameterName, 'Let the model edit test files too (read-only otherwise)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autocoder;mcp' {
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Run as if started in DIR')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour messages on stderr (auto: on a terminal, unless NO_COLOR is set)')
            [CompletionResult]::new('--root', '--root', [CompletionResultType]::ParameterName, 'A directory the tools may work in (repeatable); relative paths are taken from the first')
            [CompletionResult]::new('--pretty', '--pretty', [CompletionResultType]::ParameterName, 'Indent the JSON written to stdout')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Explain each step on stderr')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Explain each step on stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autocoder;open-pr' {
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Run as if started in DIR')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour messages on stderr (auto: on a terminal, unless NO_COLOR is set)')
            [CompletionResult]::new('--workspace', '--workspace', [CompletionResultType]::ParameterName, 'The project: the repository''s clone or a directory in it [default: the run document''s workspace, else the current directory]')
            [CompletionResult]::new('--repo', '--repo', [CompletionResultType]::ParameterName, 'The GitHub repository [default: the run document''s repo, else its issue''s; never the workspace''s remote, which sandboxed code can change]')
            [CompletionResult]::new('--remote', '--remote', [CompletionResultType]::ParameterName, 'The remote to push to')
            [CompletionResult]::new('--base', '--base', [CompletionResultType]::ParameterName, 'The branch to merge into [default: the repository''s default branch]')
            [CompletionResult]::new('--branch', '--branch', [CompletionResultType]::ParameterName, 'The branch to push [default: autocoder/issue-N-title]')
            [CompletionResult]::new('--title', '--title', [CompletionResultType]::ParameterName, 'The pull request''s title [default: fix: <issue title>]')
            [CompletionResult]::new('--add', '--add', [CompletionResultType]::ParameterName, 'Also commit this file, named from the workspace (repeatable): an untracked one, or one that looks like credentials')
            [CompletionResult]::new('--api-url', '--api-url', [CompletionResultType]::ParameterName, 'The GitHub API base URL [default: the issue''s host, else GITHUB_API_URL, else https://api.github.com]')
            [CompletionResult]::new('--pretty', '--pretty', [CompletionResultType]::ParameterName, 'Indent the JSON written to stdout')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Explain each step on stderr')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Explain each step on stderr')
            [CompletionResult]::new('--draft', '--draft', [CompletionResultType]::ParameterName, 'Open a draft pull request (also when heal is not green)')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'Do everything local (the commit, in refs/autocoder/dry-run/BRANCH) and print the request that would be sent; push nothing, call no API')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autocoder;review' {
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Run as if started in DIR')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour messages on stderr (auto: on a terminal, unless NO_COLOR is set)')
            [CompletionResult]::new('--workspace', '--workspace', [CompletionResultType]::ParameterName, 'The project [default: the run document''s workspace, else the current directory]')
            [CompletionResult]::new('--base', '--base', [CompletionResultType]::ParameterName, 'Review the working tree against REF')
            [CompletionResult]::new('--diff', '--diff', [CompletionResultType]::ParameterName, 'Review the unified diff in FILE (- for stdin)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'What to write')
            [CompletionResult]::new('--budget', '--budget', [CompletionResultType]::ParameterName, 'The context''s size at most, in characters')
            [CompletionResult]::new('--fail-on', '--fail-on', [CompletionResultType]::ParameterName, 'Exit 1 when a risk at least this severe is found')
            [CompletionResult]::new('--provider', '--provider', [CompletionResultType]::ParameterName, 'The model''s wire format [default: anthropic for api.anthropic.com or a claude-* model without a base URL, else openai]')
            [CompletionResult]::new('--model', '--model', [CompletionResultType]::ParameterName, 'The model''s name [default: AUTOCODER_MODEL; with a local server''s URL, its first model]')
            [CompletionResult]::new('--base-url', '--base-url', [CompletionResultType]::ParameterName, 'The API''s base URL, e.g. http://127.0.0.1:11434/v1 [default: AUTOCODER_BASE_URL, else OPENAI_BASE_URL, else the provider''s]')
            [CompletionResult]::new('--pr', '--pr', [CompletionResultType]::ParameterName, 'With --post: the pull request''s number [default: the run document''s pr.number]')
            [CompletionResult]::new('--repo', '--repo', [CompletionResultType]::ParameterName, 'With --post: the GitHub repository OWNER/NAME [default: the run document''s repo, else its pull request''s]')
            [CompletionResult]::new('--api-url', '--api-url', [CompletionResultType]::ParameterName, 'With --post: the GitHub API base URL [default: GITHUB_API_URL, else https://api.github.com]')
            [CompletionResult]::new('--pretty', '--pretty', [CompletionResultType]::ParameterName, 'Indent the JSON written to stdout')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Explain each step on stderr')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Explain each step on stderr')
            [CompletionResult]::new('--llm', '--llm', [CompletionResultType]::ParameterName, 'Ask the configured model for findings too (each must cite the context''s evidence); the model is chosen as for heal: --provider, --model and --base-url, else the environment')
            [CompletionResult]::new('--post', '--post', [CompletionResultType]::ParameterName, 'Post the review on the pull request, its risks as comments on the lines of the diff')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autocoder;run-tests' {
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Run as if started in DIR')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour messages on stderr (auto: on a terminal, unless NO_COLOR is set)')
            [CompletionResult]::new('--workspace', '--workspace', [CompletionResultType]::ParameterName, 'The project [default: the run document''s workspace, else the current directory]')
            [CompletionResult]::new('--framework', '--framework', [CompletionResultType]::ParameterName, 'The test runner [default: detected from the project''s files]')
            [CompletionResult]::new('--command', '--command', [CompletionResultType]::ParameterName, 'Run this instead of the runner''s usual command (shell syntax runs under sh -c)')
            [CompletionResult]::new('--tests', '--tests', [CompletionResultType]::ParameterName, 'Run only this test (repeatable), by the id a report gives')
            [CompletionResult]::new('--parse', '--parse', [CompletionResultType]::ParameterName, 'Read a saved log or JUnit XML report instead of running anything')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Wall-clock limit, e.g. 90s, 10m, 1h30m, 1500ms; plain numbers are seconds')
            [CompletionResult]::new('--memory', '--memory', [CompletionResultType]::ParameterName, 'Memory limit for all the processes together, e.g. 512M, 2G')
            [CompletionResult]::new('--pids', '--pids', [CompletionResultType]::ParameterName, 'Limit on the number of processes and threads (at least 2; where rlimits hold it, the sandbox''s own init counts too)')
            [CompletionResult]::new('--cpus', '--cpus', [CompletionResultType]::ParameterName, 'CPU cores that may be used, e.g. 1, 2, 0.5, or all')
            [CompletionResult]::new('--env', '--env', [CompletionResultType]::ParameterName, 'Pass an environment variable: KEY=VALUE sets it, KEY copies it from this environment')
            [CompletionResult]::new('--ro', '--ro', [CompletionResultType]::ParameterName, 'Also allow reading (and executing) PATH, e.g. a module a Go `replace` directive points to')
            [CompletionResult]::new('--caches-of', '--caches-of', [CompletionResultType]::ParameterName, 'The workspace whose toolchain caches the run shares: heal''s copy gives its original')
            [CompletionResult]::new('--pretty', '--pretty', [CompletionResultType]::ParameterName, 'Indent the JSON written to stdout')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Explain each step on stderr')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Explain each step on stderr')
            [CompletionResult]::new('--network', '--network', [CompletionResultType]::ParameterName, 'Allow network access (off by default: no TCP, UDP, raw, netlink or host UNIX sockets)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autocoder;sandbox' {
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Run as if started in DIR')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour messages on stderr (auto: on a terminal, unless NO_COLOR is set)')
            [CompletionResult]::new('--workspace', '--workspace', [CompletionResultType]::ParameterName, 'The directory the command can read and write, and starts in [default: the current directory]')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Wall-clock limit, e.g. 90s, 10m, 1h30m, 1500ms; plain numbers are seconds')
            [CompletionResult]::new('--memory', '--memory', [CompletionResultType]::ParameterName, 'Memory limit for all the processes together, e.g. 512M, 2G')
            [CompletionResult]::new('--pids', '--pids', [CompletionResultType]::ParameterName, 'Limit on the number of processes and threads (at least 2; where rlimits hold it, the sandbox''s own init counts too)')
            [CompletionResult]::new('--cpus', '--cpus', [CompletionResultType]::ParameterName, 'CPU cores that may be used, e.g. 1, 2, 0.5, or all')
            [CompletionResult]::new('--env', '--env', [CompletionResultType]::ParameterName, 'Pass an environment variable: KEY=VALUE sets it, KEY copies it from this environment')
            [CompletionResult]::new('--ro', '--ro', [CompletionResultType]::ParameterName, 'Also allow reading (and executing) PATH, e.g. a module a Go `replace` directive points to')
            [CompletionResult]::new('--file-size', '--file-size', [CompletionResultType]::ParameterName, 'Largest file the command may write, e.g. 64M, 1G')
            [CompletionResult]::new('--disk', '--disk', [CompletionResultType]::ParameterName, 'Most all the files the command writes in the workspace may take together, e.g. 100M (native backend). Its changes reach the workspace when it ends by itself within it; a run that fills it, or times out or is interrupted before the command ends, changes nothing')
            [CompletionResult]::new('--rw', '--rw', [CompletionResultType]::ParameterName, 'Also allow reading and writing PATH')
            [CompletionResult]::new('--max-output', '--max-output', [CompletionResultType]::ParameterName, 'Output kept per stream; beyond it the head and the tail are kept, e.g. 1M, 64K')
            [CompletionResult]::new('--result', '--result', [CompletionResultType]::ParameterName, 'Write the result to FILE instead of stdout (or stderr with --stream)')
            [CompletionResult]::new('--backend', '--backend', [CompletionResultType]::ParameterName, 'Where the command runs')
            [CompletionResult]::new('--image', '--image', [CompletionResultType]::ParameterName, 'The image for --backend docker')
            [CompletionResult]::new('--pretty', '--pretty', [CompletionResultType]::ParameterName, 'Indent the JSON written to stdout')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Explain each step on stderr')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Explain each step on stderr')
            [CompletionResult]::new('--network', '--network', [CompletionResultType]::ParameterName, 'Allow network access (off by default: no TCP, UDP, raw, netlink or host UNIX sockets)')
            [CompletionResult]::new('--stream', '--stream', [CompletionResultType]::ParameterName, 'Let the command''s output through live; the result goes to stderr as one JSON line (or to --result)')
            [CompletionResult]::new('--allow-degraded', '--allow-degraded', [CompletionResultType]::ParameterName, 'Run even when an isolation layer cannot be applied (the result says which were in force)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'autocoder;generate' {
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Run as if started in DIR')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour messages on stderr (auto: on a terminal, unless NO_COLOR is set)')
            [CompletionResult]::new('--out-dir', '--out-dir', [CompletionResultType]::ParameterName, 'The directory to write into')
            [CompletionResult]::new('--pretty', '--pretty', [CompletionResultType]::ParameterName, 'Indent the JSON written to stdout')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Explain each step on stderr')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Explain each step on stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'autocoder;git-reader' {
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Run as if started in DIR')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour messages on stderr (auto: on a terminal, unless NO_COLOR is set)')
            [CompletionResult]::new('--git-dir', '--git-dir', [CompletionResultType]::ParameterName, 'The linked worktree''s own git directory, checked by the server; its `.git` file is not followed')
            [CompletionResult]::new('--pretty', '--pretty', [CompletionResultType]::ParameterName, 'Indent the JSON written to stdout')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing on stderr but errors')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Explain each step on stderr')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Explain each step on stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'autocoder;help' {
            [CompletionResult]::new('fetch-issue', 'fetch-issue', [CompletionResultType]::ParameterValue, 'Fetch the issue a repair starts from, into the run document')
            [CompletionResult]::new('heal', 'heal', [CompletionResultType]::ParameterValue, 'Repair the code until the failing tests pass, with a model, in a private copy')
            [CompletionResult]::new('mcp', 'mcp', [CompletionResultType]::ParameterValue, 'Serve autocoder''s tools to editors and agents over the Model Context Protocol (stdio)')
            [CompletionResult]::new('open-pr', 'open-pr', [CompletionResultType]::ParameterValue, 'Commit the repair on a branch, push it and open (or update) a pull request')
            [CompletionResult]::new('review', 'review', [CompletionResultType]::ParameterValue, 'Review a change: what it touches, what could go wrong, with evidence')
            [CompletionResult]::new('run-tests', 'run-tests', [CompletionResultType]::ParameterValue, 'Run the project''s tests in the sandbox and report the failures as data')
            [CompletionResult]::new('sandbox', 'sandbox', [CompletionResultType]::ParameterValue, 'Run one command in a rootless sandbox that can touch nothing but the workspace')
            [CompletionResult]::new('generate', 'generate', [CompletionResultType]::ParameterValue, 'Write the man pages or shell completions (for packagers; `make generate`)')
            [CompletionResult]::new('git-reader', 'git-reader', [CompletionResultType]::ParameterValue, 'The MCP server''s git reader, run in the sandbox: answers requests on stdin about the repository in its current directory')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'autocoder;help;fetch-issue' {
            break
        }
        'autocoder;help;heal' {
            break
        }
        'autocoder;help;mcp' {
            break
        }
        'autocoder;help;open-pr' {
            break
        }
        'autocoder;help;review' {
            break
        }
        'autocoder;help;run-tests' {
            break
        }
        'autocoder;help;sandbox' {
            break
        }
        'autocoder;help;generate' {
            break
        }
        'autocoder;help;git-reader' {
            break
        }
        'autocoder;help;help' {
            break
        }
    })

    $completions.Where{ $_.CompletionText -like "$wordToComplete*" } |
        Sort-Object -Property ListItemText
}
