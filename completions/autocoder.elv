
use builtin;
use str;

set edit:completion:arg-completer[autocoder] = {|@words|
    fn spaces {|n|
        builtin:repeat $n ' ' | str:join ''
    }
    fn cand {|text desc|
        edit:complex-candidate $text &display=$text' '(spaces (- 14 (wcswidth $text)))$desc
    }
    var command = 'autocoder'
    for word $words[1..-1] {
        if (str:has-prefix $word '-') {
            break
        }
        set command = $command';'$word
    }
    var completions = [
        &'autocoder'= {
            cand -C 'Run as if started in DIR'
            cand --color 'When to colour messages on stderr (auto: on a terminal, unless NO_COLOR is set)'
            cand --pretty 'Indent the JSON written to stdout'
            cand -q 'Print nothing on stderr but errors'
            cand --quiet 'Print nothing on stderr but errors'
            cand -v 'Explain each step on stderr'
            cand --verbose 'Explain each step on stderr'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
            cand fetch-issue 'Fetch the issue a repair starts from, into the run document'
            cand heal 'Repair the code until the failing tests pass, with a model, in a private copy'
            cand mcp 'Serve autocoder''s tools to editors and agents over the Model Context Protocol (stdio)'
            cand open-pr 'Commit the repair on a branch, push it and open (or update) a pull request'
            cand review 'Review a change: what it touches, what could go wrong, with evidence'
            cand run-tests 'Run the project''s tests in the sandbox and report the failures as data'
            cand sandbox 'Run one command in a rootless sandbox that can touch nothing but the workspace'
            cand generate 'Write the man pages or shell completions (for packagers; `make generate`)'
            cand git-reader 'The MCP server''s git reader, run in the sandbox: answers requests on stdin about the repository in its current directory'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'autocoder;fetch-issue'= {
            cand -C 'Run as if started in DIR'
            cand --color 'When to colour messages on stderr (auto: on a terminal, unless NO_COLOR is set)'
            cand --api-url 'The GitHub API base URL'
            cand --pretty 'Indent the JSON written to stdout'
            cand -q 'Print nothing on stderr but errors'
            cand --quiet 'Print nothing on stderr but errors'
            cand -v 'Explain each step on stderr'
            cand --verbose 'Explain each step on stderr'
            cand --no-comments 'Skip the issue''s comments'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autocoder;heal'= {
            cand -C 'Run as if started in DIR'
            cand --color 'When to colour messages on stderr (auto: on a terminal, unless NO_COLOR is set)'
            cand --workspace 'The project to repair [default: the run document''s workspace, else the current directory]'
            cand --engine 'The engine that makes the changes'
            cand --provider 'The model''s wire format [default: anthropic for api.anthropic.com or a claude-* model without a base URL, else openai]'
            cand --model 'The model''s name [default: AUTOCODER_MODEL; with a local server''s URL, its first model]'
            cand --base-url 'The API''s base URL, e.g. http://127.0.0.1:11434/v1 [default: AUTOCODER_BASE_URL, else OPENAI_BASE_URL, else the provider''s]'
            cand --max-attempts 'The model''s attempts at most'
            cand --max-candidates 'The offline engine''s candidates at most, a safety cap under --mutate-time (the alternatives tested beside a green one, at most 8, come on top)'
            cand --jobs 'The offline engine''s candidates tested at once, each in a copy of its own [default: the cores]'
            cand --mutate-time 'The offline engine''s time: its candidates are tried until it is spent, then a model has its turn when one is configured'
            cand --token-budget 'Tokens (in and out, all attempts) at most'
            cand --timeout 'The whole repair''s wall time at most, e.g. 10m'
            cand --test-timeout 'One test run''s time at most'
            cand --events 'Write one JSON line per step (model call, edit, test run) to FILE'
            cand --patch-out 'Write the change as a patch to FILE [default: when it is not applied, a file in the workspace''s .git/autocoder]'
            cand --env 'Pass an environment variable to the tests: KEY=VALUE sets it, KEY copies it'
            cand --task 'Task mode: carry out TEXT (a feature, a change) with the model and the tool catalogue, tests first, instead of repairing failing tests'
            cand --paths 'With --task: files or directories to look at first'
            cand --max-steps 'With --task: the model''s steps (replies) at most'
            cand --context-tokens 'With --task: the model''s context window in tokens (else AUTOCODER_CONTEXT_TOKENS or LOCAL_CODER_CONTEXT_TOKENS, else 32000); above 60% of it, older tool results are masked'
            cand --pretty 'Indent the JSON written to stdout'
            cand -q 'Print nothing on stderr but errors'
            cand --quiet 'Print nothing on stderr but errors'
            cand -v 'Explain each step on stderr'
            cand --verbose 'Explain each step on stderr'
            cand --cold 'Run the offline engine''s candidates cold, each as the runner runs it (by default pytest''s, unittest''s, jest''s and vitest''s run in a worker that loaded the runner once, and node --test''s without the runner''s own process)'
            cand --allow-test-edits 'Let the model edit test files too (read-only otherwise)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autocoder;mcp'= {
            cand -C 'Run as if started in DIR'
            cand --color 'When to colour messages on stderr (auto: on a terminal, unless NO_COLOR is set)'
            cand --root 'A directory the tools may work in (repeatable); relative paths are taken from the first'
            cand --pretty 'Indent the JSON written to stdout'
            cand -q 'Print nothing on stderr but errors'
            cand --quiet 'Print nothing on stderr but errors'
            cand -v 'Explain each step on stderr'
            cand --verbose 'Explain each step on stderr'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autocoder;open-pr'= {
            cand -C 'Run as if started in DIR'
            cand --color 'When to colour messages on stderr (auto: on a terminal, unless NO_COLOR is set)'
            cand --workspace 'The project: the repository''s clone or a directory in it [default: the run document''s workspace, else the current directory]'
            cand --repo 'The GitHub repository [default: the run document''s repo, else its issue''s; never the workspace''s remote, which sandboxed code can change]'
            cand --remote 'The remote to push to'
            cand --base 'The branch to merge into [default: the repository''s default branch]'
            cand --branch 'The branch to push [default: autocoder/issue-N-title]'
            cand --title 'The pull request''s title [default: fix: <issue title>]'
            cand --add 'Also commit this file, named from the workspace (repeatable): an untracked one, or one that looks like credentials'
            cand --api-url 'The GitHub API base URL [default: the issue''s host, else GITHUB_API_URL, else https://api.github.com]'
            cand --pretty 'Indent the JSON written to stdout'
            cand -q 'Print nothing on stderr but errors'
            cand --quiet 'Print nothing on stderr but errors'
            cand -v 'Explain each step on stderr'
            cand --verbose 'Explain each step on stderr'
            cand --draft 'Open a draft pull request (also when heal is not green)'
            cand --dry-run 'Do everything local (the commit, in refs/autocoder/dry-run/BRANCH) and print the request that would be sent; push nothing, call no API'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autocoder;review'= {
            cand -C 'Run as if started in DIR'
            cand --color 'When to colour messages on stderr (auto: on a terminal, unless NO_COLOR is set)'
            cand --workspace 'The project [default: the run document''s workspace, else the current directory]'
            cand --base 'Review the working tree against REF'
            cand --diff 'Review the unified diff in FILE (- for stdin)'
            cand --format 'What to write'
            cand --budget 'The context''s size at most, in characters'
            cand --fail-on 'Exit 1 when a risk at least this severe is found'
            cand --provider 'The model''s wire format [default: anthropic for api.anthropic.com or a claude-* model without a base URL, else openai]'
            cand --model 'The model''s name [default: AUTOCODER_MODEL; with a local server''s URL, its first model]'
            cand --base-url 'The API''s base URL, e.g. http://127.0.0.1:11434/v1 [default: AUTOCODER_BASE_URL, else OPENAI_BASE_URL, else the provider''s]'
            cand --pr 'With --post: the pull request''s number [default: the run document''s pr.number]'
            cand --repo 'With --post: the GitHub repository OWNER/NAME [default: the run document''s repo, else its pull request''s]'
            cand --api-url 'With --post: the GitHub API base URL [default: GITHUB_API_URL, else https://api.github.com]'
            cand --pretty 'Indent the JSON written to stdout'
            cand -q 'Print nothing on stderr but errors'
            cand --quiet 'Print nothing on stderr but errors'
            cand -v 'Explain each step on stderr'
            cand --verbose 'Explain each step on stderr'
            cand --llm 'Ask the configured model for findings too (each must cite the context''s evidence); the model is chosen as for heal: --provider, --model and --base-url, else the environment'
            cand --post 'Post the review on the pull request, its risks as comments on the lines of the diff'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autocoder;run-tests'= {
            cand -C 'Run as if started in DIR'
            cand --color 'When to colour messages on stderr (auto: on a terminal, unless NO_COLOR is set)'
            cand --workspace 'The project [default: the run document''s workspace, else the current directory]'
            cand --framework 'The test runner [default: detected from the project''s files]'
            cand --command 'Run this instead of the runner''s usual command (shell syntax runs under sh -c)'
            cand --tests 'Run only this test (repeatable), by the id a report gives'
            cand --parse 'Read a saved log or JUnit XML report instead of running anything'
            cand --timeout 'Wall-clock limit, e.g. 90s, 10m, 1h30m, 1500ms; plain numbers are seconds'
            cand --memory 'Memory limit for all the processes together, e.g. 512M, 2G'
            cand --pids 'Limit on the number of processes and threads (at least 2; where rlimits hold it, the sandbox''s own init counts too)'
            cand --cpus 'CPU cores that may be used, e.g. 1, 2, 0.5, or all'
            cand --env 'Pass an environment variable: KEY=VALUE sets it, KEY copies it from this environment'
            cand --ro 'Also allow reading (and executing) PATH, e.g. a module a Go `replace` directive points to'
            cand --caches-of 'The workspace whose toolchain caches the run shares: heal''s copy gives its original'
            cand --pretty 'Indent the JSON written to stdout'
            cand -q 'Print nothing on stderr but errors'
            cand --quiet 'Print nothing on stderr but errors'
            cand -v 'Explain each step on stderr'
            cand --verbose 'Explain each step on stderr'
            cand --network 'Allow network access (off by default: no TCP, UDP, raw, netlink or host UNIX sockets)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autocoder;sandbox'= {
            cand -C 'Run as if started in DIR'
            cand --color 'When to colour messages on stderr (auto: on a terminal, unless NO_COLOR is set)'
            cand --workspace 'The directory the command can read and write, and starts in [default: the current directory]'
            cand --timeout 'Wall-clock limit, e.g. 90s, 10m, 1h30m, 1500ms; plain numbers are seconds'
            cand --memory 'Memory limit for all the processes together, e.g. 512M, 2G'
            cand --pids 'Limit on the number of processes and threads (at least 2; where rlimits hold it, the sandbox''s own init counts too)'
            cand --cpus 'CPU cores that may be used, e.g. 1, 2, 0.5, or all'
            cand --env 'Pass an environment variable: KEY=VALUE sets it, KEY copies it from this environment'
            cand --ro 'Also allow reading (and executing) PATH, e.g. a module a Go `replace` directive points to'
            cand --file-size 'Largest file the command may write, e.g. 64M, 1G'
            cand --disk 'Most all the files the command writes in the workspace may take together, e.g. 100M (native backend). Its changes reach the workspace when it ends by itself within it; a run that fills it, or times out or is interrupted before the command ends, changes nothing'
            cand --rw 'Also allow reading and writing PATH'
            cand --max-output 'Output kept per stream; beyond it the head and the tail are kept, e.g. 1M, 64K'
            cand --result 'Write the result to FILE instead of stdout (or stderr with --stream)'
            cand --backend 'Where the command runs'
            cand --image 'The image for --backend docker'
            cand --pretty 'Indent the JSON written to stdout'
            cand -q 'Print nothing on stderr but errors'
            cand --quiet 'Print nothing on stderr but errors'
            cand -v 'Explain each step on stderr'
            cand --verbose 'Explain each step on stderr'
            cand --network 'Allow network access (off by default: no TCP, UDP, raw, netlink or host UNIX sockets)'
            cand --stream 'Let the command''s output through live; the result goes to stderr as one JSON line (or to --result)'
            cand --allow-degraded 'Run even when an isolation layer cannot be applied (the result says which were in force)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'autocoder;generate'= {
            cand -C 'Run as if started in DIR'
            cand --color 'When to colour messages on stderr (auto: on a terminal, unless NO_COLOR is set)'
            cand --out-dir 'The directory to write into'
            cand --pretty 'Indent the JSON written to stdout'
            cand -q 'Print nothing on stderr but errors'
            cand --quiet 'Print nothing on stderr but errors'
            cand -v 'Explain each step on stderr'
            cand --verbose 'Explain each step on stderr'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'autocoder;git-reader'= {
            cand -C 'Run as if started in DIR'
            cand --color 'When to colour messages on stderr (auto: on a terminal, unless NO_COLOR is set)'
            cand --git-dir 'The linked worktree''s own git directory, checked by the server; its `.git` file is not followed'
            cand --pretty 'Indent the JSON written to stdout'
            cand -q 'Print nothing on stderr but errors'
            cand --quiet 'Print nothing on stderr but errors'
            cand -v 'Explain each step on stderr'
            cand --verbose 'Explain each step on stderr'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'autocoder;help'= {
            cand fetch-issue 'Fetch the issue a repair starts from, into the run document'
            cand heal 'Repair the code until the failing tests pass, with a model, in a private copy'
            cand mcp 'Serve autocoder''s tools to editors and agents over the Model Context Protocol (stdio)'
            cand open-pr 'Commit the repair on a branch, push it and open (or update) a pull request'
            cand review 'Review a change: what it touches, what could go wrong, with evidence'
            cand run-tests 'Run the project''s tests in the sandbox and report the failures as data'
            cand sandbox 'Run one command in a rootless sandbox that can touch nothing but the workspace'
            cand generate 'Write the man pages or shell completions (for packagers; `make generate`)'
            cand git-reader 'The MCP server''s git reader, run in the sandbox: answers requests on stdin about the repository in its current directory'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'autocoder;help;fetch-issue'= {
        }
        &'autocoder;help;heal'= {
        }
        &'autocoder;help;mcp'= {
        }
        &'autocoder;help;open-pr'= {
        }
        &'autocoder;help;review'= {
        }
        &'autocoder;help;run-tests'= {
        }
        &'autocoder;help;sandbox'= {
        }
        &'autocoder;help;generate'= {
        }
        &'autocoder;help;git-reader'= {
        }
        &'autocoder;help;help'= {
        }
    ]
    $completions[$command]
}
