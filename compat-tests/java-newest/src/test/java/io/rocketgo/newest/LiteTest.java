package io.rocketgo.newest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BooleanSupplier;
import org.apache.rocketmq.client.apis.ClientServiceProvider;
import org.apache.rocketmq.client.apis.consumer.ConsumeResult;
import org.apache.rocketmq.client.apis.consumer.LitePushConsumer;
import org.apache.rocketmq.client.apis.consumer.MessageListener;
import org.apache.rocketmq.client.apis.message.Message;
import org.apache.rocketmq.client.apis.message.MessageView;
import org.apache.rocketmq.client.apis.producer.Producer;
import org.junit.jupiter.api.Test;

/**
 * Lite topics with the official Java SDK: a Producer sending with
 * setLiteTopic and LitePushConsumers, through a gRPC proxy to the broker
 * under test. Each case runs over every transport (see Transport) at once,
 * each with its own endpoint, parent topic and lite groups. The Go side
 * (lite_java_test.go) starts the servers, creates the topics and groups,
 * and checks which transport each endpoint saw.
 */
class LiteTest {
    private static final ClientServiceProvider PROVIDER = ClientServiceProvider.loadService();

    private static Message msg(String topic, String lite, String body) {
        return PROVIDER.newMessageBuilder().setTopic(topic).setLiteTopic(lite).setTag("TA")
            .setBody(body.getBytes(StandardCharsets.UTF_8)).build();
    }

    private static boolean waitFor(long millis, BooleanSupplier cond) throws InterruptedException {
        long end = System.currentTimeMillis() + millis;
        while (System.currentTimeMillis() < end) {
            if (cond.getAsBoolean()) {
                return true;
            }
            Thread.sleep(100);
        }
        return cond.getAsBoolean();
    }

    /** What one consumer saw: per lite topic, each delivery's body and attempt, in listener order. */
    static final class Seen implements MessageListener {
        final Map<String, List<String>> byLite = new ConcurrentHashMap<>();
        final List<String> all = new CopyOnWriteArrayList<>();
        final Map<String, Integer> failOnce = new ConcurrentHashMap<>();

        @Override
        public ConsumeResult consume(MessageView mv) {
            String lite = mv.getLiteTopic().orElse("?");
            String body = StandardCharsets.UTF_8.decode(mv.getBody()).toString();
            byLite.computeIfAbsent(lite, k -> new CopyOnWriteArrayList<>()).add(body + "#" + mv.getDeliveryAttempt());
            all.add(lite + "/" + body);
            if (failOnce.remove(body) != null) {
                return ConsumeResult.FAILURE;
            }
            return ConsumeResult.SUCCESS;
        }

        /** The bodies of lite's first deliveries, in order. */
        List<String> firsts(String lite) {
            List<String> out = new ArrayList<>();
            for (String s : byLite.getOrDefault(lite, List.of())) {
                if (s.endsWith("#1")) {
                    out.add(s.substring(0, s.indexOf('#')));
                }
            }
            return out;
        }

        boolean has(String lite, String bodyAttempt) {
            return byLite.getOrDefault(lite, List.of()).contains(bodyAttempt);
        }
    }

    private static LitePushConsumer consumer(Transport t, String group, String topic, Seen seen) throws Exception {
        return PROVIDER.newLitePushConsumerBuilder().setClientConfiguration(t.config()).setConsumerGroup(group)
            .bindTopic(topic).setConsumptionThreadCount(1).setMessageListener(seen).build();
    }

    /**
     * Sends 5 messages to each of 4 lite topics; a consumer subscribed to 3
     * of them receives exactly those, each lite topic's in order; the one
     * whose listener fails once comes back (attempt 2) from the broker after
     * its invisible time; an unsubscribed lite topic is delivered no more.
     */
    @Test
    void delivery() throws Exception {
        Transport.each(LiteTest::delivery);
    }

