#!/usr/bin/env node
'use strict';

// The official Node.js SDK's LitePushConsumer (rocketmq-client-nodejs,
// pinned in package.json) through a gRPC proxy: the Node.js scenarios of
// lite_test.go. Configuration as JSON in LITE_TEST_CONFIG:
//
//   {"endpoint": "127.0.0.1:PORT", "tls": false, "timeout_s": 60, "topic": "P",
//    "scenarios": {"offset": {"group": "G"}, "exclusive": {"group": "X"}}}
//
// Each scenario prints one JSON line of facts; the Go test asserts on them.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const util = require('node:util');
const crypto = require('node:crypto');

const {
  Producer, LitePushConsumerBuilder, OffsetOption, ConsumeResult,
} = require('rocketmq-client-nodejs');

const CFG = JSON.parse(process.env.LITE_TEST_CONFIG);
const TLS = Boolean(CFG.tls);
const TIMEOUT_MS = (CFG.timeout_s || 60) * 1000;
const TOPIC = CFG.topic;
const ID = 'sdk-id';
const RUN = crypto.randomBytes(4).toString('hex');

const LOG = path.join(os.homedir(), 'logs', 'rocketmq_client_nodejs.log');
fs.mkdirSync(path.dirname(LOG), { recursive: true });
const line = level => (...a) => fs.appendFileSync(LOG, `${new Date().toISOString()} ${level} ${util.format(...a)}\n`);
const logger = { debug: line('DEBUG'), info: line('INFO'), warn: line('WARN'), error: line('ERROR') };

function emit(obj) {
  process.stdout.write(JSON.stringify(obj) + '\n');
}

function base(extra) {
  return Object.assign({ endpoints: CFG.endpoint, namespace: '', sslEnabled: TLS, requestTimeout: 5000, logger }, extra);
}

const sleep = ms => new Promise(resolve => setTimeout(resolve, ms));
const lite = name => `${name}-${RUN}`;

async function send(p, lt, id) {
  for (let attempt = 0; ; attempt++) { // a busy test machine's broker flow control
    try {
      const r = await p.send({ topic: TOPIC, body: Buffer.from(id), tag: 'TagL', liteTopic: lt, properties: new Map([[ ID, id ]]) });
      return { id, lite: lt, message_id: r.messageId };
    } catch (err) {
      if (attempt === 9) throw err;
      await sleep(500);
    }
  }
}

function view(m) {
  return { id: m.properties.get(ID) || '', lite: m.liteTopic || '', attempt: m.deliveryAttempt || 0, message_id: m.messageId };
}

async function consumer(group, got) {
  return new LitePushConsumerBuilder()
    .setClientConfiguration(base())
    .setConsumerGroup(group)
    .bindTopic(TOPIC)
    .setMessageListener({ consume(m) { got.push(view(m)); return ConsumeResult.SUCCESS; } })
    .build();
}

// subscribe retries until the consumer has the server's settings.
async function subscribe(c, lt, opt, deadline) {
  for (;;) {
    try {
      await (opt ? c.subscribeLite(lt, opt) : c.subscribeLite(lt));
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await sleep(200);
    }
  }
}

async function waitFor(cond, deadline) {
  while (!cond() && Date.now() < deadline) await sleep(100);
}

// offset: two messages wait in a lite topic before the consumer subscribes
// it with OffsetOption MIN (offset 0): it receives them and the one sent
// after; a lite topic it subscribed without an option gets its messages; a
// third, not subscribed, none.
async function scenarioOffset(p, sc) {
  const deadline = Date.now() + TIMEOUT_MS;
  const got = [];
  const n1 = lite('n1'); const n2 = lite('n2'); const n3 = lite('n3');
  const sent = [];
  sent.push(await send(p, n2, `${n2}-0`), await send(p, n2, `${n2}-1`));
  const c = await consumer(sc.group, got);
  try {
    await subscribe(c, n1, null, deadline);
    await subscribe(c, n2, OffsetOption.MIN_OFFSET, deadline);
    for (let i = 0; i < 3; i++) {
      sent.push(await send(p, n1, `${n1}-${i}`));
      sent.push(await send(p, n3, `${n3}-${i}`));
    }
    sent.push(await send(p, n2, `${n2}-2`));
    const want = sent.filter(s => s.lite !== n3).map(s => s.id);
    await waitFor(() => want.every(id => got.some(g => g.id === id)), deadline);
    await sleep(3000);
    return { sent, received: [ ...got ], lites: [ n1, n2, n3 ] };
  } finally {
    c.close().catch(err => logger.error('close: %s', err));
  }
}

// exclusive: in an Exclusive group, consumer B's subscription to a lite
// topic evicts consumer A: A's SDK gets NotifyUnsubscribeLiteCommand (the
// Go test reads it from the SDK's log: 1.0.8 logs it as unrecognized
// instead of dropping the lite topic from its set).
async function scenarioExclusive(p, sc) {
  const deadline = Date.now() + TIMEOUT_MS;
  const x = lite('x1');
  const a = await consumer(sc.group, []);
  const b = await consumer(sc.group, []);
  try {
    await subscribe(a, x, null, deadline);
    const before = [ ...a.getLiteTopicSet() ];
    await subscribe(b, x, null, deadline);
    await sleep(3000);
    return { lites: [ x ], before, after: [ ...a.getLiteTopicSet() ], other: [ ...b.getLiteTopicSet() ] };
  } finally {
    a.close().catch(err => logger.error('close: %s', err));
    b.close().catch(err => logger.error('close: %s', err));
  }
}

async function main() {
  setTimeout(() => {
    process.stderr.write(`still running after ${TIMEOUT_MS / 1000 + 20} s\n`);
    process.exit(1);
  }, TIMEOUT_MS + 20000).unref();
  const p = new Producer(base({ topics: [ TOPIC ] }));
  await p.startup();
  const runs = { offset: scenarioOffset, exclusive: scenarioExclusive };
  await Promise.all(Object.entries(CFG.scenarios).filter(([ name ]) => runs[name]).map(async ([ name, sc ]) => {
    const start = Date.now();
    try {
      emit(Object.assign({ scenario: name, seconds: (Date.now() - start) / 1000 }, await runs[name](p, sc)));
    } catch (err) {
      emit({ scenario: name, error: `${err && err.stack || err}` });
    }
  }));
  p.shutdown().catch(() => {});
  process.exit(0);
}

main();
