package io.rocketgo.compat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
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
import org.apache.rocketmq.tools.command.MQAdminStartup;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Message trace with the client's own hooks (enableMsgTrace): a producer and a
 * push consumer with trace on, then mqadmin's queryMsgTraceById for each
 * message. Run by compat-tests/trace_test.go once per client line, against
 * rocketgo and the Apache reference in the same JVM (a JVM start costs more
 * than the scenario); it prints what the Go side compares: "MSG target case i
 * msgId offsetMsgId" lines and each queryMsgTraceById output between markers.
 * The trace records themselves are read and decoded by the Go side.
 *
 * System properties: traceTargets ("name=namesrv,name=namesrv"), traceCases
 * ("case=traceTopic,...": an empty traceTopic is the client's default
 * RMQ_SYS_TRACE_TOPIC); the topic sent to is trace-biz-RUN-case, created by
 * the Go side on every target.
 */
class TraceTest {
    static final int COUNT = 3;

    @Test
    void producerAndPushConsumer() throws Exception {
        for (String tg : System.getProperty("traceTargets").split(",")) {
            String[] t = tg.split("=", 2);
            for (String cs : System.getProperty("traceCases").split(",")) {
                String[] c = cs.split("=", -1);
                scenario(t[0], t[1], c[0], c[1].isEmpty() ? null : c[1]);
            }
        }
    }

    static void scenario(String target, String namesrv, String cas, String custom) throws Exception {
        String topic = "trace-biz-" + Env.RUN + "-" + cas;
        String tag = target + " " + cas;
        DefaultMQProducer producer = new DefaultMQProducer(Env.name("trace-pg-" + cas), true, custom);
        producer.setNamesrvAddr(namesrv);
        producer.setInstanceName(Env.name("trace-prod-" + target + "-" + cas));
        producer.start();
        List<String> ids = new ArrayList<>();
        try {
            for (int i = 0; i < COUNT; i++) {
                Message m = new Message(topic, "TagT", "tkey-" + i + " tkey2-" + i,
                        ("trace-body-" + i).getBytes(StandardCharsets.UTF_8));
                SendResult r = producer.send(m);
                assertEquals(SendStatus.SEND_OK, r.getSendStatus(), tag + ": send " + i);
                ids.add(r.getMsgId());
                System.out.println("MSG " + tag + " " + i + " " + r.getMsgId() + " " + r.getOffsetMsgId());
            }

            Set<String> seen = ConcurrentHashMap.newKeySet();
            DefaultMQPushConsumer consumer = new DefaultMQPushConsumer(Env.name("trace-cg-" + cas), true, custom);
            consumer.setNamesrvAddr(namesrv);
            consumer.setInstanceName(Env.name("trace-cons-" + target + "-" + cas));
            consumer.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
            consumer.subscribe(topic, "*");
            consumer.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
                for (MessageExt m : msgs) {
                    seen.add(m.getMsgId());
                }
                return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
            });
            consumer.start();
            try {
                Env.waitFor(Duration.ofSeconds(60), tag + ": the push consumer to get " + COUNT + " messages",
                        () -> seen.containsAll(ids));
                // With the clients still running: the trace dispatcher sends a
                // batch when it is full or 5 s old (5.x; 4.9 every 500 ms), and
                // a send left in flight at shutdown may be lost (the first one
                // to a trace topic nothing created goes through the TBW102
                // route). queryMsgTraceById reads the trace topic's index.
                for (String id : ids) {
                    queryTrace(tag, namesrv, custom, id);
                }
            } finally {
                consumer.shutdown();
            }
        } finally {
            producer.shutdown();
        }
    }

    /**
     * Runs queryMsgTraceById until it shows the producer and the consumer (or
     * 30 s pass) and prints what it printed last: the Go side compares it.
     */
    static void queryTrace(String tag, String namesrv, String custom, String id) throws InterruptedException {
        List<String> args = new ArrayList<>(List.of("queryMsgTraceById", "-n", namesrv, "-i", id));
        if (custom != null) {
            args.add("-t");
            args.add(custom);
        }
        String out;
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        do {
            out = mqadmin(args.toArray(new String[0]));
            if (out.contains("Pub ") && out.contains("Sub ")) {
                break;
            }
            Thread.sleep(200);
        } while (System.nanoTime() < deadline);
        System.out.println("@@trace-begin " + tag + " " + id);
        System.out.print(out);
        System.out.println("@@trace-end");
    }

    /** Runs one mqadmin command and returns what it printed (stdout and stderr). */
    static String mqadmin(String... args) {
        PrintStream out = System.out;
        PrintStream err = System.err;
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        PrintStream capture = new PrintStream(buf, true, StandardCharsets.UTF_8);
        System.setOut(capture);
        System.setErr(capture);
        try {
            MQAdminStartup.main0(args, null);
        } finally {
            System.setOut(out);
            System.setErr(err);
        }
        return buf.toString(StandardCharsets.UTF_8);
    }
}
