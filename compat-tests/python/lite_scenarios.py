#!/usr/bin/env python3
"""The official Python SDK's lite consumers (rocketmq-python-client 5.1.2,
LitePushConsumer and LiteSimpleConsumer) through a gRPC proxy: the scenarios
of lite_test.go.

Driven by compat-tests/lite_test.go: the configuration comes as JSON in the
LITE_TEST_CONFIG environment variable

    {"endpoint": "127.0.0.1:PORT", "tls": false, "timeout_s": 60,
     "topic": "P", "normal_topic": "N",
     "scenarios": {"push": {"group": "G"}, "retry": {...}, "dlq": {...},
                   "simple": {...}, "simple_dlq": {...}, "exclusive": {...}, "unacked": {...},
                   "hostile": {"group": "G", "regular_group": "R"}}}

The SDK scenarios run concurrently, each on lite topics of its own under the
one LITE topic; "hostile" (raw gRPC on the SDK's generated stubs, with a
SyncLiteSubscription flood at the end) runs after them, alone, so that the
flood's rate limit cannot refuse another scenario's subscription. Each
prints one JSON line of facts when it ends; the Go test asserts on them.
"""

import json
import os
import sys
import threading
import time
import traceback
import uuid

import grpc

from rocketmq import (ClientConfiguration, ConsumeResult, Credentials,
                      LitePushConsumer, LiteSimpleConsumer, Message,
                      MessageListener, Producer)
from rocketmq.grpc_protocol import (ClientType, LiteSubscriptionAction,
                                    MessageType, MessagingServiceStub,
                                    ReceiveMessageRequest, Resource,
                                    SendMessageRequest,
                                    SyncLiteSubscriptionRequest,
                                    TelemetryCommand)
from rocketmq.grpc_protocol import definition_pb2

CFG = json.loads(os.environ["LITE_TEST_CONFIG"])
TLS = bool(CFG.get("tls"))
TIMEOUT = float(CFG.get("timeout_s", 60))
TOPIC = CFG["topic"]
ID = "sdk-id"
RUN = uuid.uuid4().hex[:8]  # lite topic names of this run

_out = threading.Lock()


def emit(obj):
    with _out:
        sys.stdout.write(json.dumps(obj) + "\n")
        sys.stdout.flush()


def now_ms():
    return int(time.time() * 1000)


def config():
    return ClientConfiguration(CFG["endpoint"], Credentials(), request_timeout=5)


def lite(name):
    return name + "-" + RUN


def send(p, lite_topic, mid):
    m = Message()
    m.topic = TOPIC
    m.body = mid.encode()
    m.tag = "TagL"
    m.lite_topic = lite_topic
    m.add_property(ID, mid)
    for attempt in range(10):  # a busy test machine's broker flow control
        try:
            r = p.send(m)
            break
        except Exception:
            if attempt == 9:
                raise
            time.sleep(0.5)
    return {"id": mid, "lite": lite_topic, "message_id": r.message_id}


def view(m):
    return {"id": m.properties.get(ID, ""), "lite": m.lite_topic or "", "attempt": m.delivery_attempt or 0,
            "at_ms": now_ms(), "message_id": m.message_id}


def subscribe(c, lite_topic, deadline):
    """subscribe_lite, retried until the consumer has the server's settings
    (quota 0 until then)."""
    while True:
        try:
            c.subscribe_lite(lite_topic)
            return
        except Exception:
            if time.time() > deadline:
                raise
            time.sleep(0.2)


class Recorder(MessageListener):
    def __init__(self, fail=None):
        self.lock = threading.Lock()
        self.got = []
        self.fail = fail or (lambda v: False)

    def consume(self, message):
        v = view(message)
        with self.lock:
            self.got.append(v)
        return ConsumeResult.FAILURE if self.fail(v) else ConsumeResult.SUCCESS

    def snapshot(self):
        with self.lock:
            return list(self.got)


def wait_for(cond, deadline, step=0.1):
    while time.time() < deadline:
        if cond():
            return True
        time.sleep(step)
    return cond()


def push_consumer(group, listener):
    c = LitePushConsumer(config(), group, TOPIC, listener, consumption_thread_count=4, tls_enable=TLS)
    c.startup()
    return c


