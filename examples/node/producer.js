// producer.js enqueues the demo set of example.job tasks, one of each
// action worker.js knows, and with --wait waits until each has ended.
//
//   node producer.js --server 127.0.0.1:7420 [--slow SECONDS] [--wait]
//
// Each task has the idempotency key demo-ACTION: running the producer
// again answers the tasks it made the first time ("existed"), and makes
// none. The token, if the server wants one, is GRIT_TOKEN.
'use strict';

const { parseArgs } = require('node:util');
const { setTimeout: sleep } = require('node:timers/promises');
const grit = require('./grit');

const KIND = 'example.job';
// FINAL are the states a task does not leave by itself.
const FINAL = new Set(['SUCCESS', 'FAILED', 'DEAD_LETTER', 'CANCELLED', 'SKIPPED', 'UPSTREAM_FAILED']);
const POLL_MS = 250;

// demo is the demo set: each task's args, and the retry policy of those
// that fail ("5 100ms 1s": 5 retries, exponential from 100ms up to 1s).
function demo(slow) {
  return [
    { args: { action: 'ok' } },
    { args: { action: 'flaky', failures: 2 }, policy: '5 100ms 1s' },
    { args: { action: 'reject' }, policy: '5 100ms 1s' },
    { args: { action: 'later', seconds: 1 } },
    { args: { action: 'slow', seconds: slow } },
  ];
}

async function main() {
  const opts = options();
  const client = grit.connect(opts.server);
  try {
    const enqueued = await enqueue(client.tasks, demo(opts.slow));
    if (opts.wait) {
      await waitForAll(client.tasks, enqueued, opts.timeoutMs);
    }
  } finally {
    client.close();
  }
}

// options reads the command line, or exits 2 saying what is wrong.
function options() {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        server: { type: 'string', default: '127.0.0.1:7420' },
        slow: { type: 'string', default: '3' },
        wait: { type: 'boolean', default: false },
        timeout: { type: 'string', default: '120' },
      },
    }));
  } catch (err) {
    usage(err.message);
  }
  const slow = Number(values.slow);
  if (!(slow >= 0 && slow <= 3600)) {
    usage(`--slow ${values.slow}: want the slow task's seconds, from 0 to 3600 (e.g. 3)`);
  }
  const timeout = Number(values.timeout);
  if (!(timeout > 0)) {
    usage(`--timeout ${values.timeout}: want how many seconds --wait waits at most (e.g. 120)`);
  }
  return { server: values.server, slow, wait: values.wait, timeoutMs: timeout * 1000 };
}

function usage(problem) {
  console.error(`producer: ${problem}\nusage: node producer.js --server HOST:PORT [--slow SECONDS] [--wait [--timeout SECONDS]]`);
  process.exit(2);
}

// enqueue enqueues each task of the set and answers [{action, id}], in
// the set's order. A keyed Enqueue is safe to send again when its answer
// is lost: the key's task is answered, and nothing is inserted.
async function enqueue(tasks, set) {
  const enqueued = [];
  for (const { args, policy = '' } of set) {
    const request = {
      task: {
        kind: KIND,
        args: Buffer.from(JSON.stringify(args)),
        policy,
        idempotency_key: `demo-${args.action}`,
      },
    };
    const { task, existed } = await grit.withRetries(() => tasks.Enqueue(request));
    console.log(`enqueued ${args.action} ${task.id}${existed ? ' existed' : ''}`);
    enqueued.push({ action: args.action, id: task.id });
  }
  return enqueued;
}

// waitForAll reads the tasks until each is in a final state, then prints
// each one's state and attempt; past timeoutMs it throws, naming those
// that have not ended.
async function waitForAll(tasks, enqueued, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const got = await Promise.all(enqueued.map(({ id }) => grit.withRetries(() => tasks.Get({ id }))));
    const states = got.map(({ task }) => grit.word(task.state, 'TASK_STATE_'));
    if (states.every((s) => FINAL.has(s))) {
      enqueued.forEach(({ action, id }, i) => console.log(`${action} ${id} ${states[i]} attempt ${got[i].task.attempt}`));
      return;
    }
    if (Date.now() > deadline) {
      const waiting = enqueued.filter((_, i) => !FINAL.has(states[i])).map(({ action, id }) => `${action} ${id}`);
      throw new Error(`after ${timeoutMs / 1000}s, not ended: ${waiting.join(', ')}`);
    }
    await sleep(POLL_MS);
  }
}

main().catch((err) => {
  console.error(`producer: ${err.code === undefined ? err.message : grit.describe(err)}`);
  process.exit(1);
});
