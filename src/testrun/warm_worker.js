// autocoder's warm jest worker, run by `node -e` in the sandbox a cold run would have, with the
// jest command's first word (`jest`, `node_modules/.bin/jest`) as its argument. It loads jest
// once, then runs each request's argv through jest's own in-band API (`buildArgv`, `runCLI`),
// which gives every test file a fresh module registry, so each run sees the code as it is now.
// Requests and replies are JSON lines on stdin and stdout; what jest writes meanwhile is kept
// for the reply. A run that never ends is ended by the caller, which stops this worker.
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

async function run(request) {
  const report = path.join(os.tmpdir(), `autocoder-jest-${process.pid}.json`);
  fs.rmSync(report, { force: true });
  const out = capture(process.stdout, request.max_bytes);
  const err = capture(process.stderr, request.max_bytes);
  const started = Date.now();
  let exitCode = 1;
  try {
    const argv = await jest.buildArgv([...request.argv, '--runInBand', `--outputFile=${report}`]);
    const { results } = await jest.runCLI(argv, [process.cwd()]);
    exitCode = results.success ? 0 : 1;
  } catch (error) {
    process.stderr.write(String((error && error.stack) || error) + '\n');
  } finally {
    out.restore();
    err.restore();
  }
  let stdout = out.kept.text;
  try {
    stdout = fs.readFileSync(report, 'utf8');
  } catch (error) {
    // No report: jest stopped before it wrote one; its output says why.
  }
  return {
    exit_code: exitCode,
    signal: null,
    timed_out: false,
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
  queue = queue.then(async () => send('preload' in request ? {} : await run(request)));
});
