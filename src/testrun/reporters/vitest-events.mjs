// Added to vitest runs by `autocoder run-tests`: one line on stderr as each test starts and as
// it ends, so that a run its timeout stops (vitest writes its JSON report only at the end) still
// says which tests ended, how, and which was running. The same events as jest-events.cjs, read
// back by src/testrun/jest_events.rs.
const MARK = '##autocoder-test ';
const say = (event) => process.stderr.write(MARK + JSON.stringify(event) + '\n');

// The enclosing describe blocks' names, outermost first.
function ancestorTitles(testCase) {
  const titles = [];
  for (let suite = testCase.parent; suite && suite.type === 'suite'; suite = suite.parent) {
    titles.unshift(suite.name);
  }
  return titles;
}

const named = (testCase) => ({
  file: testCase.module.moduleId,
  ancestorTitles: ancestorTitles(testCase),
  title: testCase.name,
});

export default class AutocoderEvents {
  onTestCaseReady(testCase) {
    say({ event: 'start', ...named(testCase) });
  }

  onTestCaseResult(testCase) {
    const result = testCase.result();
    say({
      event: 'end',
      ...named(testCase),
      status: result.state,
      failureMessages: (result.errors || []).map((error) => error.stack || error.message || String(error)),
    });
  }
}
