// Added to jest runs by `autocoder run-tests`: one line on stderr as each test starts and as it
// ends, so that a run its timeout stops (jest writes its --json report only at the end) still
// says which tests ended, how, and which was running. Read back by src/testrun/jest_events.rs.
'use strict';

const MARK = '##autocoder-test ';
const say = (event) => process.stderr.write(MARK + JSON.stringify(event) + '\n');

class AutocoderEvents {
  onTestCaseStart(test, info) {
    say({ event: 'start', file: test.path, ancestorTitles: info.ancestorTitles, title: info.title });
  }

  onTestCaseResult(test, result) {
    say({
      event: 'end',
      file: test.path,
      ancestorTitles: result.ancestorTitles,
      title: result.title,
      status: result.status,
      failureMessages: result.failureMessages,
      location: result.location,
    });
  }
}

module.exports = AutocoderEvents;
