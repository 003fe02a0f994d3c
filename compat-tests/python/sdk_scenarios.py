#!/usr/bin/env python3
"""The official Python SDK (rocketmq-python-client, pinned in requirements.txt)
through a rocketgo gRPC proxy: the scenarios of sdk_harness_test.go.

Driven by compat-tests/sdk_python_test.go: the configuration comes as JSON in
the SDK_TEST_CONFIG environment variable

    {"endpoint": "127.0.0.1:PORT", "tls": false, "count": 4, "timeout_s": 40,
     "scenarios": {"normal": {"topic": "...", "group": "..."}, ...}}

and each scenario named there runs in a thread of its own. Each prints one
JSON line when it ends: what was sent and what was received, as facts
({"scenario": NAME, ...}); the Go test asserts on them. A scenario that
raises prints {"scenario": NAME, "error": "..."} and the script exits 1.
With "tls" the SDK verifies the proxy's certificate against the roots in
GRPC_DEFAULT_SSL_ROOTS_FILE_PATH (the test's CA). The SDK logs to
$HOME/logs/rocketmq_python/.
"""

import base64
import json
import os
import sys
import threading
import time
import traceback

from rocketmq import (ClientConfiguration, ConsumeResult, Credentials,
                      FilterExpression, Message, MessageListener, Producer,
                      PushConsumer, SimpleConsumer, TransactionChecker,
                      TransactionResolution)

CFG = json.loads(os.environ["SDK_TEST_CONFIG"])
TLS = bool(CFG.get("tls"))
COUNT = int(CFG.get("count", 4))
TIMEOUT = float(CFG.get("timeout_s", 40))
DISPATCH_PAUSE = 0.5  # seconds; see scenario_priority
ID = "sdk-id"  # the user property naming each message
# Apache's proxy raises a long poll below 5 s to 5 s and refuses a receive
# whose deadline (request timeout + await duration) leaves less than that.
AWAIT_S = 3
INVISIBLE_S = 20

_out = threading.Lock()


def emit(obj):
    with _out:
        sys.stdout.write(json.dumps(obj) + "\n")
        sys.stdout.flush()


def now_ms():
    return int(time.time() * 1000)


def config():
    return ClientConfiguration(CFG["endpoint"], Credentials(), request_timeout=3)


def message(topic, mid, body, tag=None, keys=(), props=None, group=None, deliver_s=None):
    m = Message()
    m.topic = topic
    m.body = body
    if tag:
        m.tag = tag
    for k in keys:
        m.keys = k  # the setter adds one key
    m.add_property(ID, mid)
    for k, v in (props or {}).items():
        m.add_property(k, v)
    if group:
        m.message_group = group
    if deliver_s:
        m.delivery_timestamp = deliver_s
    return m


def sent_view(mid, body, tag=None, keys=(), props=None, receipt=None):
    p = {ID: mid}
    p.update(props or {})
    return {"id": mid, "body_b64": base64.b64encode(body).decode(), "tag": tag or "",
            "keys": sorted(keys), "props": p,
            "message_id": receipt.message_id if receipt else ""}


def received_view(m):
    return {"id": m.properties.get(ID, ""), "body_b64": base64.b64encode(m.body).decode(),
            "tag": m.tag or "", "keys": sorted(m.keys), "props": dict(m.properties),
            "message_id": m.message_id, "group": m.message_group or "",
            "attempt": m.delivery_attempt or 0, "at_ms": now_ms(),
            "priority": -1 if m.priority is None else m.priority}


def simple_consumer(sc):
    c = SimpleConsumer(config(), sc["group"], {sc["topic"]: FilterExpression(sc.get("filter", "*"))},
                       await_duration=AWAIT_S, tls_enable=TLS)
    c.startup()
    return c


def receive_until(c, done, deadline, ack=True, batch=16):
    """Receives (and acks) until done(received) or the deadline."""
    got = []
    while not done(got) and time.time() < deadline:
        for m in c.receive(batch, INVISIBLE_S):
            got.append(received_view(m))
            if ack:
                c.ack(m)
    return got


def ids(views):
    return [v["id"] for v in views]


