package io.rocketgo.compat;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.exception.MQBrokerException;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
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
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Recall of a timer message with the official 5.3.3 producer (recallMessage, 5.3's RECALL_MESSAGE):
 * the send's answer carries a recall handle, the recall before the message is due stops its
 * delivery, the message not recalled is delivered, and the broker refuses what Apache refuses.
 * Run by compat-tests/recall_java_test.go against a broker with recallMessageEnable=true (rocketgo,
 * and with ROCKETGO_RECALL_TARGETS=...apache Apache's 5.3.3: the same assertions hold for both).
 * 5.x only: the rmq4 profile does not compile it.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RecallTest {
    private DefaultMQAdminExt admin;
    private DefaultMQProducer producer;
    private DefaultMQPushConsumer consumer;

    @BeforeAll
    void start() throws Exception {
        admin = new DefaultMQAdminExt();
        admin.setNamesrvAddr(Env.NAMESRV);
        admin.setInstanceName("recall-admin-" + Env.RUN);
        admin.start();
        producer = new DefaultMQProducer(Env.name("recallProducer"));
        producer.setNamesrvAddr(Env.NAMESRV);
        producer.setInstanceName("recall-producer-" + Env.RUN);
        producer.start();
    }

    @AfterAll
    void stop() {
        if (consumer != null) {
            consumer.shutdown();
        }
        if (producer != null) {
            producer.shutdown();
        }
        if (admin != null) {
            admin.shutdown();
        }
    }

    private Message timerMessage(String topic, String body, long deliverMs) {
        Message m = new Message(topic, "recall", body.getBytes(StandardCharsets.UTF_8));
        m.setDeliverTimeMs(deliverMs);
        return m;
    }

    @Test
    void recallStopsDelivery() throws Exception {
        String topic = Env.name("Recall");
        admin.createAndUpdateTopicConfig(Env.BROKER_ADDR, new TopicConfig(topic, 4, 4, 6));
        Env.waitFor(Duration.ofSeconds(30), "route of " + topic, () -> {
            try {
                return !admin.examineTopicRouteInfo(topic).getQueueDatas().isEmpty();
            } catch (Exception e) {
                return false;
            }
        });
        Map<String, Integer> got = new ConcurrentHashMap<>();
        consumer = new DefaultMQPushConsumer(Env.name("recallg"));
        consumer.setNamesrvAddr(Env.NAMESRV);
        consumer.setInstanceName("recall-consumer-" + Env.RUN);
        consumer.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        consumer.subscribe(topic, "*");
        consumer.registerMessageListener((java.util.List<MessageExt> msgs,
            org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyContext ctx) -> {
            for (MessageExt m : msgs) {
                got.merge(new String(m.getBody(), StandardCharsets.UTF_8), 1, Integer::sum);
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        consumer.start();

        long due = System.currentTimeMillis() + 5000;
        SendResult recalled = producer.send(timerMessage(topic, "recalled", due));
        SendResult kept = producer.send(timerMessage(topic, "kept", due));
        assertEquals(SendStatus.SEND_OK, recalled.getSendStatus());
        assertNotNull(recalled.getRecallHandle(), "a timer message's send answer carries a recall handle");
        assertNotNull(kept.getRecallHandle());
        String raw = new String(Base64.getUrlDecoder().decode(recalled.getRecallHandle()), StandardCharsets.UTF_8);
        String[] f = raw.split(" ");
        assertEquals(5, f.length, raw);
        assertEquals("v1", f[0], raw);
        assertEquals(topic, f[1], raw);
        assertEquals(Env.BROKER_NAME, f[2], raw);
        assertEquals(recalled.getMsgId(), f[4], raw);
        long handleMs = Long.parseLong(f[3]);
        assertTrue(handleMs > due - 1000 && handleMs <= due + 1, "handle time " + handleMs + " for due " + due);
        assertNull(producer.send(new Message(topic, "plain", "plain".getBytes(StandardCharsets.UTF_8))).getRecallHandle(),
            "a plain message has no recall handle");

        String id = producer.recallMessage(topic, recalled.getRecallHandle());
        assertEquals(recalled.getMsgId(), id, "recall answers the recalled message's id");

        // A handle of another topic, naming this broker: refused by the broker.
        String other = Base64.getUrlEncoder().encodeToString(
            ("v1 " + topic + "X " + Env.BROKER_NAME + " " + f[3] + " " + f[4]).getBytes(StandardCharsets.UTF_8));
        MQBrokerException e = assertThrows(MQBrokerException.class, () -> producer.recallMessage(topic, other));
        assertEquals(604, e.getResponseCode(), e.toString());
        assertTrue(e.getErrorMessage().contains("recall failed, topic not match"), e.getErrorMessage());

        Env.waitFor(Duration.ofSeconds(30), "the message not recalled", () -> got.containsKey("kept"));
        Thread.sleep(3000); // the recalled one would come with it, and the delete marker (body "0")
        assertEquals(Map.of("kept", 1, "plain", 1), got, "delivered");

        // Past its time the handle is refused.
        MQBrokerException late = assertThrows(MQBrokerException.class,
            () -> producer.recallMessage(topic, kept.getRecallHandle()));
        assertEquals(604, late.getResponseCode(), late.toString());
        assertTrue(late.getErrorMessage().contains("recall failed, timestamp invalid"), late.getErrorMessage());
        System.out.println("RECALLSTATS delivered=" + got);
    }
}
