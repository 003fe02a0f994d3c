package io.rocketgo.compat;

import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;

import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.TopicConfig;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.tools.admin.DefaultMQAdminExt;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Pop consumption (issue #15) with the official 5.3.3 Remoting push consumer in pop mode:
 * setClientRebalance(false) makes it ask the broker for its queues (QUERY_ASSIGNMENT), and the
 * topic/group set to POP (mqadmin setConsumeMode, SET_MESSAGE_REQUEST_MODE) makes it pop them.
 * Run by compat-tests/pop_java_test.go against rocketgo and, with ROCKETGO_POP_TARGETS=...apache,
 * against Apache's 5.3.3 broker: the same assertions hold for both. The 5.x API is reached by
 * reflection so that the class compiles against 4.9.8 too (where it is skipped).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class PopTest {
    /** The broker under test is Apache's (pop_java_test.go passes txTarget). */
    static final boolean APACHE = "apache".equals(System.getProperty("txTarget"));
    /** The push consumer's first retry delay (DefaultMQPushConsumerImpl.popDelayLevel[0]). */
    static final long FIRST_RETRY_MS = 10_000;

    private DefaultMQAdminExt admin;
    private DefaultMQProducer producer;
    private final List<DefaultMQPushConsumer> consumers = new CopyOnWriteArrayList<>();
    private final CountDownLatch release = new CountDownLatch(1);

    @BeforeAll
    void start() throws Exception {
        Assumptions.assumeTrue(Env.IS5, "pop consumption needs the 5.x client");
        admin = new DefaultMQAdminExt();
        admin.setNamesrvAddr(Env.NAMESRV);
        admin.setInstanceName("pop-admin-" + Env.RUN);
        admin.start();
        producer = new DefaultMQProducer(Env.name("popProducer"));
        producer.setNamesrvAddr(Env.NAMESRV);
        producer.setInstanceName("pop-producer-" + Env.RUN);
        producer.start();
    }

    @AfterAll
    void stop() {
        release.countDown();
        for (DefaultMQPushConsumer c : consumers) {
            c.shutdown();
        }
        if (producer != null) {
            producer.shutdown();
        }
        if (admin != null) {
            admin.shutdown();
        }
    }

    /** A topic of its own, its group set to POP on the broker; returns {topic, group}. */
    private String[] popTopic(String scenario) throws Exception {
        String topic = Env.name("Pop" + scenario), group = Env.name("popg" + scenario);
        admin.createAndUpdateTopicConfig(Env.BROKER_ADDR, new TopicConfig(topic, 4, 4, 6));
        Class<?> mode = Class.forName("org.apache.rocketmq.common.message.MessageRequestMode");
        Object pop = mode.getField("POP").get(null);
        Method set = admin.getClass().getMethod("setMessageRequestMode", String.class, String.class, String.class,
                mode, int.class, long.class);
        set.invoke(admin, Env.BROKER_ADDR, topic, group, pop, 0, 5000L);
        Env.waitFor(Duration.ofSeconds(30), "route of " + topic, () -> {
            try {
                return !admin.examineTopicRouteInfo(topic).getQueueDatas().isEmpty();
            } catch (Exception e) {
                return false;
            }
        });
        return new String[] {topic, group};
    }

    private DefaultMQPushConsumer popConsumer(String topic, String group, long invisibleMs,
        MessageListenerConcurrently listener) throws Exception {
        DefaultMQPushConsumer c = new DefaultMQPushConsumer(group);
        c.setNamesrvAddr(Env.NAMESRV);
        c.setInstanceName("pop-" + group + "-" + System.nanoTime());
        c.subscribe(topic, "*");
        c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        c.getClass().getMethod("setClientRebalance", boolean.class).invoke(c, false);
        c.getClass().getMethod("setPopInvisibleTime", long.class).invoke(c, invisibleMs);
        c.registerMessageListener(listener);
        c.start();
        consumers.add(c);
        return c;
    }

    private void send(String topic, String scenario, int n) throws Exception {
        for (int i = 0; i < n; i++) {
            assertEquals(SendStatus.SEND_OK, producer.send(Env.message(topic, scenario, i)).getSendStatus());
        }
    }

    /** Every message consumed, each by pop (its POP_CK handle set), acked: none comes back. */
    @Test
    @Order(1)
    void consumeAll() throws Exception {
        String[] tg = popTopic("all");
        int n = 40;
        send(tg[0], "all", n);
        Map<String, Integer> got = new ConcurrentHashMap<>();
        List<String> errors = new CopyOnWriteArrayList<>();
        popConsumer(tg[0], tg[1], 5000, (msgs, ctx) -> { // the client's minimum
            for (MessageExt m : msgs) {
                try {
                    Env.checkMessage(m, "all");
                    assertNotNull(m.getProperty("POP_CK"), "POP_CK: consumed by pop");
                } catch (Throwable e) {
                    errors.add(e.toString());
                }
                got.merge(m.getKeys(), 1, Integer::sum);
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        Env.waitFor(Duration.ofSeconds(60), n + " messages popped", () -> got.size() == n);
        Thread.sleep(6000); // past the 5 s invisible time: an ack lost would show as a second delivery
        assertTrue(errors.isEmpty(), errors.toString());
        got.forEach((k, v) -> assertEquals(1, v, "deliveries of " + k));
        System.out.println("POPSTATS consumed=" + got.size());
    }

    /** RECONSUME_LATER: the message comes back after the first retry delay, reconsumeTimes 1. */
    @Test
    @Order(2)
    void reconsumeLater() throws Exception {
        String[] tg = popTopic("later");
        List<long[]> deliveries = new CopyOnWriteArrayList<>(); // {at, reconsumeTimes}
        popConsumer(tg[0], tg[1], 60_000, (msgs, ctx) -> {
            for (MessageExt m : msgs) {
                deliveries.add(new long[] {System.currentTimeMillis(), m.getReconsumeTimes()});
            }
            return msgs.get(0).getReconsumeTimes() == 0 ? ConsumeConcurrentlyStatus.RECONSUME_LATER
                : ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        send(tg[0], "later", 1);
        Env.waitFor(Duration.ofSeconds(60), "the redelivery", () -> deliveries.size() >= 2);
        long gap = deliveries.get(1)[0] - deliveries.get(0)[0];
        assertEquals(0, deliveries.get(0)[1], "first delivery's reconsumeTimes");
        assertEquals(1, deliveries.get(1)[1], "redelivery's reconsumeTimes");
        assertTrue(gap >= FIRST_RETRY_MS - 1000, "redelivered after " + gap + " ms, before the retry delay");
        assertTrue(gap < FIRST_RETRY_MS + 20_000, "redelivered after " + gap + " ms");
        Thread.sleep(3000);
        assertEquals(2, deliveries.size(), "deliveries after success");
        System.out.println("POPSTATS retryGapMs=" + gap);
    }

    /**
     * Popped, never acked, then the broker restarts: the messages come back after their invisible
     * time counted from the pop, not before, and each once.
     */
    @Test
    @Order(3)
    void restartKeepsInvisibility() throws Exception {
        restart("restart", "term");
    }

    /**
     * The same across kill -9 of the broker: nothing lost, nothing back before its invisible time.
     * Apache 5.3.3 loses no message either but, its pop offsets not yet flushed, hands them out again
     * at once (measured: 7 s and 17 s after the pop with a 20 s invisible time): against Apache only the
     * "nothing lost" half is asserted, the early redelivery printed.
     */
    @Test
    @Order(4)
    void killKeepsInvisibility() throws Exception {
        restart("kill", "kill");
    }

    private void restart(String scenario, String how) throws Exception {
        String dir = System.getProperty("txDir", "");
        Assumptions.assumeFalse(dir.isEmpty(), "no txDir: the Go side does not restart the broker");
        String[] tg = popTopic(scenario);
        long invisible = 10_000;
        int n = 3;
        Map<String, Long> first = new ConcurrentHashMap<>();
        DefaultMQPushConsumer a = popConsumer(tg[0], tg[1], invisible, (msgs, ctx) -> {
            for (MessageExt m : msgs) {
                first.putIfAbsent(m.getKeys(), System.currentTimeMillis());
            }
            try {
                release.await(); // never answered while the test runs: not acked
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return ConsumeConcurrentlyStatus.RECONSUME_LATER;
        });
        send(tg[0], scenario, n);
        Env.waitFor(Duration.ofSeconds(60), n + " messages popped", () -> first.size() == n);
        a.shutdown();
        consumers.remove(a);

        Path done = Path.of(dir, "restart-done-" + how);
        Files.writeString(Path.of(dir, "restart-request-" + how + ".tmp"), how);
        Files.move(Path.of(dir, "restart-request-" + how + ".tmp"), Path.of(dir, "restart-request-" + how));
        Env.waitFor(Duration.ofSeconds(180), "broker restart by the Go side", () -> Files.exists(done));
        String err = Files.readString(done);
        assertTrue(err.isEmpty(), "restart failed: " + err);

        Map<String, Long> again = new ConcurrentHashMap<>();
        Map<String, Integer> times = new ConcurrentHashMap<>();
        popConsumer(tg[0], tg[1], 60_000, (msgs, ctx) -> {
            for (MessageExt m : msgs) {
                again.putIfAbsent(m.getKeys(), System.currentTimeMillis());
                times.merge(m.getKeys(), 1, Integer::sum);
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        Env.waitFor(Duration.ofSeconds(120), "redelivery after the restart", () -> again.size() == n);
        Thread.sleep(3000);
        long earliest = Long.MAX_VALUE;
        boolean strict = !(APACHE && how.equals("kill"));
        for (String k : first.keySet()) {
            long early = again.get(k) - first.get(k);
            earliest = Math.min(earliest, early);
            if (strict) {
                assertTrue(early >= invisible - 1000, k + " redelivered " + early + " ms after its pop, invisible time " + invisible);
                assertEquals(1, times.get(k), "deliveries of " + k + " after the restart");
            }
        }
        System.out.println("POPSTATS " + how + "RedeliveryMs=" + earliest);
    }
}
