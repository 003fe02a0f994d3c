package io.rocketgo.newest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import org.apache.rocketmq.client.apis.ClientServiceProvider;
import org.apache.rocketmq.client.apis.consumer.FilterExpression;
import org.apache.rocketmq.client.apis.consumer.SimpleConsumer;
import org.apache.rocketmq.client.apis.message.Message;
import org.apache.rocketmq.client.apis.message.MessageView;
import org.apache.rocketmq.client.apis.producer.Producer;
import org.apache.rocketmq.client.apis.producer.SendReceipt;
import org.junit.jupiter.api.Test;

/**
 * Priority messages (Apache 5.4, RIP-80) with the official Java SDK:
 * MessageBuilder.setPriority to a PRIORITY topic through a gRPC proxy to
 * the broker under test, received by a SimpleConsumer one at a time.
 * Each case runs over every transport (see Transport) at once, each with
 * its own PRIORITY topic (-D&lt;transport&gt;.topic) and group (.group); the Go side
 * (priority_java_test.go) starts the servers and creates them.
 */
class PriorityTest {
    private static final ClientServiceProvider PROVIDER = ClientServiceProvider.loadService();

    /**
     * Priorities sent, lowest first. The topic has fewer queues
     * (-Dqueues): a priority is stored in the queue of its number, the
     * highest ones in the last queue together.
     */
    private static final int[] PRIORITIES = {0, 1, 2, 5, 9};

    /**
     * Two messages of each priority, lowest first; received one at a time,
     * each arrives with its priority, the higher queue first, one queue's
     * in send order (so 5 before 9 when both are in the last queue, as on
     * Apache).
     */
    @Test
    void order() throws Exception {
        Transport.each(PriorityTest::order);
    }

    record Sent(String body, int priority) {
    }

    private static void order(Transport t) throws Exception {
        String topic = t.prop("topic"), group = t.prop("group"), tr = t.name() + ": ";
        List<Sent> sent = new ArrayList<>();
        try (Producer p = PROVIDER.newProducerBuilder().setClientConfiguration(t.config()).setTopics(topic).build();
             SimpleConsumer c = PROVIDER.newSimpleConsumerBuilder().setClientConfiguration(t.config())
                 .setConsumerGroup(group).setAwaitDuration(Duration.ofSeconds(5))
                 .setSubscriptionExpressions(Map.of(topic, FilterExpression.SUB_ALL)).build()) {
            for (int prio : PRIORITIES) {
                for (int i = 0; i < 2; i++) {
                    String body = "p" + prio + "-" + i;
                    Message m = PROVIDER.newMessageBuilder().setTopic(topic).setTag("TA").setPriority(prio)
                        .setBody(body.getBytes(StandardCharsets.UTF_8)).build();
                    SendReceipt r = p.send(m);
                    assertTrue(r.getMessageId() != null, tr + "send " + body);
                    sent.add(new Sent(body, prio));
                }
            }
            // A send is answered once stored; its consume queue entry
            // follows (asynchronous dispatch, as in Apache): a receive at
            // once could find only the lower priorities dispatched so far.
            Thread.sleep(500);
            List<Sent> got = new ArrayList<>();
            long end = System.currentTimeMillis() + 60_000;
            while (got.size() < sent.size() && System.currentTimeMillis() < end) {
                for (MessageView mv : c.receive(1, Duration.ofSeconds(30))) {
                    String body = StandardCharsets.UTF_8.decode(mv.getBody()).toString();
                    got.add(new Sent(body, mv.getPriority().orElse(-1)));
                    c.ack(mv);
                }
            }
            System.out.println("PRIORITY " + tr + "received " + got);
            int last = Integer.parseInt(Transport.global("queues")) - 1;
            List<Sent> want = new ArrayList<>(sent);
            Collections.sort(want, Comparator.comparingInt((Sent m) -> Math.min(m.priority(), last)).reversed()); // stable
            assertEquals(want, got, tr + "receive order");
        }
    }

    /**
     * A priority message to a NORMAL topic (-D&lt;transport&gt;.normal) is
     * refused by the SDK itself: the route says which message types the
     * topic's queues accept (NORMAL only).
     */
    @Test
    void wrongTopic() throws Exception {
        Transport.each(PriorityTest::wrongTopic);
    }

    private static void wrongTopic(Transport t) throws Exception {
        String topic = t.prop("normal"), tr = t.name() + ": ";
        try (Producer p = PROVIDER.newProducerBuilder().setClientConfiguration(t.config()).setTopics(topic).build()) {
            Message m = PROVIDER.newMessageBuilder().setTopic(topic).setPriority(3)
                .setBody("p3".getBytes(StandardCharsets.UTF_8)).build();
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> p.send(m), tr + "priority to NORMAL");
            System.out.println("PRIORITY " + tr + "refused: " + e.getMessage());
            assertTrue(e.getMessage().contains("actualMessageType=PRIORITY, acceptMessageTypes=[NORMAL]"), tr + e.getMessage());
        }
    }
}
