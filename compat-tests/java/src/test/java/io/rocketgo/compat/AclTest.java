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
import org.apache.rocketmq.common.TopicConfig;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.remoting.RPCHook;
import org.apache.rocketmq.tools.admin.DefaultMQAdminExt;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * ACL 1.0 with the Java client's AclClientRPCHook (4.9.8: rocketmq-acl, in the rmq4 profile; 5.3.3:
 * the same class in rocketmq-client). The broker runs compat-tests/acl_test.go's plain_acl.yml;
 * AclTopic and AclRead exist (one queue each). AclAdminTest has the ACL admin commands (4.9.8 only).
 */
class AclTest {
    static final Duration WAIT = Duration.ofSeconds(30);
    static final int N = 5;

    /** new AclClientRPCHook(new SessionCredentials(ak, sk)), by reflection: the class compiles for 5.3.3 too. */
    static RPCHook hook(String ak, String sk) throws Exception {
        Class<?> cred = Class.forName("org.apache.rocketmq.acl.common.SessionCredentials");
        Object c = cred.getConstructor(String.class, String.class).newInstance(ak, sk);
        return (RPCHook) Class.forName("org.apache.rocketmq.acl.common.AclClientRPCHook").getConstructor(cred).newInstance(c);
    }

    static boolean hasAcl() {
        try {
            Class.forName("org.apache.rocketmq.acl.common.AclClientRPCHook");
            return true;
        } catch (ClassNotFoundException e) {
            return false;
        }
    }

    static DefaultMQProducer producer(String what, RPCHook h) throws Exception {
        DefaultMQProducer p = new DefaultMQProducer(Env.name(what), h);
        p.setNamesrvAddr(Env.NAMESRV);
        p.setInstanceName(Env.name(what));
        p.setRetryTimesWhenSendFailed(0);
        p.setSendMsgTimeout(10_000);
        p.start();
        return p;
    }

    /** The right credentials send and consume; the user's admin request is refused, the admin's served. */
    @Test
    void signedProducerConsumerAdmin() throws Exception {
        assumeTrue(hasAcl(), "no rocketmq-acl on this client line");
        DefaultMQProducer p = producer("acl-ok", hook("aclUser001", "userSecret001"));
        Set<String> sent = ConcurrentHashMap.newKeySet();
        try {
            for (int i = 0; i < N; i++) {
                String id = Env.name("acl-java-" + i);
                Message m = new Message("AclTopic", "TagJ", id.getBytes(StandardCharsets.UTF_8));
                m.putUserProperty("compat_id", id);
                SendResult r = p.send(m);
                assertEquals(SendStatus.SEND_OK, r.getSendStatus());
                sent.add(id);
            }
        } finally {
            p.shutdown();
        }
        Set<String> got = ConcurrentHashMap.newKeySet();
        DefaultMQPushConsumer c = new DefaultMQPushConsumer("AclGroup", hook("aclUser001", "userSecret001"),
            new AllocateMessageQueueAveragely());
        c.setNamesrvAddr(Env.NAMESRV);
        c.setInstanceName(Env.name("acl-consumer"));
        c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        c.subscribe("AclTopic", "*");
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

        DefaultMQAdminExt user = new DefaultMQAdminExt(hook("aclUser001", "userSecret001"));
        user.setNamesrvAddr(Env.NAMESRV);
        user.setInstanceName(Env.name("acl-user-admin"));
        user.start();
        try {
            MQClientException e = assertThrows(MQClientException.class,
                () -> user.createAndUpdateTopicConfig(Env.BROKER_ADDR, new TopicConfig(Env.name("AclUserTopic"), 1, 1, 6)));
            assertEquals(1, e.getResponseCode());
            assertEquals("org.apache.rocketmq.acl.common.AclException: Need admin permission for request code=17, "
                + "but accessKey=aclUser001 is not, "
                + "org.apache.rocketmq.acl.plain.PlainPermissionChecker.check(PlainPermissionChecker.java:36)", e.getErrorMessage());
        } finally {
            user.shutdown();
        }
        DefaultMQAdminExt admin = new DefaultMQAdminExt(hook("aclAdmin01", "adminSecret01"));
        admin.setNamesrvAddr(Env.NAMESRV);
        admin.setInstanceName(Env.name("acl-admin"));
        admin.start();
        try {
            admin.createAndUpdateTopicConfig(Env.BROKER_ADDR, new TopicConfig(Env.name("AclAdminTopic"), 1, 1, 6));
        } finally {
            admin.shutdown();
        }
    }

    /** A wrong secret is refused with Apache's answer (and nothing is written: the Go side checks the offset). */
    @Test
    void wrongSecretRefused() throws Exception {
        assumeTrue(hasAcl(), "no rocketmq-acl on this client line");
        DefaultMQProducer p = producer("acl-bad", hook("aclUser001", "notTheSecret"));
        try {
            // The producer wraps the broker's answer: MQClientException caused by MQBrokerException.
            MQClientException ce = assertThrows(MQClientException.class,
                () -> p.send(new Message("AclTopic", "TagJ", "refused".getBytes(StandardCharsets.UTF_8))));
            assertTrue(ce.getCause() instanceof MQBrokerException, String.valueOf(ce.getCause()));
            MQBrokerException e = (MQBrokerException) ce.getCause();
            assertEquals(1, e.getResponseCode());
            assertEquals("org.apache.rocketmq.acl.common.AclException: Check signature failed for accessKey=aclUser001, "
                + "org.apache.rocketmq.acl.plain.PlainPermissionManager.validate(PlainPermissionManager.java:622)", e.getErrorMessage());
        } finally {
            p.shutdown();
        }
    }
}
