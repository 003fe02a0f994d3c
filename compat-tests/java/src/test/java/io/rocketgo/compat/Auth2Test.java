package io.rocketgo.compat;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.consumer.rebalance.AllocateMessageQueueAveragely;
import org.apache.rocketmq.client.exception.MQBrokerException;
import org.apache.rocketmq.client.exception.MQClientException;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * ACL 2.0 with the Java 5.3.3 client's AclClientRPCHook, the user being an ACL 2.0 user
 * (compat-tests/auth2_test.go's auth2Setup: authAlice may Pub/Sub/Get Topic:AuthT*, is denied
 * Topic:AuthTDeny, may Sub Group:AuthGroup).
 */
class Auth2Test {
    static final Duration WAIT = Duration.ofSeconds(30);
    static final int N = 3;

    static DefaultMQProducer producer(String what, String password) throws Exception {
        DefaultMQProducer p = new DefaultMQProducer(Env.name(what), AclTest.hook("authAlice", password));
        p.setNamesrvAddr(Env.NAMESRV);
        p.setInstanceName(Env.name(what));
        p.setRetryTimesWhenSendFailed(0);
        p.setSendMsgTimeout(10_000);
        p.start();
        return p;
    }

    static MQBrokerException refused(DefaultMQProducer p, String topic) {
        MQClientException ce = assertThrows(MQClientException.class,
            () -> p.send(new Message(topic, "TagJ", "refused".getBytes(StandardCharsets.UTF_8))));
        assertTrue(ce.getCause() instanceof MQBrokerException, String.valueOf(ce.getCause()));
        return (MQBrokerException) ce.getCause();
    }

    @Test
    void userProducesAndConsumes() throws Exception {
        DefaultMQProducer p = producer("auth2-ok", "alicePass1");
        Set<String> sent = ConcurrentHashMap.newKeySet();
        try {
            for (int i = 0; i < N; i++) {
                String id = Env.name("auth2-java-" + i);
                Message m = new Message("AuthTopic", "TagJ", id.getBytes(StandardCharsets.UTF_8));
                m.putUserProperty("compat_id", id);
                SendResult r = p.send(m);
                assertEquals(SendStatus.SEND_OK, r.getSendStatus());
                sent.add(id);
            }
            MQBrokerException e = refused(p, "AuthTDeny");
            assertEquals(16, e.getResponseCode());
            assertEquals("User:authAlice has no permission to access Topic:AuthTDeny from 127.0.0.1, the decision is deny.",
                e.getErrorMessage());
        } finally {
            p.shutdown();
        }
        Set<String> got = ConcurrentHashMap.newKeySet();
        DefaultMQPushConsumer c = new DefaultMQPushConsumer("AuthGroup", AclTest.hook("authAlice", "alicePass1"),
            new AllocateMessageQueueAveragely());
        c.setNamesrvAddr(Env.NAMESRV);
        c.setInstanceName(Env.name("auth2-consumer"));
        c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        c.subscribe("AuthTopic", "*");
        c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            for (MessageExt m : msgs) {
                got.add(m.getUserProperty("compat_id"));
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        c.start();
        try {
            Env.waitFor(WAIT, "the signed consumer to receive " + sent, () -> got.containsAll(sent));
        } finally {
            c.shutdown();
        }
    }

    @Test
    void wrongPasswordRefused() throws Exception {
        DefaultMQProducer p = producer("auth2-bad", "notThePassword");
        try {
            MQBrokerException e = refused(p, "AuthTopic");
            assertEquals(16, e.getResponseCode());
            assertEquals("check signature failed.", e.getErrorMessage());
        } finally {
            p.shutdown();
        }
    }
}