def scenario_push(p, sc):
    """Three lite topics get four messages each, interleaved; the consumer
    subscribed two of them receives exactly theirs. Then it unsubscribes
    one: of two more messages each, only the still-subscribed one's come."""
    deadline = time.time() + TIMEOUT
    rec = Recorder()
    c = push_consumer(sc["group"], rec)
    l1, l2, l3 = lite("p1"), lite("p2"), lite("p3")
    try:
        subscribe(c, l1, deadline)
        subscribe(c, l2, deadline)
        quota, max_size = c._LitePushConsumer__subscription_manager.lite_subscription_quota, \
            c._LitePushConsumer__subscription_manager.max_lite_topic_size
        sent = []
        for i in range(4):
            for lt in (l1, l2, l3):
                sent.append(send(p, lt, "%s-%d" % (lt, i)))
        want = {s["id"] for s in sent if s["lite"] in (l1, l2)}
        wait_for(lambda: want <= {v["id"] for v in rec.snapshot()}, deadline)
        time.sleep(3)  # what else would come
        first = rec.snapshot()
        c.unsubscribe_lite(l2)
        later = []
        for i in range(4, 6):
            for lt in (l1, l2):
                later.append(send(p, lt, "%s-%d" % (lt, i)))
        want2 = {s["id"] for s in later if s["lite"] == l1}
        wait_for(lambda: want2 <= {v["id"] for v in rec.snapshot()}, deadline)
        time.sleep(3)
        return {"sent": sent, "received": first, "sent_after": later, "received_after": rec.snapshot()[len(first):],
                "lites": [l1, l2, l3], "quota": _int(quota), "max_size": _int(max_size)}
    finally:
        c.shutdown()


def _int(v):
    try:
        return int(v.get())
    except AttributeError:
        return int(v)


def scenario_retry(p, sc):
    """The listener fails the first message's first delivery: it comes back
    (delivery attempt 2), the others once."""
    deadline = time.time() + TIMEOUT
    lt = lite("r1")
    fail_once = {"done": False}

    def fail(v):
        if v["id"] == lt + "-0" and not fail_once["done"]:
            fail_once["done"] = True
            return True
        return False
    rec = Recorder(fail)
    c = push_consumer(sc["group"], rec)
    try:
        subscribe(c, lt, deadline)
        sent = [send(p, lt, "%s-%d" % (lt, i)) for i in range(3)]
        wait_for(lambda: len(rec.snapshot()) >= 4, deadline)
        time.sleep(2)
        return {"sent": sent, "received": rec.snapshot(), "lites": [lt]}
    finally:
        c.shutdown()


def scenario_dlq(p, sc):
    """An orderly lite group (retryMaxTimes 1: two attempts): the listener
    always fails the lite topic's first message; the SDK's FIFO consumption
    retries it locally, then forwards it to the group's DLQ
    (ForwardMessageToDeadLetterQueue with its lite topic), which acks it;
    the lite topic's next message then comes, once."""
    deadline = time.time() + TIMEOUT
    lt = lite("d1")
    rec = Recorder(lambda v: v["id"] == lt + "-0")
    c = push_consumer(sc["group"], rec)
    try:
        subscribe(c, lt, deadline)
        sent = [send(p, lt, lt + "-0"), send(p, lt, lt + "-1")]
        wait_for(lambda: lt + "-1" in {v["id"] for v in rec.snapshot()}, deadline)
        time.sleep(3)
        return {"sent": sent, "received": rec.snapshot(), "lites": [lt]}
    finally:
        c.shutdown()


def scenario_simple(p, sc):
    """LiteSimpleConsumer (a rocketgo extension: Apache 5.5.0 refuses the
    client type): subscribed to one lite topic, it receives that one's
    messages in order, not the other's."""
    deadline = time.time() + TIMEOUT
    s1, s2 = lite("s1"), lite("s2")
    c = LiteSimpleConsumer(TOPIC, config(), sc["group"], await_duration=3, tls_enable=TLS)
    c.startup()
    try:
        subscribe(c, s1, deadline)
        sent = [send(p, s1, s1 + "-0"), send(p, s2, s2 + "-0"), send(p, s1, s1 + "-1")]
        got = []
        while time.time() < deadline and len(got) < 2:
            for m in c.receive(8, 15):
                got.append(view(m))
                c.ack(m)
        end = time.time() + 3
        while time.time() < end:
            for m in c.receive(8, 15):
                got.append(view(m))
                c.ack(m)
        return {"sent": sent, "received": got, "lites": [s1, s2]}
    finally:
        c.shutdown()


