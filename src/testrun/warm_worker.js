// autocoder's warm jest and vitest worker, run by `node -e` in the sandbox a cold run would
// have, with the command's first word (`jest`, `node_modules/.bin/vitest`) as its argument.
//
// jest: it loads jest once, then runs each request's argv through jest's own in-band API
// (`buildArgv`, `runCLI`), which gives every test file a fresh module registry, so each run
// sees the code as it is now.
// What jest itself loads with Node's `require` (the config, a setup) is loaded afresh too, and
// the environment and directory a run changed are put back. A run that leaves timers or
// handles open is a cold run that would not exit: it waits for them to its limit, as a cold
// run does, and if they are still open the worker ends after its reply. A project whose runs
// reach outside jest's registry in ways this cannot undo (a global setup, an ES module config)
// is said unsafe, and runs cold.
//
// vitest: it loads vitest and, at the first run, the project's config and Vite's server once
// (`createVitest`); each run then forgets what the server transformed from the project and runs
// the request's files and test-name pattern through the same instance. The tests themselves
// run in vitest's own pool (fresh workers, as cold). A global setup, which vitest runs once per
// instance, makes a project unsafe.
//
// Requests and replies are JSON lines on stdin and stdout; what the runner writes meanwhile is
// kept for the reply. A run that never ends is ended by the caller.
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const readline = require('readline');

const reply = process.stdout.write.bind(process.stdout);
const send = (message) => reply(JSON.stringify(message) + '\n');

// The runner's package the command would run (the link on PATH or in node_modules/.bin,
// followed up to the package named `name`), and the runner's name.
function runnerPackage(bin) {
  const name = path.basename(bin);
  const found = bin.includes('/')
    ? path.resolve(bin)
    : (process.env.PATH || '').split(':').map((dir) => path.join(dir, bin)).find(fs.existsSync);
  if (!found) throw new Error(`${bin} is not on PATH`);
  for (let dir = path.dirname(fs.realpathSync(found)); dir !== path.dirname(dir); dir = path.dirname(dir)) {
    try {
      if (JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')).name === name) {
        return { name, dir };
      }
    } catch (error) {
      // Not the package's directory yet.
    }
  }
  throw new Error(`${bin} is not in a ${name} package`);
}

// jest's API, or vitest's (`vitest/node`, an ES module).
async function load(runner) {
  if (runner.name === 'jest') return require(runner.dir);
  const exported = JSON.parse(fs.readFileSync(path.join(runner.dir, 'package.json'), 'utf8'))
    .exports['./node'];
  const file = typeof exported === 'string' ? exported : exported.import || exported.default;
  return import(require('url').pathToFileURL(path.join(runner.dir, file)).href);
}

// What the runner writes during a run, kept (to `max` bytes) instead of written.
function capture(stream, max) {
  const kept = { text: '', truncated: false };
  const write = stream.write;
  stream.write = (chunk, ...rest) => {
    const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    if (kept.text.length + text.length > max) kept.truncated = true;
    else kept.text += text;
    const done = rest.find((r) => typeof r === 'function');
    if (done) done();
    return true;
  };
  return { kept, restore: () => { stream.write = write; } };
}

const root = process.cwd();
const workersEnvironment = { ...process.env };
// What runs are given back: the worker's environment, and what a vitest config loaded in it set
// (a cold run loads the config, and sets it, every time).
let runsEnvironment = workersEnvironment;
// Made now, so that the stderr a first run opens is not taken for a handle the run left open.
process.stderr.write('');

// A file of the project's own, not of its dependencies.
const inProject = (file) =>
  file.startsWith(root + path.sep) && !file.includes(path.sep + 'node_modules' + path.sep);

// The project's own modules in Node's cache (not jest's registry): loaded again next time.
function forgetProjectModules() {
  for (const file of Object.keys(require.cache)) {
    if (inProject(file)) delete require.cache[file];
  }
}

// The environment (`kept`) and the directory as they were before the run.
function putBack(kept) {
  for (const name of Object.keys(process.env)) {
    if (!(name in kept)) delete process.env[name];
  }
  Object.assign(process.env, kept);
  process.chdir(root);
}

// How many of each kind of handle (timers, sockets, ...) keep the process alive.
function handles() {
  const counts = {};
  for (const kind of process.getActiveResourcesInfo()) counts[kind] = (counts[kind] || 0) + 1;
  return counts;
}
const moreThan = (now, before) => Object.keys(now).some((kind) => now[kind] > (before[kind] || 0));

// Why this project's runs would not be what fresh processes give, if so.
function unsafe(globalConfig) {
  if (globalConfig && (globalConfig.globalSetup || globalConfig.globalTeardown)) {
    return "jest's globalSetup or globalTeardown runs in the worker's own process";
  }
  const esm = ['jest.config.mjs', 'jest.config.ts', 'jest.config.mts', 'jest.config.cts'];
  const found = esm.find((name) => fs.existsSync(path.join(root, name)));
  if (found) return `${found} cannot be loaded afresh in the worker`;
  try {
    const module = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).type;
    if (module === 'module' && fs.existsSync(path.join(root, 'jest.config.js'))) {
      return 'jest.config.js is an ES module, which cannot be loaded afresh in the worker';
    }
  } catch (error) {
    // No package.json to read: jest's own error says so.
  }
  return null;
}

