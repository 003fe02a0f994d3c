package gen;

import java.io.FileInputStream;
import java.io.InputStream;
import java.io.PrintWriter;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.rocketmq.broker.BrokerController;
import org.apache.rocketmq.client.QueryResult;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.common.BrokerConfig;
import org.apache.rocketmq.common.MQVersion;
import org.apache.rocketmq.common.MixAll;
import org.apache.rocketmq.common.TopicConfig;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.remoting.netty.NettyClientConfig;
import org.apache.rocketmq.remoting.netty.NettyServerConfig;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.store.config.MessageStoreConfig;

/**
 * Opens a store directory written by rocketgo with the Apache RocketMQ 5.3.1
 * broker (in-process) and consumes it with the Java push consumer; rocketgo's
 * compat test (compat-tests/apache_interop_test.go) compares the output.
 *
 * args: brokerConf group topics(comma) expect outPath queryTopic queryKey viewTopic viewMsgId
 *
 * brokerConf is the broker.properties rocketgo's mqbroker ran with (same
 * keys for both brokers: BrokerConfig, NettyServerConfig, MessageStoreConfig).
 * The group subscribes every topic "*" (CONSUME_FROM_FIRST_OFFSET); once
 * expect distinct messages arrived and 2 s passed without a new one, the
 * output is written. Output lines, tab-separated:
 *   TOPIC name readQueues writeQueues perm
 *   QUEUE topic queueId minOffset maxOffset committedOffset(group)
 *   PHY minPhyOffset maxPhyOffset
 *   MSG id topic queueId queueOffset tags keys userProps bodyLen bodySha256 reconsumeTimes msgId
 *   QUERY key id...        (QUERY_MESSAGE by key: Apache's index files)
 *   VIEW msgId id          (viewMessage by offset message id: commit log read at a physical offset)
 *   DONE received deliveries
 */
public class ReadBack {
    static final String ID_PROP = "interop_id";

