#!/usr/bin/env node
// The official Node.js SDK (rocketmq-client-nodejs, pinned in package.json and
// package-lock.json) through a rocketgo gRPC proxy: the scenarios of
// sdk_harness_test.go, as python/sdk_scenarios.py runs them with the Python SDK.
//
// Driven by compat-tests/sdk_nodejs_test.go: the configuration comes as JSON in
// the SDK_TEST_CONFIG environment variable
//
//   {"endpoint": "127.0.0.1:PORT", "tls": false, "count": 4, "timeout_s": 40,
//    "scenarios": {"normal": {"topic": "...", "group": "..."}, ...}}
//
// and the scenarios named there run concurrently. Each prints one JSON line
// when it ends: what was sent and what was received, as facts
// ({"scenario": NAME, ...}); the Go test asserts on them. A scenario that
// throws prints {"scenario": NAME, "error": "..."} and the script exits 1.
// With "tls" the SDK verifies the proxy's certificate against the roots in
// GRPC_DEFAULT_SSL_ROOTS_FILE_PATH (the test's CA). The SDK logs to
// $HOME/logs/rocketmq_client_nodejs.log.
'use strict';

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const util = require('node:util');

const {
  Producer, SimpleConsumer, PushConsumer, FilterExpression, ConsumeResult,
} = require('rocketmq-client-nodejs');
// The package does not re-export the protocol's enum its TransactionChecker returns.
const { TransactionResolution } = require('rocketmq-client-nodejs/proto/apache/rocketmq/v2/definition_pb');

const CFG = JSON.parse(process.env.SDK_TEST_CONFIG);
const TLS = Boolean(CFG.tls);
const COUNT = CFG.count || 4;
const TIMEOUT_MS = (CFG.timeout_s || 40) * 1000;
const DISPATCH_PAUSE_MS = 500; // see scenarioPriority
const ID = 'sdk-id'; // the user property naming each message
// Apache's proxy raises a long poll below 5 s to 5 s and refuses a receive
// whose deadline (request timeout + await duration) leaves less than that.
const AWAIT_MS = 3000;
const INVISIBLE_MS = 20000;

function emit(obj) {
  process.stdout.write(JSON.stringify(obj) + '\n');
}

// Every client logs synchronously to one file (the SDK's default logger
// writes asynchronously, losing the last lines at exit).
const LOG = path.join(os.homedir(), 'logs', 'rocketmq_client_nodejs.log');
fs.mkdirSync(path.dirname(LOG), { recursive: true });
const line = level => (...a) => fs.appendFileSync(LOG, `${new Date().toISOString()} ${level} ${util.format(...a)}\n`);
const logger = { debug: line('DEBUG'), info: line('INFO'), warn: line('WARN'), error: line('ERROR') };

function base(extra) {
  return Object.assign({ endpoints: CFG.endpoint, namespace: '', sslEnabled: TLS, requestTimeout: 3000, logger }, extra);
}

const sleep = ms => new Promise(resolve => setTimeout(resolve, ms));

function options(topic, id, body, o = {}) {
  const props = new Map([[ ID, id ]]);
  for (const [ k, v ] of Object.entries(o.props || {})) props.set(k, v);
  return {
    topic, body, tag: o.tag, keys: o.keys, properties: props,
    messageGroup: o.group, deliveryTimestamp: o.deliverAt, priority: o.priority,
  };
}

function sentView(id, body, o = {}, receipt) {
  return {
    id, body_b64: body.toString('base64'), tag: o.tag || '', keys: [ ...(o.keys || []) ].sort(),
    props: Object.assign({ [ID]: id }, o.props || {}), message_id: receipt ? receipt.messageId : '',
  };
}

function receivedView(m) {
  return {
    id: m.properties.get(ID) || '', body_b64: m.body.toString('base64'), tag: m.tag || '',
    keys: [ ...m.keys ].sort(), props: Object.fromEntries(m.properties), message_id: m.messageId,
    group: m.messageGroup || '', attempt: m.deliveryAttempt || 0, at_ms: Date.now(),
    priority: m.priority === undefined || m.priority === null ? -1 : m.priority,
  };
}

async function simpleConsumer(sc, filter = '*') {
  const c = new SimpleConsumer(base({
    consumerGroup: sc.group, subscriptions: new Map([[ sc.topic, new FilterExpression(filter) ]]),
    awaitDuration: AWAIT_MS,
  }));
  await c.startup();
  return c;
}

