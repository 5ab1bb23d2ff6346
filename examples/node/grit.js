// grit.js holds what the worker and the producer share: loading grit's
// .proto files, the connection and its token, calls as promises, and
// reading the reason out of a refused call.
//
// The .proto files are loaded as they are, with @grpc/proto-loader: no
// protoc, no generated code. Messages are plain objects whose fields are
// spelled as in grit.proto (keepCase), so task.lease_token is
// task.lease_token here as in the docs.
'use strict';

const path = require('node:path');
const { setTimeout: sleep } = require('node:timers/promises');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

// PROTO_DIR is api/proto of the grit repository; set GRIT_PROTO_DIR to
// use a copy elsewhere.
const PROTO_DIR = process.env.GRIT_PROTO_DIR || path.resolve(__dirname, '..', '..', 'api', 'proto');

// The google/protobuf well-known types (Duration, Timestamp) come with
// proto-loader; the google/rpc messages grit's errors carry are in
// PROTO_DIR.
const definitions = protoLoader.loadSync(
  ['grit/v1/grit.proto', 'google/rpc/status.proto', 'google/rpc/error_details.proto'],
  {
    includeDirs: [PROTO_DIR],
    keepCase: true, // worker_id, not workerId: as grit.proto and its docs spell them
    // int64 fields (ids, lease tokens, attempts) come as decimal strings:
    // an id above 2^53 would lose digits as a JavaScript number. Send
    // them back as the strings they came as.
    longs: String,
    enums: String, // 'TASK_STATE_SUCCESS', not 6
    defaults: true, // a field left unset reads as its zero ('0', '', 'X_UNSPECIFIED')
    oneofs: true, // a Report result's end names its case
  },
);

const proto = grpc.loadPackageDefinition(definitions).grit.v1;

// connect returns the TasksService and WorkersService clients of the
// server at address (HOST:PORT), with the token (GRIT_TOKEN, if set)
// that every call sends. The connection is plain text, as `grit server`
// serves it; put TLS in front for anything but a trusted network.
function connect(address, token = process.env.GRIT_TOKEN) {
  const creds = grpc.credentials.createInsecure();
  const tasks = new proto.TasksService(address, creds);
  // The workers share the tasks' channel: one connection for both.
  const workers = new proto.WorkersService(address, creds, { channelOverride: tasks.getChannel() });
  const metadata = new grpc.Metadata();
  if (token) {
    metadata.set('authorization', `Bearer ${token}`);
  }
  return {
    tasks: bind(tasks, metadata),
    workers: bind(workers, metadata),
    close: () => tasks.close(),
  };
}

// bind turns a client's callback methods into functions returning
// promises: await tasks.Get({id}) answers the response or throws the
// gRPC error. Every call has a deadline (timeoutMs, 30s unless given)
// and may be cancelled with an AbortSignal (signal).
function bind(client, metadata) {
  const methods = {};
  for (const name of Object.keys(client.constructor.service)) {
    methods[name] = (request, { timeoutMs = 30_000, signal } = {}) =>
      new Promise((resolve, reject) => {
        const deadline = new Date(Date.now() + timeoutMs);
        const cancel = () => call.cancel();
        const call = client[name](request, metadata, { deadline }, (err, response) => {
          signal?.removeEventListener('abort', cancel); // a long-lived signal would gather them
          return err ? reject(err) : resolve(response);
        });
        if (signal?.aborted) cancel();
        signal?.addEventListener('abort', cancel, { once: true });
      });
  }
  return methods;
}

// errorInfo returns the google.rpc.ErrorInfo a refused call carries
// ({reason, domain, metadata}), or undefined when it carries none (errors
// gRPC raises itself, such as a connection refused). grit puts a
// google.rpc.Status in the trailer grpc-status-details-bin, whose details
// are Any messages; the ErrorInfo is the one whose type_url names it.
function errorInfo(err) {
  const [bin] = err?.metadata?.get('grpc-status-details-bin') ?? [];
  if (!bin) return undefined;
  const status = definitions['google.rpc.Status'].deserialize(bin);
  const any = status.details.find((d) => d.type_url.endsWith('/google.rpc.ErrorInfo'));
  return any && definitions['google.rpc.ErrorInfo'].deserialize(any.value);
}

// describe says what a refused call was, for a log line:
// "FAILED_PRECONDITION LEASE_LOST task_id=7 lease_token=12 state=RUNNING: …".
function describe(err) {
  const code = grpc.status[err.code] ?? err.code;
  const info = errorInfo(err);
  if (!info) return `${code}: ${err.details || err.message}`;
  const meta = Object.entries(info.metadata).map(([k, v]) => ` ${k}=${v}`).join('');
  return `${code} ${info.reason}${meta}: ${err.details}`;
}

// retryable says whether a call that failed so may be sent again as it
// is: the server was unreachable or busy, or the call ran out of time.
// grit's reports and keyed enqueues are idempotent (a repeat of a
// recorded one answers OK), so repeating them is safe.
function retryable(err) {
  switch (err.code) {
    case grpc.status.UNAVAILABLE:
    case grpc.status.DEADLINE_EXCEEDED:
      return true;
    case grpc.status.RESOURCE_EXHAUSTED: // SERVER_BUSY; without it, a request too large
      return errorInfo(err)?.reason === 'SERVER_BUSY';
    default:
      return false;
  }
}

// withRetries calls fn until it answers, up to tries times, backing off
// (0.2s, 0.4s, 0.8s…) while its error is retryable; it throws the last
// error.
async function withRetries(fn, tries = 5) {
  for (let i = 1; ; i++) {
    try {
      return await fn();
    } catch (err) {
      if (i >= tries || !retryable(err)) throw err;
      await sleep(200 * 2 ** (i - 1));
    }
  }
}

// duration is a google.protobuf.Duration of ms milliseconds.
function duration(ms) {
  const whole = Math.round(ms);
  return { seconds: String(Math.floor(whole / 1000)), nanos: (whole % 1000) * 1e6 };
}

// word is an enum value's name after its prefix: TASK_STATE_SUCCESS is
// SUCCESS, as grit names its states everywhere else.
function word(value, prefix) {
  return value.startsWith(prefix) ? value.slice(prefix.length) : value;
}

module.exports = { connect, errorInfo, describe, withRetries, duration, word };
