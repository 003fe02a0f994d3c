package io.rocketgo.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.rocketmq.client.apis.ClientConfiguration;
import org.apache.rocketmq.client.apis.ClientServiceProvider;
import org.apache.rocketmq.client.apis.consumer.ConsumeResult;
import org.apache.rocketmq.client.apis.consumer.FilterExpression;
import org.apache.rocketmq.client.apis.consumer.FilterExpressionType;
import org.apache.rocketmq.client.apis.consumer.PushConsumer;
import org.apache.rocketmq.client.apis.consumer.SimpleConsumer;
import org.apache.rocketmq.client.apis.message.Message;
import org.apache.rocketmq.client.apis.message.MessageView;
import org.apache.rocketmq.client.apis.producer.Producer;
import org.apache.rocketmq.client.apis.producer.SendReceipt;
import org.apache.rocketmq.client.apis.producer.Transaction;
import org.apache.rocketmq.client.apis.producer.TransactionResolution;
import org.junit.jupiter.api.Test;

/**
 * The official Java 5.x SDK (TLS on, its default) through mqproxy. The Go
 * side (proxy_java_test.go) starts the servers, creates topics and groups,
 * sends and checks what must arrive through the 4.x Remoting Go client.
 */
class ProxyTest {
    private static final ClientServiceProvider PROVIDER = ClientServiceProvider.loadService();

    private static String prop(String k) {
        String v = System.getProperty(k);
        assertNotNull(v, "-D" + k + " not set");
        return v;
    }

    private static ClientConfiguration config() {
        return ClientConfiguration.newBuilder().setEndpoints(prop("proxy"))
            .setRequestTimeout(Duration.ofSeconds(10)).build();
    }

    private static Message msg(String topic, String id, String group, Long deliverAt) {
        var b = PROVIDER.newMessageBuilder().setTopic(topic).setTag("TA").setKeys("k-" + id)
            .setBody(("body-" + id).getBytes(StandardCharsets.UTF_8)).addProperty("compat_id", id);
        if (group != null) {
            b.setMessageGroup(group);
        }
        if (deliverAt != null) {
            b.setDeliveryTimestamp(deliverAt);
        }
        return b.build();
    }

    /** Normal, FIFO, delay and transactional producers; the Go side reads the ids back. */
    @Test
    void producers() throws Exception {
        String tn = prop("topicN"), tf = prop("topicF"), td = prop("topicD"), tt = prop("topicT");
        try (Producer p = PROVIDER.newProducerBuilder().setClientConfiguration(config()).setTopics(tn, tf, td, tt)
            .setTransactionChecker(mv -> TransactionResolution.ROLLBACK).build()) {
            for (int i = 0; i < 3; i++) {
                SendReceipt r = p.send(msg(tn, "j-n-" + i, null, null));
                assertNotNull(r.getMessageId());
            }
            for (int i = 0; i < 4; i++) {
                p.send(msg(tf, "j-f-" + i, "jgroup", null));
            }
            p.send(msg(td, "j-d-0", null, System.currentTimeMillis() + 2000));
            Transaction commit = p.beginTransaction();
            p.send(msg(tt, "j-t-commit", null, null), commit);
            commit.commit();
            Transaction rollback = p.beginTransaction();
            p.send(msg(tt, "j-t-rollback", null, null), rollback);
            rollback.rollback();
        }
    }

    /** SimpleConsumer: receive and ack what the Go side sent to topicC. */
    @Test
    void simpleConsumer() throws Exception {
        String topic = prop("topicC");
        int want = Integer.parseInt(prop("count"));
        Set<String> got = ConcurrentHashMap.newKeySet();
        try (SimpleConsumer sc = PROVIDER.newSimpleConsumerBuilder().setClientConfiguration(config())
            .setConsumerGroup(prop("group")).setAwaitDuration(Duration.ofSeconds(5))
            .setSubscriptionExpressions(Map.of(topic, new FilterExpression("TA", FilterExpressionType.TAG))).build()) {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (got.size() < want && System.nanoTime() < deadline) {
                try {
                    for (MessageView mv : sc.receive(16, Duration.ofSeconds(20))) {
                        assertEquals("TA", mv.getTag().orElse(null));
                        got.add(mv.getProperties().get("compat_id"));
                        sc.ack(mv);
                    }
                } catch (Exception e) {
                    // MESSAGE_NOT_FOUND after a long poll: receive again
                }
            }
        }
        assertEquals(want, got.size(), "received " + got);
        System.out.println("SIMPLE_RECEIVED " + got.size());
    }

    /** PushConsumer that always fails: retried until the group's max attempts, then the DLQ. */
    @Test
    void pushConsumerRetryDLQ() throws Exception {
        int maxAttempts = Integer.parseInt(prop("maxAttempts"));
        AtomicInteger attempts = new AtomicInteger();
        AtomicInteger outOfOrder = new AtomicInteger();
        try (PushConsumer pc = PROVIDER.newPushConsumerBuilder().setClientConfiguration(config())
            .setConsumerGroup(prop("pushGroup"))
            .setSubscriptionExpressions(Map.of(prop("topicP"), FilterExpression.SUB_ALL))
            .setMessageListener(mv -> {
                int n = attempts.incrementAndGet();
                System.out.println("PUSH_ATTEMPT " + mv.getDeliveryAttempt() + " " + mv.getProperties().get("compat_id"));
                if (mv.getDeliveryAttempt() != n) {
                    outOfOrder.incrementAndGet();
                }
                return ConsumeResult.FAILURE;
            }).build()) {
            // Apache 5.3.3's broker revives a changed invisible time in
            // about 25 s per attempt here (rocketgo's: the time itself).
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(150);
            while (attempts.get() < maxAttempts && System.nanoTime() < deadline) {
                Thread.sleep(200);
            }
            Thread.sleep(2000); // no attempt past the last one
        }
        assertEquals(maxAttempts, attempts.get(), "deliveries of a message always failing");
        assertEquals(0, outOfOrder.get(), "deliveries whose delivery attempt was not 1, 2, 3...");
    }
}