def scenario_simple_dlq(p, sc):
    """A LiteSimpleConsumer that never acks, in a group of retryMaxTimes 1
    (two attempts): the message comes twice, once per invisible time; the
    proxy then forwards it to the group's DLQ instead of a third delivery.
    The SDK's subscribe_lite sends the name's characters (it extends the
    request's set with a string), so the subscription holds from the SDK's
    first full sync, 30 s after start: this scenario has 25 s more."""
    deadline = time.time() + TIMEOUT + 25
    lt = lite("sd1")
    c = LiteSimpleConsumer(TOPIC, config(), sc["group"], await_duration=3, tls_enable=TLS)
    c.startup()
    try:
        subscribe(c, lt, deadline)
        sent = [send(p, lt, lt + "-0")]
        got = []
        quiet_until = None
        while time.time() < deadline:
            for m in c.receive(8, 10):
                got.append(view(m))
                if len(got) == 2:
                    # the third pop comes after this one's invisible time
                    quiet_until = time.time() + 13
            if quiet_until and time.time() > quiet_until:
                break
        return {"sent": sent, "received": got, "lites": [lt]}
    finally:
        c.shutdown()


def stub():
    target = CFG["endpoint"]
    if TLS:
        ch = grpc.secure_channel(target, grpc.ssl_channel_credentials())
    else:
        ch = grpc.insecure_channel(target)
    return MessagingServiceStub(ch)


META = (("x-mq-client-id", "lite-hostile-" + RUN), ("x-mq-language", "PYTHON"), ("x-mq-protocol", "v2"))


def sync(s, action, group, lites, topic=TOPIC, meta=META):
    req = SyncLiteSubscriptionRequest()
    req.action = action
    req.topic.name = topic
    req.group.name = group
    req.lite_topic_set.extend(lites)
    r = s.SyncLiteSubscription(req, metadata=meta, timeout=10)
    return [definition_pb2.Code.Name(r.status.code), r.status.message]