def scenario_normal(p, sc):
    """N messages with tag, two keys and user properties (and a non-UTF-8
    body); a SimpleConsumer filtering on the tag receives and acks them.
    One message with another tag must not arrive."""
    c = simple_consumer(dict(sc, filter="TagA"))
    try:
        sent = []
        for i in range(COUNT):
            mid = f"n-{i}"
            body = f"body-{i}-".encode() + bytes([0, 1, 0xfe, 0xff]) + "-é€".encode()
            keys = (f"key-{i}", f"key2-{i}")
            props = {"color": f"blue-{i}", "unicode": "vâlue €"}
            r = p.send(message(sc["topic"], mid, body, "TagA", keys, props))
            sent.append(sent_view(mid, body, "TagA", keys, props, r))
        p.send(message(sc["topic"], "n-tagb", b"other tag", "TagB"))
        want = set(ids(sent))
        got = receive_until(c, lambda g: want <= set(ids(g)), time.time() + TIMEOUT)
        return {"sent": sent, "received": got}
    finally:
        c.shutdown()


def scenario_fifo(p, sc):
    """One message group to a FIFO topic, an orderly consumer group: the
    first message received and left unacked blocks the group (a second
    receive gets none of it), then all arrive in send order."""
    c = simple_consumer(sc)
    try:
        sent = []
        for i in range(COUNT):
            mid = f"f-{i}"
            body = f"fifo-{i}".encode()
            r = p.send(message(sc["topic"], mid, body, group="fifo-group-1"))
            sent.append(sent_view(mid, body, receipt=r))
        deadline = time.time() + TIMEOUT
        first = []
        while not first and time.time() < deadline:
            first = c.receive(1, INVISIBLE_S)
        probe = [received_view(m) for m in c.receive(COUNT, INVISIBLE_S)] if first else []
        got = [received_view(m) for m in first]
        for m in first:
            c.ack(m)
        got += receive_until(c, lambda g: len(g) >= COUNT - len(first), deadline, batch=2)
        return {"sent": sent, "first": [received_view(m) for m in first], "probe": probe, "received": got}
    finally:
        c.shutdown()


def scenario_delay(p, sc):
    """A message due ~3 s after its send (the SDK's delivery_timestamp is in
    seconds: it fills the proto Timestamp's seconds with it)."""
    c = simple_consumer(sc)
    try:
        deliver_s = int(time.time()) + 4
        body = b"delay-0"
        sent_at = now_ms()
        r = p.send(message(sc["topic"], "d-0", body, deliver_s=deliver_s))
        got = receive_until(c, lambda g: len(g) >= 1, time.time() + TIMEOUT)
        return {"sent": [sent_view("d-0", body, receipt=r)], "sent_at_ms": sent_at,
                "deliver_at_ms": deliver_s * 1000, "received": got}
    finally:
        c.shutdown()


def scenario_priority(p, sc):
    """Two messages of each priority 0..COUNT-1, lowest first, to a PRIORITY
    topic; received one at a time, the highest priority comes first."""
    c = simple_consumer(sc)
    try:
        sent = []
        for prio in range(COUNT):
            for j in range(2):
                mid = f"p{prio}-{j}"
                m = message(sc["topic"], mid, mid.encode())
                m.priority = prio
                r = p.send(m)
                sent.append(dict(sent_view(mid, mid.encode(), receipt=r), priority=prio))
        # A send is answered once stored; its consume queue entry follows
        # (asynchronous dispatch, as in Apache). A receive at once can find
        # only the messages dispatched so far and hand out a low priority.
        time.sleep(DISPATCH_PAUSE)
        got = receive_until(c, lambda g: len(g) >= len(sent), time.time() + TIMEOUT, batch=1)
        return {"sent": sent, "received": got}
    finally:
        c.shutdown()


class Checker(TransactionChecker):
    def __init__(self):
        self.checked = []
        self.lock = threading.Lock()

    def check(self, message):
        mid = message.properties.get(ID, "")
        with self.lock:
            self.checked.append(mid)
        return TransactionResolution.COMMIT if mid == "t-orphan" else TransactionResolution.ROLLBACK