// A jest run of `request` writing its report to `report`: its exit code, whether it left
// handles open to its deadline, and why the runs are unsafe, if they are.
async function runJest(request, report) {
  forgetProjectModules();
  const before = handles();
  const deadline = Date.now() + request.limit * 1000;
  const argv = await api.buildArgv([...request.argv, '--runInBand', `--outputFile=${report}`]);
  const ran = await api.runCLI(argv, [root]);
  // A cold run ends when nothing keeps its process alive.
  while (moreThan(handles(), before) && Date.now() < deadline) {
    await new Promise((done) => setTimeout(done, 10));
  }
  return {
    exitCode: ran.results.success ? 0 : 1,
    timedOut: moreThan(handles(), before),
    unsafe: request.learn ? unsafe(ran.globalConfig) : null,
  };
}

// The vitest instance, made by the first run, and what it was made from: the options (all but
// the test-name pattern) and its configs and the files they import, as read then. A run that
// finds either changed (a candidate in a file the config imports) makes it again.
let vitest = null;
let vitestMadeFrom = null;

function madeFrom(options) {
  const files = new Set();
  for (const project of vitest ? vitest.projects : []) {
    for (const file of project.vite.config.configFileDependencies || []) files.add(file);
  }
  const read = [...files].sort().map((file) => {
    try {
      return file + '\0' + fs.readFileSync(file, 'utf8');
    } catch (error) {
      return file;
    }
  });
  return JSON.stringify([options, read]);
}

// A vitest run of `request`, as `runJest`'s.
async function runVitest(request, report) {
  const { filter, options } = api.parseCLI(['vitest', ...request.argv]);
  const { testNamePattern, t: _, ...rest } = options;
  if (vitest && madeFrom(rest) !== vitestMadeFrom) {
    await vitest.close();
    vitest = null;
  }
  if (!vitest) {
    putBack(workersEnvironment);
    vitest = await api.createVitest('test', { ...rest, watch: false, outputFile: report });
    vitestMadeFrom = madeFrom(rest);
    await vitest.standalone();
    runsEnvironment = { ...process.env };
  } else {
    // What the server transformed from the project is transformed again from disk.
    for (const project of vitest.projects) {
      for (const viteEnvironment of Object.values(project.vite.environments)) {
        for (const file of [...viteEnvironment.moduleGraph.fileToModulesMap.keys()]) {
          if (inProject(file)) vitest.invalidateFile(file);
        }
      }
    }
  }
  vitest.setGlobalTestNamePattern(testNamePattern);
  // As vitest's own reruns do: the snapshots' summary is the run's alone.
  vitest.snapshot.clear();
  process.exitCode = undefined;
  const files = await vitest.globTestSpecifications(filter);
  await vitest.runTestSpecifications(files, false);
  // As `vitest run` exits: 1 when a test failed (the run's report says), an error was not
  // handled (vitest sets the exit code), or no test file was found.
  let passed = false;
  try {
    passed = JSON.parse(fs.readFileSync(report, 'utf8')).success === true;
  } catch (error) {
    // No report: the run did not pass.
  }
  const failed = !passed || (files.length === 0 && !vitest.config.passWithNoTests);
  const exitCode = process.exitCode || (failed ? 1 : 0);
  process.exitCode = undefined;
  const setUp = vitest.projects.find((project) => [].concat(project.config.globalSetup || []).length);
  return {
    exitCode,
    timedOut: false,
    unsafe: setUp ? "vitest's globalSetup runs once in the worker, not once a run" : null,
  };
}

async function run(request) {
  const report = path.join(os.tmpdir(), `autocoder-${runner.name}-${process.pid}.json`);
  fs.rmSync(report, { force: true });
  const out = capture(process.stdout, request.max_bytes);
  const err = capture(process.stderr, request.max_bytes);
  const started = Date.now();
  let ran = { exitCode: 1, timedOut: false, unsafe: null };
  try {
    ran = await (runner.name === 'jest' ? runJest : runVitest)(request, report);
  } catch (error) {
    process.stderr.write(String((error && error.stack) || error) + '\n');
    if (request.learn && runner.name === 'jest') ran.unsafe = unsafe(null);
  } finally {
    out.restore();
    err.restore();
    putBack(runsEnvironment);
  }
  let stdout = out.kept.text;
  try {
    stdout = fs.readFileSync(report, 'utf8');
  } catch (error) {
    // No report: the runner stopped before it wrote one; its output says why.
  }
  return {
    exit_code: ran.timedOut ? null : ran.exitCode,
    signal: null,
    timed_out: ran.timedOut,
    // Heeded only from the run that learns, which decides whether the runs are trusted.
    unsafe: ran.unsafe,
    duration_ms: Date.now() - started,
    stdout,
    stderr: err.kept.text,
    stdout_truncated: out.kept.truncated,
    stderr_truncated: err.kept.truncated,
  };
}

// One request at a time, in order, once the runner is loaded. jest and vitest learn nothing to
// preload: another worker's `preload` is answered at once.
let runner;
let api;
let queue = (async () => {
  try {
    runner = runnerPackage(process.argv[1]);
    api = await load(runner);
  } catch (error) {
    send({ ready: false, error: String(error && error.message) });
    process.exit(1);
  }
  send({ ready: true });
})();
readline.createInterface({ input: process.stdin }).on('line', (line) => {
  const request = JSON.parse(line);
  queue = queue.then(async () => {
    const reply = 'preload' in request ? {} : await run(request);
    send(reply);
    // What the run left open would go on in the next runs: a fresh worker, or cold, is next.
    if (reply.timed_out) process.exit(0);
  });
});
