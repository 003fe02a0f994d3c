package gen;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.rocketmq.broker.BrokerController;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.BrokerConfig;
import org.apache.rocketmq.common.TopicConfig;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.remoting.netty.NettyClientConfig;
import org.apache.rocketmq.remoting.netty.NettyServerConfig;
import org.apache.rocketmq.store.config.FlushDiskType;
import org.apache.rocketmq.store.config.MessageStoreConfig;

/**
 * Writes a small Apache RocketMQ 5.3.1 store for rocketgo's interop test.
 * args: storeDir namesrvAddr brokerPort manifestPath
 *
 * Phase 1 sends 40 messages to FixtureTopic (4 queues) with tags and keys,
 * a push consumer of group FixtureGroup consumes all of them and commits
 * its offsets; phase 2 sends 30 more (some large, so the 64 KiB commit log
 * rolls over; the client compresses bodies over 4 KiB) plus 10 to FixtureOther;
 * 100-entry index files roll over too. The broker then shuts down cleanly.
 * The manifest lists "phase topic queueId queueOffset uniqKey keys tags bodyLen".
 */
public class Gen {
    static final String TOPIC = "FixtureTopic";
    static final String OTHER = "FixtureOther";
    static final String GROUP = "FixtureGroup";

    public static void main(String[] args) throws Exception {
        String storeDir = args[0];
        String nsAddr = args[1];
        int port = Integer.parseInt(args[2]);
        String manifest = args[3];

        BrokerConfig bc = new BrokerConfig();
        bc.setBrokerName("apache-fixture");
        bc.setBrokerClusterName("FixtureCluster");
        bc.setBrokerIP1("127.0.0.1");
        bc.setNamesrvAddr(nsAddr);
        bc.setAutoCreateTopicEnable(true);
        bc.setEnablePropertyFilter(false);
        NettyServerConfig ns = new NettyServerConfig();
        ns.setListenPort(port);
        NettyClientConfig nc = new NettyClientConfig();
        MessageStoreConfig sc = new MessageStoreConfig();
        sc.setStorePathRootDir(storeDir);
        sc.setStorePathCommitLog(storeDir + "/commitlog");
        sc.setMappedFileSizeCommitLog(64 * 1024);
        sc.setMappedFileSizeConsumeQueue(50 * 20);
        sc.setMaxHashSlotNum(64);
        sc.setMaxIndexNum(100);
        sc.setFlushDiskType(FlushDiskType.SYNC_FLUSH);
        sc.setTimerWheelEnable(false);
        sc.setHaListenPort(port + 1);

        BrokerController b = new BrokerController(bc, ns, nc, sc);
        if (!b.initialize()) {
            throw new IllegalStateException("broker initialize failed");
        }
        b.getTopicConfigManager().updateTopicConfig(new TopicConfig(TOPIC, 4, 4, 6));
        b.getTopicConfigManager().updateTopicConfig(new TopicConfig(OTHER, 2, 2, 6));
        b.start();

        List<String> lines = new ArrayList<>();
        DefaultMQProducer p = new DefaultMQProducer("FixtureProducer");
        p.setNamesrvAddr(nsAddr);
        p.setSendMsgTimeout(10000);
        p.start();
        for (int i = 0; i < 40; i++) {
            send(p, lines, 1, TOPIC, i, 100);
        }

        CountDownLatch done = new CountDownLatch(40);
        DefaultMQPushConsumer c = new DefaultMQPushConsumer(GROUP);
        c.setNamesrvAddr(nsAddr);
        c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        c.subscribe(TOPIC, "*");
        c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            msgs.forEach(m -> done.countDown());
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        c.start();
        if (!done.await(60, TimeUnit.SECONDS)) {
            throw new IllegalStateException("consumer got " + (40 - done.getCount()) + " of 40");
        }
        c.shutdown(); // persists the offsets to the broker
        Thread.sleep(500);
        b.getConsumerOffsetManager().persist();

        for (int i = 40; i < 70; i++) {
            send(p, lines, 2, TOPIC, i, i % 10 == 0 ? 20000 : 300); // > 4 KiB: the client compresses it
        }
        for (int i = 0; i < 10; i++) {
            send(p, lines, 2, OTHER, i, 50);
        }
        p.shutdown();
        java.nio.file.Files.write(java.nio.file.Paths.get(manifest), lines);
        b.shutdown();
        System.out.println("fixture written: " + lines.size() + " messages");
        System.exit(0);
    }

    static void send(DefaultMQProducer p, List<String> lines, int phase, String topic, int i, int bodyLen) throws Exception {
        String tags = "Tag" + (char) ('A' + i % 3);
        String keys = "key-" + topic + "-" + i + " shared-" + (i % 5);
        StringBuilder body = new StringBuilder();
        java.util.Random rnd = new java.util.Random(i);
        while (body.length() < bodyLen) {
            body.append(topic).append('-').append(i).append(';');
            if (bodyLen > 4096) { // barely compressible, so the 64 KiB commit log rolls over
                for (int k = 0; k < 64; k++) {
                    body.append((char) ('0' + rnd.nextInt(64)));
                }
            }
        }
        Message m = new Message(topic, tags, keys, body.substring(0, bodyLen).getBytes("UTF-8"));
        m.putUserProperty("fixtureIndex", Integer.toString(i));
        SendResult r = null;
        for (int attempt = 0; r == null; attempt++) {
            try {
                r = p.send(m);
            } catch (org.apache.rocketmq.client.exception.MQClientException e) {
                if (attempt > 60) {
                    throw e;
                }
                Thread.sleep(500); // the route appears after the broker's first registration
            }
        }
        if (r.getSendStatus() != SendStatus.SEND_OK) {
            throw new IllegalStateException("send " + i + ": " + r);
        }
        lines.add(phase + " " + topic + " " + r.getMessageQueue().getQueueId() + " " + r.getQueueOffset() + " "
            + r.getMsgId() + " " + r.getOffsetMsgId() + " " + tags + " " + bodyLen + " " + keys.replace(' ', ','));
    }
}