    public static void main(String[] args) throws Exception {
        // What BrokerStartup does: without it the broker's first requests
        // carry version 0 and the name server reads the registration body in
        // the pre-3.0.11 format (no topics: no routes until the client's
        // classes set the property and the broker registers again 10 s later).
        System.setProperty(RemotingCommand.REMOTING_VERSION_KEY, Integer.toString(MQVersion.CURRENT_VERSION));
        System.setProperty("rocketmq.client.rebalance.waitInterval", "1000");
        String confPath = args[0];
        String group = args[1];
        String[] topics = args[2].split(",");
        int expect = Integer.parseInt(args[3]);
        String outPath = args[4];
        String queryTopic = args[5];
        String queryKey = args[6];
        String viewTopic = args[7];
        String viewMsgId = args[8];

        Properties props = new Properties();
        try (InputStream in = new FileInputStream(confPath)) {
            props.load(in);
        }
        BrokerConfig bc = new BrokerConfig();
        NettyServerConfig ns = new NettyServerConfig();
        NettyClientConfig nc = new NettyClientConfig();
        MessageStoreConfig sc = new MessageStoreConfig();
        MixAll.properties2Object(props, bc);
        MixAll.properties2Object(props, ns);
        MixAll.properties2Object(props, nc);
        MixAll.properties2Object(props, sc);
        sc.setStorePathCommitLog(sc.getStorePathRootDir() + "/commitlog");
        sc.setHaListenPort(ns.getListenPort() + 1);
        String nsAddr = bc.getNamesrvAddr();

        List<String> out = new ArrayList<>();
        long t0 = System.currentTimeMillis();
        BrokerController b = new BrokerController(bc, ns, nc, sc);
        if (!b.initialize()) {
            throw new IllegalStateException("Apache broker initialize (store load) failed for " + sc.getStorePathRootDir());
        }
        for (Map.Entry<String, TopicConfig> e : new TreeMap<>(b.getTopicConfigManager().getTopicConfigTable()).entrySet()) {
            TopicConfig tc = e.getValue();
            out.add("TOPIC\t" + e.getKey() + "\t" + tc.getReadQueueNums() + "\t" + tc.getWriteQueueNums() + "\t" + tc.getPerm());
        }
        for (String topic : topics) {
            TopicConfig tc = b.getTopicConfigManager().selectTopicConfig(topic);
            int n = tc == null ? 0 : tc.getReadQueueNums();
            for (int q = 0; q < n; q++) {
                out.add("QUEUE\t" + topic + "\t" + q + "\t" + b.getMessageStore().getMinOffsetInQueue(topic, q) + "\t"
                    + b.getMessageStore().getMaxOffsetInQueue(topic, q) + "\t"
                    + b.getConsumerOffsetManager().queryOffset(group, topic, q));
            }
        }
        out.add("PHY\t" + b.getMessageStore().getMinPhyOffset() + "\t" + b.getMessageStore().getMaxPhyOffset());
        b.start();
        System.out.println("apache broker started in " + (System.currentTimeMillis() - t0) + " ms");
        registered(b, topics);
        System.out.println("apache broker routes in the name server after " + (System.currentTimeMillis() - t0) + " ms");

        Map<String, Integer> seen = new ConcurrentHashMap<>();
        AtomicInteger deliveries = new AtomicInteger();
        List<String> msgLines = java.util.Collections.synchronizedList(new ArrayList<>());
        AtomicLong lastNew = new AtomicLong(System.currentTimeMillis());
        DefaultMQPushConsumer c = new DefaultMQPushConsumer(group);
        c.setNamesrvAddr(nsAddr);
        c.setInstanceName("readback-" + ProcessHandle.current().pid());
        c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        // Routes, heartbeats (the consumer id list) and rebalance every
        // second, not every 20-30 s, should anything be late.
        c.setPollNameServerInterval(1000);
        c.setHeartbeatBrokerInterval(1000);
        for (String topic : topics) {
            c.subscribe(topic, "*");
        }
        c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            for (MessageExt m : msgs) {
                msgLines.add(msgLine(m));
                deliveries.incrementAndGet();
                if (seen.merge(String.valueOf(m.getProperty(ID_PROP)), 1, Integer::sum) == 1) {
                    lastNew.set(System.currentTimeMillis());
                }
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        c.start();

        long deadline = System.currentTimeMillis() + 60_000;
        while (System.currentTimeMillis() < deadline
            && (seen.size() < expect || System.currentTimeMillis() - lastNew.get() < 2000)) {
            TimeUnit.MILLISECONDS.sleep(100);
        }
        System.out.println("consumed " + seen.size() + " of " + expect + " in " + (System.currentTimeMillis() - t0) + " ms");
        out.addAll(msgLines);

        // Apache's IndexFile lookup of a key written by rocketgo.
        QueryResult qr = c.queryMessage(queryTopic, queryKey, 32, 0, Long.MAX_VALUE);
        StringBuilder q = new StringBuilder("QUERY\t" + queryKey);
        for (MessageExt m : qr.getMessageList()) {
            q.append('\t').append(m.getProperty(ID_PROP));
        }
        out.add(q.toString());
        MessageExt v = c.viewMessage(viewTopic, viewMsgId);
        out.add("VIEW\t" + viewMsgId + "\t" + (v == null ? "-" : v.getProperty(ID_PROP)));
        out.add("DONE\t" + seen.size() + "\t" + deliveries.get());
        try (PrintWriter w = new PrintWriter(outPath, "UTF-8")) {
            out.forEach(w::println);
        }
        // No b.shutdown(): Apache's takes ~20 s of thread joins, and the
        // store is thrown away.
        System.exit(0);
    }

    /** Waits until the name server routes every topic to b, registering again if not. */
    static void registered(BrokerController b, String[] topics) throws Exception {
        long deadline = System.currentTimeMillis() + 20_000;
        for (;;) {
            try {
                for (String topic : topics) {
                    b.getBrokerOuterAPI().getTopicRouteInfoFromNameServer(topic, 3000);
                }
                return;
            } catch (Exception e) {
                if (System.currentTimeMillis() > deadline) {
                    throw new IllegalStateException("no name server route to the Apache broker", e);
                }
            }
            TimeUnit.MILLISECONDS.sleep(200);
            b.registerBrokerAll(true, false, true);
        }
    }

    static String msgLine(MessageExt m) {
        TreeMap<String, String> user = new TreeMap<>();
        m.getProperties().forEach((k, val) -> {
            if (k.startsWith("u_")) {
                user.put(k, val);
            }
        });
        StringBuilder u = new StringBuilder();
        user.forEach((k, val) -> u.append(u.length() == 0 ? "" : ",").append(k).append('=').append(val));
        return "MSG\t" + m.getProperty(ID_PROP) + "\t" + m.getTopic() + "\t" + m.getQueueId() + "\t" + m.getQueueOffset()
            + "\t" + m.getTags() + "\t" + m.getKeys() + "\t" + u + "\t" + m.getBody().length + "\t" + sha256(m.getBody())
            + "\t" + m.getReconsumeTimes() + "\t" + m.getMsgId();
    }

    static String sha256(byte[] b) {
        try {
            StringBuilder s = new StringBuilder();
            for (byte x : MessageDigest.getInstance("SHA-256").digest(b)) {
                s.append(String.format("%02x", x));
            }
            return s.toString();
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
