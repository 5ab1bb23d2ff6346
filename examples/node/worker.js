// worker.js is a grit remote worker in Node.js: it claims tasks of kind
// example.job from a grit server, works up to 4 at once, renews their
// leases while they run, and reports how each ended.
//
//   node worker.js --server 127.0.0.1:7420 --worker-id node-1 --lease 15
//
// A task's args say what to do ({"action": …}):
//
//   ok                      complete
//   flaky, failures N       fail TRANSIENT while the attempt is <= N, then complete
//   reject                  fail PERMANENT: FAILED at once, whatever the policy
//   later, seconds S        snooze S seconds the first time, then complete
//   slow, seconds S         work S seconds (heartbeating), then complete
//
// It prints a line per event on stdout (claimed, completed, failed,
// snoozed, lost) and refused calls on stderr with their reason. The token,
// if the server wants one, is GRIT_TOKEN. On SIGTERM (or Ctrl-C) it stops
// claiming, finishes and reports the tasks it holds, and exits 0; a
// second signal exits at once.
'use strict';

const os = require('node:os');
const { parseArgs } = require('node:util');
const { setTimeout: sleep } = require('node:timers/promises');
const grit = require('./grit');

const KIND = 'example.job';
const CONCURRENCY = 4; // tasks worked at once
const CLAIM_WAIT_MS = 5_000; // how long a Claim waits for a task (long poll)

function main() {
  const { server, id, leaseMs } = options();
  const client = grit.connect(server);
  const worker = new Worker(client, id, leaseMs);
  for (const signal of ['SIGTERM', 'SIGINT']) {
    // The first signal drains; a second one exits at once, and the tasks
    // held are taken over once their leases run out.
    process.on(signal, () => (worker.stopping.signal.aborted ? process.exit(1) : worker.stop()));
  }
  console.error(`worker ${id} on ${server}, lease ${leaseMs / 1000}s`);
  worker.run().then(
    () => client.close(),
    (err) => {
      console.error(`worker: ${err.stack}`);
      process.exit(1);
    },
  );
}

// options reads the command line, or exits 2 saying what is wrong.
function options() {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        server: { type: 'string', default: '127.0.0.1:7420' },
        'worker-id': { type: 'string', default: `node-${os.hostname()}-${process.pid}` },
        lease: { type: 'string', default: '15' },
      },
    }));
  } catch (err) {
    usage(err.message);
  }
  const lease = Number(values.lease);
  if (!(lease >= 1 && lease <= 3600)) {
    usage(`--lease ${values.lease}: want seconds from 1 to 3600 (e.g. 15)`);
  }
  return { server: values.server, id: values['worker-id'], leaseMs: lease * 1000 };
}

function usage(problem) {
  console.error(`worker: ${problem}\nusage: node worker.js --server HOST:PORT [--worker-id ID] [--lease SECONDS]`);
  process.exit(2);
}

class Worker {
  constructor(client, id, leaseMs) {
    this.workers = client.workers;
    this.id = id;
    this.leaseMs = leaseMs;
    // held are the tasks being worked, by lease token (a string, as every
    // int64), each with the AbortController that abandons it when its
    // lease is lost.
    this.held = new Map();
    this.stopping = new AbortController();
  }

  // stop ends claiming (a Claim waiting is cancelled); run returns once
  // the tasks held are worked and reported.
  stop() {
    if (!this.stopping.signal.aborted) {
      console.error(`stopping: finishing ${this.held.size} task(s)`);
      this.stopping.abort();
    }
  }

  async run() {
    // One heartbeat renews every lease held, a third of the lease apart.
    const beat = setInterval(() => this.heartbeat(), this.leaseMs / 3);
    const running = new Set();
    while (!this.stopping.signal.aborted) {
      if (running.size >= CONCURRENCY) {
        await Promise.race(running);
        continue;
      }
      for (const task of await this.claim(CONCURRENCY - running.size)) {
        const work = this.work(task).finally(() => running.delete(work));
        running.add(work);
      }
    }
    await Promise.all(running);
    clearInterval(beat);
    // Holding nothing now, the worker says it is gone.
    await this.workers.Release({ worker_id: this.id, deactivate: true }).catch((err) => {
      console.error(`release: ${grit.describe(err)}`);
    });
  }

  // claim takes up to limit tasks, waiting up to CLAIM_WAIT_MS for one to
  // be due; it answers [] when none came, the call failed or the worker
  // is stopping.
  async claim(limit) {
    const signal = this.stopping.signal;
    try {
      const { tasks } = await this.workers.Claim(
        {
          worker_id: this.id,
          kinds: [KIND],
          limit,
          lease: grit.duration(this.leaseMs),
          wait: grit.duration(CLAIM_WAIT_MS),
          host: os.hostname(),
          pid: process.pid,
        },
        { timeoutMs: CLAIM_WAIT_MS + 10_000, signal },
      );
      return tasks;
    } catch (err) {
      if (!signal.aborted) {
        console.error(`claim: ${grit.describe(err)}`);
        await sleep(1_000, undefined, { signal }).catch(() => {});
      }
      return [];
    }
  }