// Receives (and acks) until done(received) or the deadline.
async function receiveUntil(c, done, deadline, batch = 16) {
  const got = [];
  while (!done(got) && Date.now() < deadline) {
    for (const m of await c.receive(batch, INVISIBLE_MS)) {
      got.push(receivedView(m));
      await c.ack(m);
    }
  }
  return got;
}

const ids = views => views.map(v => v.id);
const hasAll = (views, want) => want.every(id => ids(views).includes(id));

// N messages with tag, two keys and user properties (and a non-UTF-8 body); a
// SimpleConsumer filtering on the tag receives and acks them. One message with
// another tag must not arrive.
async function scenarioNormal(p, sc) {
  const c = await simpleConsumer(sc, 'TagA');
  try {
    const sent = [];
    for (let i = 0; i < COUNT; i++) {
      const id = `n-${i}`;
      const body = Buffer.concat([ Buffer.from(`body-${i}-`), Buffer.from([ 0, 1, 0xfe, 0xff ]), Buffer.from('-é€') ]);
      const o = { tag: 'TagA', keys: [ `key-${i}`, `key2-${i}` ], props: { color: `blue-${i}`, unicode: 'vâlue €' } };
      const r = await p.send(options(sc.topic, id, body, o));
      sent.push(sentView(id, body, o, r));
    }
    await p.send(options(sc.topic, 'n-tagb', Buffer.from('other tag'), { tag: 'TagB' }));
    const got = await receiveUntil(c, g => hasAll(g, ids(sent)), Date.now() + TIMEOUT_MS);
    return { sent, received: got };
  } finally {
    await c.shutdown();
  }
}

// One message group to a FIFO topic, an orderly consumer group: the first
// message received and left unacked blocks the group (a second receive gets
// none of it), then all arrive in send order.
async function scenarioFifo(p, sc) {
  const c = await simpleConsumer(sc);
  try {
    const sent = [];
    for (let i = 0; i < COUNT; i++) {
      const id = `f-${i}`;
      const body = Buffer.from(`fifo-${i}`);
      const r = await p.send(options(sc.topic, id, body, { group: 'fifo-group-1' }));
      sent.push(sentView(id, body, {}, r));
    }
    const deadline = Date.now() + TIMEOUT_MS;
    let first = [];
    while (first.length === 0 && Date.now() < deadline) {
      first = await c.receive(1, INVISIBLE_MS);
    }
    const probe = first.length ? (await c.receive(COUNT, INVISIBLE_MS)).map(receivedView) : [];
    const got = first.map(receivedView);
    for (const m of first) await c.ack(m);
    got.push(...await receiveUntil(c, g => g.length >= COUNT - first.length, deadline, 2));
    return { sent, first: first.map(receivedView), probe, received: got };
  } finally {
    await c.shutdown();
  }
}

// A message due ~3 s after its send (a whole second, as the Python SDK's).
// Two messages of each priority 1..COUNT, lowest first, to a PRIORITY
// topic; received one at a time, the highest priority comes first. Not 0:
// the SDK types a message of priority 0 NORMAL (PublishingMessage tests
// `!this.priority`), and then refuses it for the topic's PRIORITY type.
async function scenarioPriority(p, sc) {
  const c = await simpleConsumer(sc);
  try {
    const sent = [];
    for (let prio = 1; prio <= COUNT; prio++) {
      for (let j = 0; j < 2; j++) {
        const id = `p${prio}-${j}`;
        const body = Buffer.from(id);
        const r = await p.send(options(sc.topic, id, body, { priority: prio }));
        sent.push(Object.assign(sentView(id, body, {}, r), { priority: prio }));
      }
    }
    // A send is answered once stored; its consume queue entry follows
    // (asynchronous dispatch, as in Apache). A receive at once can find
    // only the messages dispatched so far and hand out a low priority.
    await new Promise(r => setTimeout(r, DISPATCH_PAUSE_MS));
    const got = await receiveUntil(c, g => g.length >= sent.length, Date.now() + TIMEOUT_MS, 1);
    return { sent, received: got };
  } finally {
    await c.shutdown();
  }
}

async function scenarioDelay(p, sc) {
  const c = await simpleConsumer(sc);
  try {
    const deliverAt = (Math.floor(Date.now() / 1000) + 4) * 1000;
    const body = Buffer.from('delay-0');
    const sentAt = Date.now();
    const r = await p.send(options(sc.topic, 'd-0', body, { deliverAt: new Date(deliverAt) }));
    const got = await receiveUntil(c, g => g.length >= 1, Date.now() + TIMEOUT_MS);
    return { sent: [ sentView('d-0', body, {}, r) ], sent_at_ms: sentAt, deliver_at_ms: deliverAt, received: got };
  } finally {
    await c.shutdown();
  }
}

