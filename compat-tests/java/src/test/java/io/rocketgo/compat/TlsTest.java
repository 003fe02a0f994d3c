package io.rocketgo.compat;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The official client with setUseTLS(true) and mqadmin with -Dtls.enable=true
 * against servers in TLS enforcing mode; the tls.client.* settings come as
 * system properties from compat-tests/tls_test.go.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class TlsTest {
    static final Duration WAIT = Duration.ofSeconds(30);
    static final int COUNT = 10;

    private final String topic = Env.name("tlstopic");

    @Test
    @Order(1)
    void mqadminOverTls() throws Exception {
        String out = MqAdminTest.mqadmin("updateTopic", "-n", Env.NAMESRV, "-c", Env.CLUSTER, "-t", topic, "-r", "2", "-w", "2");
        MqAdminTest.clean(out);
        MqAdminTest.contains(out, "create topic to " + Env.BROKER_ADDR + " success");
        out = MqAdminTest.mqadmin("clusterList", "-n", Env.NAMESRV);
        MqAdminTest.clean(out);
        MqAdminTest.contains(out, Env.CLUSTER, Env.BROKER_NAME);
        Env.waitFor(WAIT, "route of " + topic, () -> MqAdminTest.mqadmin("topicRoute", "-n", Env.NAMESRV, "-t", topic).contains("queueDatas"));
    }

    @Test
    @Order(2)
    void sendAndConsumeOverTls() throws Exception {
        DefaultMQProducer producer = new DefaultMQProducer(Env.name("tlspg"));
        producer.setNamesrvAddr(Env.NAMESRV);
        producer.setInstanceName(Env.name("tlsprod"));
        producer.setUseTLS(true);
        producer.start();
        Set<String> got = ConcurrentHashMap.newKeySet();
        DefaultMQPushConsumer consumer = new DefaultMQPushConsumer(Env.name("tlscg"));
        try {
            for (int i = 0; i < COUNT; i++) {
                SendResult r = producer.send(new Message(topic, "T", ("tls-" + i).getBytes(StandardCharsets.UTF_8)));
                assertEquals(SendStatus.SEND_OK, r.getSendStatus());
            }
            consumer.setNamesrvAddr(Env.NAMESRV);
            consumer.setInstanceName(Env.name("tlscons"));
            consumer.setUseTLS(true);
            consumer.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
            consumer.subscribe(topic, "*");
            consumer.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
                for (MessageExt m : msgs) {
                    got.add(new String(m.getBody(), StandardCharsets.UTF_8));
                }
                return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
            });
            consumer.start();
            Env.waitFor(WAIT, COUNT + " messages over TLS", () -> got.size() >= COUNT);
            assertTrue(got.contains("tls-0") && got.contains("tls-" + (COUNT - 1)), "got " + got);
            System.out.println("consumed over tls: " + got.size());
        } finally {
            consumer.shutdown();
            producer.shutdown();
        }
    }
}