  // work works one claimed task and reports how it ended, unless its
  // lease was lost meanwhile: then another worker has it, and a report
  // would be refused.
  async work(task) {
    console.log(`claimed ${task.id} attempt ${task.attempt}`);
    const lost = new AbortController();
    this.held.set(task.lease_token, { task, lost });
    let end;
    try {
      end = await this.handle(task, lost.signal);
    } catch (err) {
      // Args that make no sense fail for good; anything unforeseen is the
      // task's policy to judge, with poison detection (the same failure
      // twice in a row dead-letters it).
      end = err instanceof BadArgs
        ? fail('ERROR_CLASS_PERMANENT', err.message)
        : fail('ERROR_CLASS_UNCLASSIFIED', String(err?.message ?? err));
    } finally {
      this.held.delete(task.lease_token);
    }
    if (!lost.signal.aborted) {
      await this.report(task, end);
    }
  }

  // handle does what the task's args say and answers how it ended: one of
  // {complete}, {fail} or {snooze}, the ends a Report's result may have.
  async handle(task, signal) {
    let args;
    try {
      args = JSON.parse(task.args.toString('utf8'));
    } catch (err) {
      return fail('ERROR_CLASS_PERMANENT', `args are not JSON (${err.message}): want {"action": "ok"}`);
    }
    if (typeof args !== 'object' || args === null || Array.isArray(args)) {
      return fail('ERROR_CLASS_PERMANENT', `args ${JSON.stringify(args)}: want an object such as {"action": "ok"}`);
    }
    const attempt = Number(task.attempt); // an int64 string; attempts are small
    switch (args.action) {
      case 'ok':
        return complete();
      case 'flaky': {
        const failures = count(args.failures, 'failures');
        if (attempt <= failures) {
          return fail('ERROR_CLASS_TRANSIENT', `downstream unavailable (attempt ${attempt} of ${failures} failures)`);
        }
        return complete();
      }
      case 'reject':
        return fail('ERROR_CLASS_PERMANENT', 'the card was declined');
      case 'later': {
        const ms = seconds(args.seconds);
        // A snooze gives its attempt back: the task comes back at the
        // same attempt number, and snoozes counts its looks, whichever
        // worker made them.
        if (Number(task.snoozes) > 0) {
          return complete();
        }
        return { snooze: { delay: grit.duration(ms) } };
      }
      case 'slow':
        // The heartbeat renews the lease meanwhile; a lost lease aborts
        // the sleep, and work reports nothing.
        await sleep(seconds(args.seconds), undefined, { signal });
        return complete();
      default:
        return fail(
          'ERROR_CLASS_PERMANENT',
          `args: action ${JSON.stringify(args.action ?? null)} is not known: want ok, flaky, reject, later or slow`,
        );
    }
  }

  // report sends a task's end with Complete, Fail or Snooze, under the
  // claim's lease token and the worker's id (fencing), and prints it; a
  // refused report is printed with its reason (LEASE_LOST: another worker
  // has the task). A report that does not reach the server is sent again:
  // a repeat of a recorded report answers OK.
  async report(task, end) {
    const held = { task_id: task.id, lease_token: task.lease_token, worker_id: this.id };
    const [verb, call, line] = end.complete
      ? ['complete', () => this.workers.Complete({ ...held, ...end.complete }), `completed ${task.id}`]
      : end.fail
        ? ['fail', () => this.workers.Fail({ ...held, ...end.fail }),
            `failed ${task.id} ${grit.word(end.fail.error_class, 'ERROR_CLASS_')}`]
        : ['snooze', () => this.workers.Snooze({ ...held, ...end.snooze }), `snoozed ${task.id}`];
    try {
      await grit.withRetries(call);
      console.log(line);
    } catch (err) {
      console.error(`${verb} ${task.id} refused: ${grit.describe(err)}`);
    }
  }

  // heartbeat renews the leases of every task held, in one call, and
  // abandons those the server says are lost (taken over by another
  // worker after this one missed its heartbeats, or cancelled).
  async heartbeat() {
    if (this.held.size === 0 || this.beating) return;
    this.beating = true;
    const leases = [...this.held.values()].map(({ task }) => ({ task_id: task.id, lease_token: task.lease_token }));
    try {
      const { lost } = await this.workers.Heartbeat(
        { worker_id: this.id, leases, lease: grit.duration(this.leaseMs) },
        { timeoutMs: this.leaseMs },
      );
      for (const { task_id, lease_token } of lost) {
        const held = this.held.get(lease_token);
        if (held) { // not reported meanwhile
          console.log(`lost ${task_id}`);
          held.lost.abort();
        }
      }
    } catch (err) {
      console.error(`heartbeat: ${grit.describe(err)}`);
    } finally {
      this.beating = false;
    }
  }
}

function complete() {
  return { complete: {} };
}

function fail(errorClass, message) {
  return { fail: { error_class: errorClass, message } };
}

// BadArgs is args that make no sense: the task fails PERMANENT, since no
// retry makes them right.
class BadArgs extends Error {}

// count is value (args.failures) if it is a whole number >= 0.
function count(value, name) {
  if (!Number.isInteger(value) || value < 0) {
    throw new BadArgs(`args: ${name} ${JSON.stringify(value)}: want a whole number >= 0`);
  }
  return value;
}

// seconds is value (args.seconds), a number >= 0 of seconds, in ms.
function seconds(value) {
  if (typeof value !== 'number' || !(value >= 0 && value <= 86400)) {
    throw new BadArgs(`args: seconds ${JSON.stringify(value)}: want a number of seconds from 0 to 86400`);
  }
  return Math.round(value * 1000);
}

main();