    private static void delivery(Transport t) throws Exception {
        String topic = t.prop("topic"), group = t.prop("group"), tr = t.name() + ": ";
        String[] lites = {"l1", "l2", "l3", "l4"};
        int n = 5;
        Seen seen = new Seen();
        seen.failOnce.put("l2-2", 1);
        try (Producer p = PROVIDER.newProducerBuilder().setClientConfiguration(t.config()).setTopics(topic).build();
             LitePushConsumer c = consumer(t, group, topic, seen)) {
            c.subscribeLite("l1");
            c.subscribeLite("l2");
            c.subscribeLite("l3");
            for (int i = 0; i < n; i++) {
                for (String l : lites) {
                    assertNotNull(p.send(msg(topic, l, l + "-" + i)).getMessageId());
                }
            }
            long began = System.currentTimeMillis();
            assertTrue(waitFor(30_000, () -> seen.firsts("l1").size() == n && seen.firsts("l2").size() == n
                && seen.firsts("l3").size() == n), tr + "first deliveries: " + seen.byLite);
            System.out.println("LITE " + tr + "firsts after " + (System.currentTimeMillis() - began) + " ms: " + seen.byLite);
            for (String l : new String[] {"l1", "l2", "l3"}) {
                List<String> want = new ArrayList<>();
                for (int i = 0; i < n; i++) {
                    want.add(l + "-" + i);
                }
                assertEquals(want, seen.firsts(l), tr + "order of " + l);
            }
            assertFalse(seen.byLite.containsKey("l4"), tr + "l4 was not subscribed: " + seen.byLite.get("l4"));
            // The failed one again, from the broker, once its invisible time is over.
            long failedAt = System.currentTimeMillis();
            assertTrue(waitFor(60_000, () -> seen.has("l2", "l2-2#2")), tr + "l2-2 redelivered: " + seen.byLite.get("l2"));
            System.out.println("LITE " + tr + "redelivered l2-2 after " + (System.currentTimeMillis() - failedAt) + " ms: "
                + seen.byLite.get("l2"));
            // Redelivery starts at the failed offset: l2-3 and l2-4 follow it
            // again (at least once), never before it.
            List<String> l2 = seen.byLite.get("l2");
            int again = l2.indexOf("l2-2#2");
            for (int i = 0; i < again; i++) {
                assertTrue(l2.get(i).endsWith("#1"), tr + "before the redelivery: " + l2);
            }
            // Unsubscribed: l3's next message is not delivered; l1's is.
            c.unsubscribeLite("l3");
            p.send(msg(topic, "l3", "l3-late"));
            p.send(msg(topic, "l1", "l1-late"));
            assertTrue(waitFor(20_000, () -> seen.has("l1", "l1-late#1")), tr + "l1-late: " + seen.byLite.get("l1"));
            Thread.sleep(3000);
            assertFalse(seen.all.contains("l3/l3-late"), tr + "l3 unsubscribed: " + seen.byLite.get("l3"));
            System.out.println("LITE " + tr + "total deliveries " + seen.all.size() + ": " + seen.all);
        }
    }

    /**
     * Exclusive group: a second consumer subscribing a lite topic takes it;
     * the first is told (NotifyUnsubscribeLite drops it from its set) and
     * receives nothing more of it.
     */
    @Test
    void exclusive() throws Exception {
        Transport.each(LiteTest::exclusive);
    }

    private static void exclusive(Transport t) throws Exception {
        String topic = t.prop("topic"), group = t.prop("groupX"), tr = t.name() + ": ";
        Seen a = new Seen(), b = new Seen();
        try (Producer p = PROVIDER.newProducerBuilder().setClientConfiguration(t.config()).setTopics(topic).build();
             LitePushConsumer ca = consumer(t, group, topic, a)) {
            ca.subscribeLite("x1");
            p.send(msg(topic, "x1", "x1-0"));
            assertTrue(waitFor(20_000, () -> a.has("x1", "x1-0#1")), tr + "a got x1-0: " + a.byLite);
            try (LitePushConsumer cb = consumer(t, group, topic, b)) {
                cb.subscribeLite("x1");
                assertTrue(waitFor(10_000, () -> !ca.getLiteTopicSet().contains("x1")),
                    tr + "a still holds x1: " + ca.getLiteTopicSet());
                assertTrue(cb.getLiteTopicSet().contains("x1"), tr + "b holds x1");
                p.send(msg(topic, "x1", "x1-1"));
                assertTrue(waitFor(20_000, () -> b.has("x1", "x1-1#1")), tr + "b got x1-1: " + b.byLite);
                Thread.sleep(2000);
                assertFalse(a.has("x1", "x1-1#1"), tr + "a after eviction: " + a.byLite);
                System.out.println("LITE " + tr + "exclusive: a=" + a.all + " b=" + b.all);
            }
        }
    }
}
