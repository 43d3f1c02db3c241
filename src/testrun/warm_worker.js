// autocoder's warm jest worker, run by `node -e` in the sandbox a cold run would have, with the
// jest command's first word (`jest`, `node_modules/.bin/jest`) as its argument. It loads jest
// once, then runs each request's argv through jest's own in-band API (`buildArgv`, `runCLI`),
// which gives every test file a fresh module registry, so each run sees the code as it is now.
// What jest itself loads with Node's `require` (the config, a setup) is loaded afresh too, and
// the environment and directory a run changed are put back. A run that leaves timers or
// handles open is a cold run that would not exit: it waits for them to its limit, as a cold
// run does, and if they are still open the worker ends after its reply. A project whose runs
// reach outside jest's registry in ways this cannot undo (a global setup, an ES module config)
// is said unsafe, and runs cold. Requests and replies are JSON lines on stdin and stdout; what
// jest writes meanwhile is kept for the reply. A run that never ends is ended by the caller.
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const readline = require('readline');

const reply = process.stdout.write.bind(process.stdout);
const send = (message) => reply(JSON.stringify(message) + '\n');

// The jest package the command would run: the link on PATH or in node_modules/.bin, followed.
function jestPackage(bin) {
  const found = bin.includes('/')
    ? path.resolve(bin)
    : (process.env.PATH || '').split(':').map((dir) => path.join(dir, bin)).find(fs.existsSync);
  if (!found) throw new Error(`${bin} is not on PATH`);
  return path.dirname(path.dirname(fs.realpathSync(found)));
}

let jest;
try {
  jest = require(jestPackage(process.argv[1]));
} catch (error) {
  send({ ready: false, error: String(error && error.message) });
  process.exit(1);
}
send({ ready: true });

// What jest writes during a run, kept (to `max` bytes) instead of written.
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
const environment = { ...process.env };
// Made now, so that the stderr a first run opens is not taken for a handle the run left open.
process.stderr.write('');

// The project's own modules in Node's cache (not jest's registry): loaded again next time.
function forgetProjectModules() {
  const inside = root + path.sep;
  const dependencies = path.sep + 'node_modules' + path.sep;
  for (const file of Object.keys(require.cache)) {
    if (file.startsWith(inside) && !file.includes(dependencies)) delete require.cache[file];
  }
}

// The environment and directory as they were when the worker started.
function putBack() {
  for (const name of Object.keys(process.env)) {
    if (!(name in environment)) delete process.env[name];
  }
  Object.assign(process.env, environment);
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

async function run(request) {
  const report = path.join(os.tmpdir(), `autocoder-jest-${process.pid}.json`);
  fs.rmSync(report, { force: true });
  forgetProjectModules();
  const before = handles();
  const out = capture(process.stdout, request.max_bytes);
  const err = capture(process.stderr, request.max_bytes);
  const started = Date.now();
  const deadline = started + request.limit * 1000;
  let exitCode = 1;
  let globalConfig = null;
  let timedOut = false;
  try {
    const argv = await jest.buildArgv([...request.argv, '--runInBand', `--outputFile=${report}`]);
    const ran = await jest.runCLI(argv, [root]);
    exitCode = ran.results.success ? 0 : 1;
    globalConfig = ran.globalConfig;
    // A cold run ends when nothing keeps its process alive.
    while (moreThan(handles(), before) && Date.now() < deadline) {
      await new Promise((done) => setTimeout(done, 10));
    }
    timedOut = moreThan(handles(), before);
  } catch (error) {
    process.stderr.write(String((error && error.stack) || error) + '\n');
  } finally {
    out.restore();
    err.restore();
    putBack();
  }
  let stdout = out.kept.text;
  try {
    stdout = fs.readFileSync(report, 'utf8');
  } catch (error) {
    // No report: jest stopped before it wrote one; its output says why.
  }
  return {
    exit_code: timedOut ? null : exitCode,
    signal: null,
    timed_out: timedOut,
    // Asked only of the run that learns, which decides whether the runs are trusted.
    unsafe: request.learn ? unsafe(globalConfig) : null,
    duration_ms: Date.now() - started,
    stdout,
    stderr: err.kept.text,
    stdout_truncated: out.kept.truncated,
    stderr_truncated: err.kept.truncated,
  };
}

// One request at a time, in order. jest learns nothing to preload: another worker's
// `preload` is answered at once.
let queue = Promise.resolve();
readline.createInterface({ input: process.stdin }).on('line', (line) => {
  const request = JSON.parse(line);
  queue = queue.then(async () => {
    const reply = 'preload' in request ? {} : await run(request);
    send(reply);
    // What the run left open would go on in the next runs: a fresh worker, or cold, is next.
    if (reply.timed_out) process.exit(0);
  });
});
