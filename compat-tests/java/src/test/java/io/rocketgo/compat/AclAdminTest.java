package io.rocketgo.compat;

import java.nio.charset.StandardCharsets;

import org.apache.rocketmq.client.exception.MQClientException;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.PlainAccessConfig;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.protocol.body.ClusterAclVersionInfo;
import org.apache.rocketmq.tools.admin.DefaultMQAdminExt;
import org.junit.jupiter.api.Test;

import static io.rocketgo.compat.AclTest.hook;
import static io.rocketgo.compat.AclTest.producer;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * ACL 1.0's admin commands of the 4.9.8 tools (DefaultMQAdminExt): 5.3.3's dropped them, and the rmq5
 * profile does not compile this class.
 */
class AclAdminTest {
    /**
     * ACL 1.0's admin codes through DefaultMQAdminExt: an admin creates an account (usable at once), reads the
     * version, updates the global white list, deletes the account (refused at once); a user may not.
     */
    @Test
    void adminCodes() throws Exception {
        DefaultMQAdminExt admin = new DefaultMQAdminExt(hook("aclAdmin01", "adminSecret01"));
        admin.setNamesrvAddr(Env.NAMESRV);
        admin.setInstanceName(Env.name("acl-codes-admin"));
        admin.start();
        DefaultMQAdminExt user = new DefaultMQAdminExt(hook("aclUser001", "userSecret001"));
        user.setNamesrvAddr(Env.NAMESRV);
        user.setInstanceName(Env.name("acl-codes-user"));
        user.start();
        try {
            PlainAccessConfig pac = new PlainAccessConfig();
            pac.setAccessKey("aclJava001");
            pac.setSecretKey("javaSecret01");
            pac.setDefaultTopicPerm("DENY");
            pac.setTopicPerms(java.util.List.of("AclTopic=PUB"));
            MQClientException denied = assertThrows(MQClientException.class,
                () -> user.createAndUpdatePlainAccessConfig(Env.BROKER_ADDR, pac));
            assertEquals(1, denied.getResponseCode());
            assertTrue(denied.getErrorMessage().contains("Need admin permission for request code=50, but accessKey=aclUser001 is not"),
                denied.getErrorMessage());

            if ("apache".equals(System.getProperty("aclTarget"))) {
                // Apache 5.3.1 no longer sends allAclFileVersion, which the 4.9.8 client reads unchecked.
                assertThrows(NullPointerException.class, () -> admin.examineBrokerClusterAclVersionInfo(Env.BROKER_ADDR));
                admin.createAndUpdatePlainAccessConfig(Env.BROKER_ADDR, pac);
            } else {
                long before = admin.examineBrokerClusterAclVersionInfo(Env.BROKER_ADDR).getAclConfigDataVersion()
                    .getCounter().longValue();
                admin.createAndUpdatePlainAccessConfig(Env.BROKER_ADDR, pac);
                ClusterAclVersionInfo info = admin.examineBrokerClusterAclVersionInfo(Env.BROKER_ADDR);
                assertEquals(Env.BROKER_NAME, info.getBrokerName());
                assertEquals(Env.BROKER_ADDR, info.getBrokerAddr());
                assertEquals(Env.CLUSTER, info.getClusterName());
                assertEquals(before + 1, info.getAclConfigDataVersion().getCounter().longValue());
            }

            DefaultMQProducer p = producer("acl-new", hook("aclJava001", "javaSecret01"));
            try {
                assertEquals(SendStatus.SEND_OK, p.send(new Message("AclTopic", "TagJ", "new".getBytes(StandardCharsets.UTF_8))).getSendStatus());
            } finally {
                p.shutdown();
            }

            admin.updateGlobalWhiteAddrConfig(Env.BROKER_ADDR, "10.10.103.*,10.10.104.*",
                System.getProperty("aclHome") + "/conf/plain_acl.yml");

            admin.deletePlainAccessConfig(Env.BROKER_ADDR, "aclJava001");
            DefaultMQProducer gone = producer("acl-gone", hook("aclJava001", "javaSecret01"));
            try {
                MQClientException ce = assertThrows(MQClientException.class,
                    () -> gone.send(new Message("AclTopic", "TagJ", "gone".getBytes(StandardCharsets.UTF_8))));
                assertTrue(String.valueOf(ce.getCause()).contains("No acl config for aclJava001"), String.valueOf(ce.getCause()));
            } finally {
                gone.shutdown();
            }
            MQClientException again = assertThrows(MQClientException.class,
                () -> admin.deletePlainAccessConfig(Env.BROKER_ADDR, "aclJava001"));
            assertEquals(210, again.getResponseCode());
        } finally {
            admin.shutdown();
            user.shutdown();
        }
    }
}