def scenario_hostile(_p, sc):
    """Raw calls a hostile client makes: bad lite topic names, unknown and
    regular groups, the wrong topic, a set over the quota, a lite message
    with a bad name or to a NORMAL topic; then a SyncLiteSubscription flood."""
    s = stub()
    g, reg = sc["group"], sc["regular_group"]
    out = {}
    out["bad_chars"] = sync(s, LiteSubscriptionAction.PARTIAL_ADD, g, ["bad name!"])
    out["too_long"] = sync(s, LiteSubscriptionAction.PARTIAL_ADD, g, ["x" * 65])
    out["blank"] = sync(s, LiteSubscriptionAction.PARTIAL_ADD, g, ["  "])
    out["unknown_group"] = sync(s, LiteSubscriptionAction.PARTIAL_ADD, "NoSuchGroup" + RUN, ["a"])
    out["unknown_group_name"] = "NoSuchGroup" + RUN
    out["regular_group"] = sync(s, LiteSubscriptionAction.PARTIAL_ADD, reg, ["a"])
    out["wrong_topic"] = sync(s, LiteSubscriptionAction.PARTIAL_ADD, g, ["a"], topic=CFG["normal_topic"])
    out["over_quota"] = sync(s, LiteSubscriptionAction.PARTIAL_REMOVE, g, ["q%d" % i for i in range(2301)])
    out["remove_ok"] = sync(s, LiteSubscriptionAction.PARTIAL_REMOVE, g, ["q%d" % i for i in range(2300)])

    def settings_as(client_type, group):
        """A raw telemetry stream's first settings: the status its end
        carries when the proxy refuses them, "OK" when answered."""
        cmd = TelemetryCommand()
        st = cmd.settings
        st.client_type = client_type
        host, port = CFG["endpoint"].rsplit(":", 1)
        a = st.access_point.addresses.add()
        a.host, a.port = host, int(port)
        st.request_timeout.seconds = 5
        st.subscription.group.name = group
        e = st.subscription.subscriptions.add()
        e.topic.name = TOPIC
        e.expression.type = definition_pb2.FilterType.TAG
        e.expression.expression = "*"
        meta = (("x-mq-client-id", "lite-mode-%s-%s" % (client_type, RUN)), ("x-mq-language", "PYTHON"))
        # The request side stays open until the answer: a proxy that ends
        # the stream when the client half-closes would otherwise race the
        # check it runs on the settings (Apache's does, under load).
        answered = threading.Event()

        def requests():
            yield cmd
            answered.wait(10)
        try:
            for r in s.Telemetry(requests(), metadata=meta, timeout=10):
                return [definition_pb2.Code.Name(r.status.code), r.status.message]
            return ["EOF", ""]
        except grpc.RpcError as err:
            return [err.code().name, err.details()]
        finally:
            answered.set()
    out["regular_as_lite"] = settings_as(ClientType.LITE_PUSH_CONSUMER, reg)
    out["push_on_lite_group"] = settings_as(ClientType.PUSH_CONSUMER, g)

    def send_raw(topic, lt):
        req = SendMessageRequest()
        m = req.messages.add()
        m.topic.name = topic
        m.body = b"x"
        m.system_properties.message_id = uuid.uuid4().hex
        m.system_properties.message_type = MessageType.LITE
        m.system_properties.body_encoding = definition_pb2.Encoding.IDENTITY
        m.system_properties.lite_topic = lt
        r = s.SendMessage(req, metadata=META, timeout=10)
        return [definition_pb2.Code.Name(r.status.code), r.status.message]
    out["send_bad_lite"] = send_raw(TOPIC, "bad/name")
    out["send_lite_to_normal"] = send_raw(CFG["normal_topic"], "ok-name")
    codes = {}
    msgs = set()
    lock = threading.Lock()

    def flood(n):
        for i in range(n):
            code, msg = sync(s, LiteSubscriptionAction.PARTIAL_ADD, g, ["f%d" % (i % 10)])
            with lock:
                codes[code] = codes.get(code, 0) + 1
                if code == "TOO_MANY_REQUESTS":
                    msgs.add(msg.split(", clientId=")[0])
    ts = [threading.Thread(target=flood, args=(int(sc.get("flood", 400)) // 4,)) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    out["flood"] = [codes, sorted(msgs)]
    return {"hostile": out}


def lite_stream(s, group, meta, on_response=None):
    """Opens a raw telemetry stream as a LITE_PUSH_CONSUMER of group (the
    channel the proxy ties a lite client's receives to) and waits up to
    10 s for the answer to its settings. Returns the queue of commands to
    send on it (None ends it) and the responses so far, appended by a
    reader thread that also calls on_response with each."""
    import queue
    q = queue.Queue()
    cmd = TelemetryCommand()
    st = cmd.settings
    st.client_type = ClientType.LITE_PUSH_CONSUMER
    host, port = CFG["endpoint"].rsplit(":", 1)
    a = st.access_point.addresses.add()
    a.host, a.port = host, int(port)
    st.request_timeout.seconds = 5
    st.subscription.group.name = group
    e = st.subscription.subscriptions.add()
    e.topic.name = TOPIC
    e.expression.type = definition_pb2.FilterType.TAG
    e.expression.expression = "*"
    q.put(cmd)

    def reqs():
        while True:
            c = q.get()
            if c is None:
                return
            yield c
    responses = s.Telemetry(reqs(), metadata=meta)
    got = []

    def read():
        try:
            for r in responses:
                got.append(r)
                if on_response:
                    on_response(r)
        except Exception:
            pass
    threading.Thread(target=read, daemon=True).start()
    deadline = time.time() + 10
    while not got and time.time() < deadline:
        time.sleep(0.05)
    return q, got


def scenario_exclusive(_p, sc):
    """An Exclusive lite group (lite.sub.model): client A, with a raw
    telemetry stream, subscribes a lite topic; client B subscribes it too;
    the broker evicts A and says so (NOTIFY_UNSUBSCRIBE_LITE), which the
    proxy relays on A's stream as NotifyUnsubscribeLiteCommand."""
    s = stub()
    g, lt = sc["group"], lite("x1")
    meta_a = (("x-mq-client-id", "lite-excl-a-" + RUN), ("x-mq-language", "PYTHON"), ("x-mq-protocol", "v2"))
    meta_b = (("x-mq-client-id", "lite-excl-b-" + RUN), ("x-mq-language", "PYTHON"), ("x-mq-protocol", "v2"))
    done = threading.Event()
    q, got = lite_stream(s, g, meta_a, lambda r: r.HasField("notify_unsubscribe_lite_command") and done.set())
    settings_ok = bool(got) and got[0].status.code == definition_pb2.Code.OK

    add_a = sync(s, LiteSubscriptionAction.PARTIAL_ADD, g, [lt], meta=meta_a)[0]
    add_b = sync(s, LiteSubscriptionAction.PARTIAL_ADD, g, [lt], meta=meta_b)[0]
    done.wait(10)
    q.put(None)
    notified = [r.notify_unsubscribe_lite_command.lite_topic for r in got if r.HasField("notify_unsubscribe_lite_command")]
    return {"hostile": {"exclusive": [settings_ok, add_a, add_b, notified, lt]}}


def scenario_unacked(p, sc):
    """A lite push consumer (a raw telemetry stream) that receives with
    auto-renew and acks nothing: once it holds more than the proxy's
    maxLiteRenewNumPerChannel (100) messages, its next receive is refused
    with FORBIDDEN before any broker is asked. A lite topic's messages are
    handed out in order, one batch at a time, so the messages are spread
    over four lite topics of 32 (a receive's largest batch)."""
    s = stub()
    g, lites = sc["group"], [lite("u%d" % k) for k in range(4)]
    client = "lite-unacked-" + RUN
    meta = (("x-mq-client-id", client), ("x-mq-language", "PYTHON"), ("x-mq-protocol", "v2"))
    q, _ = lite_stream(s, g, meta)
    try:
        code, text = sync(s, LiteSubscriptionAction.PARTIAL_ADD, g, lites, meta=meta)
        if code != "OK":
            raise RuntimeError("subscribe: %s %s" % (code, text))
        for lt in lites:
            for i in range(32):
                send(p, lt, "%s-%d" % (lt, i))
        count = 32 * len(lites)
        held, answers = 0, []
        deadline = time.time() + TIMEOUT
        while time.time() < deadline:
            rq = ReceiveMessageRequest()
            rq.group.name = g
            rq.message_queue.topic.name = TOPIC
            rq.filter_expression.type = definition_pb2.FilterType.TAG
            rq.filter_expression.expression = "*"
            rq.batch_size = 32
            rq.auto_renew = True
            rq.long_polling_timeout.seconds = 5
            code, text, n = None, "", 0
            for resp in s.ReceiveMessage(rq, metadata=meta, timeout=20):
                if resp.HasField("status") and code is None:
                    code, text = definition_pb2.Code.Name(resp.status.code), resp.status.message
                elif resp.HasField("message"):
                    n += 1
            held += n
            answers.append([code, n])
            if code not in ("OK", "MESSAGE_NOT_FOUND"):
                return {"hostile": {"unacked": [held, code, text, client, answers]}}
            if code == "MESSAGE_NOT_FOUND" and held < count:
                time.sleep(0.2)
        return {"hostile": {"unacked": [held, "TIMEOUT", "", client, answers]}}
    finally:
        q.put(None)


SCENARIOS = {"exclusive": scenario_exclusive, "unacked": scenario_unacked, "push": scenario_push, "retry": scenario_retry, "dlq": scenario_dlq, "simple": scenario_simple,
             "simple_dlq": scenario_simple_dlq}


def run(name, fn, p, sc):
    start = time.time()
    try:
        res = fn(p, sc)
        res.update({"scenario": name, "seconds": round(time.time() - start, 2)})
        emit(res)
    except Exception as e:
        emit({"scenario": name, "error": "%s: %s\n%s" % (type(e).__name__, e, traceback.format_exc())})


def main():
    p = Producer(config(), (TOPIC,), tls_enable=TLS)
    p.startup()
    try:
        threads = []
        for name, sc in CFG["scenarios"].items():
            if name in SCENARIOS:
                t = threading.Thread(target=run, args=(name, SCENARIOS[name], p, sc), daemon=True)
                t.start()
                threads.append(t)
        for t in threads:
            t.join(TIMEOUT + 30)
        if "hostile" in CFG["scenarios"]:
            run("hostile", scenario_hostile, p, CFG["scenarios"]["hostile"])
    finally:
        p.shutdown()
    sys.stdout.flush()
    os._exit(0)  # the SDK's threads need not be waited for


if __name__ == "__main__":
    main()