const checked = [];
const checker = {
  async check(m) {
    const id = m.properties.get(ID) || '';
    checked.push(id);
    return id === 't-orphan' ? TransactionResolution.COMMIT : TransactionResolution.ROLLBACK;
  },
};

// t-rollback rolled back, t-commit committed, t-orphan left open for the
// broker's check (the checker commits it): t-commit and t-orphan arrive,
// t-rollback never (one more long poll after the others).
async function scenarioTransaction(p, sc) {
  const c = await simpleConsumer(sc);
  try {
    for (const [ id, end ] of [[ 't-rollback', 'rollback' ], [ 't-commit', 'commit' ], [ 't-orphan', null ]]) {
      const tx = p.beginTransaction();
      await p.send(options(sc.topic, id, Buffer.from(id)), tx);
      if (end === 'commit') await tx.commit();
      if (end === 'rollback') await tx.rollback();
    }
    const deadline = Date.now() + TIMEOUT_MS;
    const got = await receiveUntil(c, g => hasAll(g, [ 't-commit', 't-orphan' ]), deadline);
    if (Date.now() < deadline) got.push(...await receiveUntil(c, g => g.length > 0, Date.now() + 100));
    return { received: got, checked: [ ...checked ] };
  } finally {
    await c.shutdown();
  }
}

// A PushConsumer receives N messages; its listener succeeds (the SDK acks).
async function scenarioPush(p, sc) {
  const got = [];
  const c = new PushConsumer(base({
    consumerGroup: sc.group, subscriptions: new Map([[ sc.topic, FilterExpression.SUB_ALL ]]),
    messageListener: { consume(m) { got.push(receivedView(m)); return ConsumeResult.SUCCESS; } },
  }));
  await c.startup();
  try {
    const sent = [];
    for (let i = 0; i < COUNT; i++) {
      const id = `p-${i}`;
      const body = Buffer.from(`push-${i}`);
      const o = { tag: 'TagP' };
      const r = await p.send(options(sc.topic, id, body, o));
      sent.push(sentView(id, body, o, r));
    }
    const deadline = Date.now() + TIMEOUT_MS;
    while (!hasAll(got, ids(sent)) && Date.now() < deadline) await sleep(50);
    await sleep(500); // a second delivery of an acked message would land within this
    return { sent, received: [ ...got ] };
  } finally {
    // Not awaited: the SDK's shutdown waits for its parked receive, up to
    // the long-polling time the proxy's settings name (20 s, Apache's).
    c.shutdown().catch(err => logger.error('push consumer shutdown: %s', err));
  }
}

async function main() {
  const scs = CFG.scenarios;
  const pending = new Set(Object.keys(scs));
  setTimeout(() => {
    process.stderr.write(`still running after ${TIMEOUT_MS / 1000 + 15} s: ${[ ...pending ]}\n`);
    process.exit(1);
  }, TIMEOUT_MS + 15000).unref();
  // One topic given at start, the others' routes fetched at their first
  // send: the SDK's startup waits for the first settings answer from a
  // point it reaches only after every given topic's route query, and hangs
  // for good when that answer came in meanwhile (with several topics, the
  // proxy answering settings in about a millisecond). The transaction
  // topic, if any: the proxy relays the broker's checks to the producers
  // whose settings name the topic, and the SDK sends its topics again only
  // every 5 minutes.
  const first = (scs.transaction || Object.values(scs)[0]).topic;
  const p = new Producer(base({ topics: [ first ], checker }));
  await p.startup();
  const runs = {
    normal: scenarioNormal, fifo: scenarioFifo, delay: scenarioDelay,
    transaction: scenarioTransaction, push: scenarioPush, priority: scenarioPriority,
  };
  let failed = 0;
  await Promise.all(Object.entries(scs).map(async ([ name, sc ]) => {
    const start = Date.now();
    try {
      const res = await runs[name](p, sc);
      emit(Object.assign({ scenario: name, seconds: (Date.now() - start) / 1000 }, res));
      pending.delete(name);
    } catch (err) {
      failed++;
      pending.delete(name);
      emit({ scenario: name, error: `${err && err.stack || err}` });
    }
  }));
  try {
    await p.shutdown();
  } catch (err) {
    emit({ scenario: 'shutdown', error: `producer shutdown: ${err}` });
  }
  process.exit(failed ? 1 : 0);
}

main().catch(err => {
  process.stderr.write(`${err && err.stack || err}\n`);
  process.exit(1);
});
