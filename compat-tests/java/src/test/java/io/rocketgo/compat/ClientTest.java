package io.rocketgo.compat;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.rocketmq.client.consumer.DefaultLitePullConsumer;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendCallback;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.TopicConfig;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.tools.admin.DefaultMQAdminExt;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The official Java client's producers and consumers against the servers under test. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ClientTest {
    static final Duration WAIT = Duration.ofSeconds(30);
    static final int N = 10;

    private DefaultMQProducer producer;
    private DefaultMQAdminExt admin;
    private final List<Runnable> cleanups = new ArrayList<>();

    @BeforeAll
    void start() throws Exception {
        producer = new DefaultMQProducer(Env.name("pg"));
        producer.setNamesrvAddr(Env.NAMESRV);
        producer.setInstanceName(Env.name("producer"));
        producer.setSendMsgTimeout(10_000);
        producer.start();
        admin = new DefaultMQAdminExt();
        admin.setNamesrvAddr(Env.NAMESRV);
        admin.setInstanceName(Env.name("admin"));
        admin.start();
    }

    @AfterAll
    void stop() {
        for (Runnable r : cleanups) {
            r.run();
        }
        producer.shutdown();
        admin.shutdown();
    }

    /** Creates topic with 4 queues on the broker and waits until the name server routes it. */
    private String topic(String what) throws Exception {
        String t = Env.name(what);
        TopicConfig tc = new TopicConfig(t, 4, 4, 6);
        admin.createAndUpdateTopicConfig(Env.BROKER_ADDR, tc);
        Env.waitFor(WAIT, "route of " + t, () -> {
            try {
                return !admin.examineTopicRouteInfo(t).getQueueDatas().isEmpty();
            } catch (Exception e) {
                return false;
            }
        });
        return t;
    }

    private DefaultMQPushConsumer push(String group, String topic, boolean broadcast, String instance,
                                       Map<String, MessageExt> got, AtomicInteger deliveries) throws Exception {
        return push(group, topic, broadcast, instance, got, deliveries, false);
    }

    private DefaultMQPushConsumer push(String group, String topic, boolean broadcast, String instance,
                                       Map<String, MessageExt> got, AtomicInteger deliveries, boolean vip) throws Exception {
        DefaultMQPushConsumer c = new DefaultMQPushConsumer(group);
        c.setNamesrvAddr(Env.NAMESRV);
        c.setInstanceName(instance);
        c.setVipChannelEnabled(vip);
        if (broadcast) {
            // MessageModel moved packages between 4.9 and 5.x: set it by name.
            @SuppressWarnings({"unchecked", "rawtypes"})
            Object bc = Enum.valueOf((Class) c.getMessageModel().getClass(), "BROADCASTING");
            c.getClass().getMethod("setMessageModel", c.getMessageModel().getClass()).invoke(c, bc);
        }
        c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        c.setPersistConsumerOffsetInterval(1000);
        // A rebalance bumps the subscription's subVersion and sends a heartbeat
        // only if it gets the client's heartbeat lock (tryLock); when that
        // loses to another heartbeat, pulls get SUBSCRIPTION_NOT_LATEST until
        // the next periodic heartbeat (30 s by default) — with Apache's broker
        // as with ours. Short periods keep the tests quick.
        c.setHeartbeatBrokerInterval(2000);
        c.subscribe(topic, "*");
        c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            for (MessageExt m : msgs) {
                got.put(new String(m.getBody(), StandardCharsets.UTF_8), m);
                if (deliveries != null) {
                    deliveries.incrementAndGet();
                }
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        c.start();
        cleanups.add(c::shutdown);
        return c;
    }

    private void expectAll(Map<String, MessageExt> got, String scenario, int from, int to) throws Exception {
        Env.waitFor(WAIT, scenario + " messages " + from + ".." + (to - 1) + " (have " + got.size() + ")", () -> {
            for (int i = from; i < to; i++) {
                if (!got.containsKey(Env.body(scenario, i))) {
                    return false;
                }
            }
            return true;
        });
        for (int i = from; i < to; i++) {
            Env.checkMessage(got.get(Env.body(scenario, i)), scenario);
        }
    }

    @Test
    void syncSend() throws Exception {
        String t = topic("sync");
        for (int i = 0; i < N; i++) {
            SendResult r = producer.send(Env.message(t, "sync", i));
            assertEquals(SendStatus.SEND_OK, r.getSendStatus());
            assertNotNull(r.getMsgId());
            assertNotNull(r.getOffsetMsgId());
            assertEquals(Env.BROKER_NAME, r.getMessageQueue().getBrokerName());
            assertTrue(r.getQueueOffset() >= 0);
        }
        Map<String, MessageExt> got = new ConcurrentHashMap<>();
        push(Env.name("cg-sync"), t, false, Env.name("c-sync"), got, null);
        expectAll(got, "sync", 0, N);
    }

    @Test
    void asyncSend() throws Exception {
        String t = topic("async");
        CountDownLatch done = new CountDownLatch(N);
        List<Throwable> errors = new ArrayList<>();
        for (int i = 0; i < N; i++) {
            producer.send(Env.message(t, "async", i), new SendCallback() {
                public void onSuccess(SendResult r) {
                    if (r.getSendStatus() != SendStatus.SEND_OK) {
                        synchronized (errors) {
                            errors.add(new AssertionError("status " + r.getSendStatus()));
                        }
                    }
                    done.countDown();
                }

                public void onException(Throwable e) {
                    synchronized (errors) {
                        errors.add(e);
                    }
                    done.countDown();
                }
            });
        }
        assertTrue(done.await(30, TimeUnit.SECONDS), "async callbacks");
        assertTrue(errors.isEmpty(), "async errors: " + errors);
        Map<String, MessageExt> got = new ConcurrentHashMap<>();
        push(Env.name("cg-async"), t, false, Env.name("c-async"), got, null);
        expectAll(got, "async", 0, N);
    }

    /**
     * The VIP channel (issue #18): a client with vipChannelEnabled sends,
     * and makes its offset and admin calls, on listenPort-2 (Apache's fast
     * remoting server, the 10909 of compose files); the producer's
     * connection table shows the channel it used.
     */
    @Test
    void vipChannel() throws Exception {
        String t = topic("vip");
        DefaultMQProducer p = new DefaultMQProducer(Env.name("pg-vip"));
        p.setNamesrvAddr(Env.NAMESRV);
        p.setInstanceName(Env.name("producer-vip"));
        p.setVipChannelEnabled(true);
        p.setSendMsgTimeout(10_000);
        p.start();
        cleanups.add(p::shutdown);
        for (int i = 0; i < N; i++) {
            assertEquals(SendStatus.SEND_OK, p.send(Env.message(t, "vip", i)).getSendStatus());
        }
        int colon = Env.BROKER_ADDR.lastIndexOf(':');
        String vip = Env.BROKER_ADDR.substring(0, colon) + ":" + (Integer.parseInt(Env.BROKER_ADDR.substring(colon + 1)) - 2);
        Object remoting = p.getDefaultMQProducerImpl().getMqClientFactory().getMQClientAPIImpl().getRemotingClient();
        java.lang.reflect.Field f = remoting.getClass().getDeclaredField("channelTables");
        f.setAccessible(true);
        Map<?, ?> channels = (Map<?, ?>) f.get(remoting);
        assertTrue(channels.containsKey(vip), "no channel to the VIP port " + vip + ": " + channels.keySet());
        Map<String, MessageExt> got = new ConcurrentHashMap<>();
        push(Env.name("cg-vip"), t, false, Env.name("c-vip"), got, null, true);
        expectAll(got, "vip", 0, N);
    }

    @Test
    void onewaySend() throws Exception {
        String t = topic("oneway");
        for (int i = 0; i < N; i++) {
            producer.sendOneway(Env.message(t, "oneway", i));
        }
        Map<String, MessageExt> got = new ConcurrentHashMap<>();
        push(Env.name("cg-oneway"), t, false, Env.name("c-oneway"), got, null);
        expectAll(got, "oneway", 0, N);
    }

    @Test
    void batchSend() throws Exception {
        String t = topic("batch");
        List<Message> batch = new ArrayList<>();
        for (int i = 0; i < N; i++) {
            batch.add(Env.message(t, "batch", i));
        }
        SendResult r = producer.send(batch);
        assertEquals(SendStatus.SEND_OK, r.getSendStatus());
        assertEquals(N, r.getMsgId().split(",").length, "one id per batched message: " + r.getMsgId());
        Map<String, MessageExt> got = new ConcurrentHashMap<>();
        push(Env.name("cg-batch"), t, false, Env.name("c-batch"), got, null);
        expectAll(got, "batch", 0, N);
        long q = got.get(Env.body("batch", 0)).getQueueId();
        for (MessageExt m : got.values()) {
            assertEquals(q, m.getQueueId(), "a batch lands in one queue");
        }
    }

    @Test
    void clusteringSplitsQueues() throws Exception {
        String t = topic("cluster");
        String g = Env.name("cg-cluster");
        Map<String, MessageExt> got1 = new ConcurrentHashMap<>();
        Map<String, MessageExt> got2 = new ConcurrentHashMap<>();
        DefaultMQPushConsumer c1 = push(g, t, false, Env.name("c-cluster-1"), got1, null);
        DefaultMQPushConsumer c2 = push(g, t, false, Env.name("c-cluster-2"), got2, null);
        Env.waitFor(WAIT, "both consumers own queues", () -> {
            // The table also holds the group's %RETRY% queue: count the topic's only.
            long a = c1.getDefaultMQPushConsumerImpl().getRebalanceImpl().getProcessQueueTable().keySet()
                    .stream().filter(q -> q.getTopic().equals(t)).count();
            long b = c2.getDefaultMQPushConsumerImpl().getRebalanceImpl().getProcessQueueTable().keySet()
                    .stream().filter(q -> q.getTopic().equals(t)).count();
            return a == 2 && b == 2;
        });
        for (int i = 0; i < 4 * N; i++) {
            producer.send(Env.message(t, "cluster", i));
        }
        Map<String, MessageExt> all = new ConcurrentHashMap<>();
        Env.waitFor(WAIT, "all clustering messages", () -> {
            all.putAll(got1);
            all.putAll(got2);
            return all.size() == 4 * N;
        });
        expectAll(all, "cluster", 0, 4 * N);
        assertFalse(got1.isEmpty(), "consumer 1 got none");
        assertFalse(got2.isEmpty(), "consumer 2 got none");
        for (String b : got1.keySet()) {
            assertFalse(got2.containsKey(b), "both consumers got " + b);
        }
    }

    @Test
    void broadcasting() throws Exception {
        String t = topic("broadcast");
        String g = Env.name("cg-broadcast");
        Map<String, MessageExt> got1 = new ConcurrentHashMap<>();
        Map<String, MessageExt> got2 = new ConcurrentHashMap<>();
        push(g, t, true, Env.name("c-bc-1"), got1, null);
        push(g, t, true, Env.name("c-bc-2"), got2, null);
        for (int i = 0; i < N; i++) {
            producer.send(Env.message(t, "broadcast", i));
        }
        expectAll(got1, "broadcast", 0, N);
        expectAll(got2, "broadcast", 0, N);
    }

    @Test
    void offsetsResumeAfterConsumerRestart() throws Exception {
        String t = topic("resume");
        String g = Env.name("cg-resume");
        for (int i = 0; i < N; i++) {
            producer.send(Env.message(t, "resume", i));
        }
        Map<String, MessageExt> got1 = new ConcurrentHashMap<>();
        DefaultMQPushConsumer c1 = push(g, t, false, Env.name("c-resume-1"), got1, null);
        expectAll(got1, "resume", 0, N);
        // The broker holds the committed offsets once shutdown has persisted them.
        c1.shutdown();
        Env.waitFor(WAIT, "committed offsets reach " + N, () -> {
            try {
                return admin.examineConsumeStats(g).computeTotalDiff() == 0;
            } catch (Exception e) {
                return false;
            }
        });
        for (int i = N; i < 2 * N; i++) {
            producer.send(Env.message(t, "resume", i));
        }
        Map<String, MessageExt> got2 = new ConcurrentHashMap<>();
        AtomicInteger deliveries = new AtomicInteger();
        push(g, t, false, Env.name("c-resume-2"), got2, deliveries);
        expectAll(got2, "resume", N, 2 * N);
        for (int i = 0; i < N; i++) {
            assertFalse(got2.containsKey(Env.body("resume", i)), "redelivered after restart: " + Env.body("resume", i));
        }
        assertEquals(N, deliveries.get(), "deliveries after restart");
    }

    @Test
    void litePull() throws Exception {
        String t = topic("lite");
        for (int i = 0; i < N; i++) {
            producer.send(Env.message(t, "lite", i));
        }
        DefaultLitePullConsumer c = new DefaultLitePullConsumer(Env.name("cg-lite"));
        c.setNamesrvAddr(Env.NAMESRV);
        c.setInstanceName(Env.name("c-lite"));
        c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        c.setAutoCommit(true);
        c.subscribe(t, "*");
        c.start();
        cleanups.add(c::shutdown);
        Map<String, MessageExt> got = new ConcurrentHashMap<>();
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (got.size() < N && System.nanoTime() < deadline) {
            for (MessageExt m : c.poll(1000)) {
                got.put(new String(m.getBody(), StandardCharsets.UTF_8), m);
            }
        }
        expectAll(got, "lite", 0, N);
    }

    @Test
    void goProducerToJavaConsumer() throws Exception {
        Map<String, MessageExt> got = new ConcurrentHashMap<>();
        push(Env.name("cg-go2java"), Env.GO2JAVA, false, Env.name("c-go2java"), got, null);
        Env.waitFor(WAIT, "messages from the Go producer (have " + got.size() + ")",
                () -> got.size() >= Env.MIXED_COUNT);
        for (int i = 0; i < Env.MIXED_COUNT; i++) {
            MessageExt m = got.get("go2java-" + i);
            assertNotNull(m, "go2java-" + i + " not received; got " + got.keySet());
            assertEquals("TagG", m.getTags());
            assertEquals("gokey-" + i + " gokey2-" + i, m.getKeys());
            for (Map.Entry<String, String> e : Env.mixedProps("go", i).entrySet()) {
                assertEquals(e.getValue(), m.getUserProperty(e.getKey()), "property " + e.getKey());
            }
        }
    }

    @Test
    void javaProducerForGoConsumer() throws Exception {
        for (int i = 0; i < Env.MIXED_COUNT; i++) {
            Message m = new Message(Env.JAVA2GO, "TagJ", "jkey-" + i + " jkey2-" + i,
                    ("java2go-" + i).getBytes(StandardCharsets.UTF_8));
            for (Map.Entry<String, String> e : Env.mixedProps("java", i).entrySet()) {
                m.putUserProperty(e.getKey(), e.getValue());
            }
            assertEquals(SendStatus.SEND_OK, producer.send(m).getSendStatus());
        }
    }

    @Test
    void headerSerializationInEffect() {
        String want = System.getProperty("rocketmq.serialize.type", "JSON");
        assertEquals(want, org.apache.rocketmq.remoting.protocol.RemotingCommand.getSerializeTypeConfigInThisServer().name(),
                "the client encodes its request headers as asked");
    }
}