def scenario_transaction(p, sc, checker):
    """t-rollback rolled back, t-commit committed, t-orphan left open for the
    broker's check (the checker commits it): t-commit and t-orphan arrive,
    t-rollback never (one more long poll after the others)."""
    c = simple_consumer(sc)
    try:
        for mid, end in (("t-rollback", "rollback"), ("t-commit", "commit"), ("t-orphan", None)):
            tx = p.begin_transaction()
            p.send(message(sc["topic"], mid, mid.encode()), tx)
            if end == "commit":
                tx.commit()
            elif end == "rollback":
                tx.rollback()
        deadline = time.time() + TIMEOUT
        got = receive_until(c, lambda g: {"t-commit", "t-orphan"} <= set(ids(g)), deadline)
        if time.time() < deadline:
            got += receive_until(c, lambda g: len(g) > 0, time.time() + 0.1)  # one more receive
        with checker.lock:
            checked = list(checker.checked)
        return {"received": got, "checked": checked}
    finally:
        c.shutdown()


class Listener(MessageListener):
    def __init__(self):
        self.got = []
        self.lock = threading.Lock()

    def consume(self, message):
        with self.lock:
            self.got.append(received_view(message))
        return ConsumeResult.SUCCESS


def scenario_push(p, sc):
    """A PushConsumer receives N messages; its listener succeeds (the SDK
    acks)."""
    listener = Listener()
    c = PushConsumer(config(), sc["group"], listener, {sc["topic"]: FilterExpression()}, tls_enable=TLS)
    c.startup()
    try:
        sent = []
        for i in range(COUNT):
            mid = f"p-{i}"
            body = f"push-{i}".encode()
            r = p.send(message(sc["topic"], mid, body, "TagP"))
            sent.append(sent_view(mid, body, "TagP", receipt=r))
        want = set(ids(sent))
        deadline = time.time() + TIMEOUT
        while time.time() < deadline:
            with listener.lock:
                if want <= set(ids(listener.got)):
                    break
            time.sleep(0.05)
        time.sleep(0.5)  # a second delivery of an acked message would land within this
        with listener.lock:
            got = list(listener.got)
        return {"sent": sent, "received": got}
    finally:
        c.shutdown()


def watchdog(pending):
    time.sleep(TIMEOUT + 15)
    sys.stderr.write(f"still running after {TIMEOUT + 15} s: {sorted(pending)}\n")
    sys.stderr.flush()
    os._exit(1)


def main():
    scs = CFG["scenarios"]
    pending = set(scs)
    threading.Thread(target=watchdog, args=(pending,), daemon=True).start()
    checker = Checker()
    topics = [sc["topic"] for sc in scs.values()]
    p = Producer(config(), topics, checker, tls_enable=TLS)
    p.startup()
    runs = {
        "normal": lambda sc: scenario_normal(p, sc),
        "fifo": lambda sc: scenario_fifo(p, sc),
        "delay": lambda sc: scenario_delay(p, sc),
        "transaction": lambda sc: scenario_transaction(p, sc, checker),
        "push": lambda sc: scenario_push(p, sc),
        "priority": lambda sc: scenario_priority(p, sc),
    }
    failed = []

    def run(name, sc):
        start = time.time()
        try:
            res = runs[name](sc)
            res["scenario"] = name
            res["seconds"] = round(time.time() - start, 2)
            emit(res)
        except Exception as e:  # reported, and the exit code says so
            failed.append(name)
            emit({"scenario": name, "error": f"{type(e).__name__}: {e}\n{traceback.format_exc()}"})
        finally:
            pending.discard(name)

    threads = [threading.Thread(target=run, args=(name, sc), daemon=True) for name, sc in scs.items()]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    try:
        p.shutdown()
    except Exception as e:
        failed.append("shutdown")
        emit({"scenario": "shutdown", "error": f"producer shutdown: {e}"})
    sys.stdout.flush()
    if failed:
        sys.stderr.write(f"failed: {failed}\n")
        os._exit(1)
    os._exit(0)  # the SDK's scheduler threads are not daemons


if __name__ == "__main__":
    main()
