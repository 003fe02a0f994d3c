package io.rocketgo.compat;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.function.BooleanSupplier;

import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

/** Settings passed by compat-tests/java_test.go as system properties, and shared helpers. */
final class Env {
    static final String NAMESRV = required("namesrv");
    /** Unique per mvn run: client line + serialization, prefixed to every topic and group. */
    static final String RUN = required("run");
    static final String CLUSTER = required("cluster");
    static final String BROKER_NAME = required("brokerName");
    static final String BROKER_ADDR = required("brokerAddr");
    /** Topics the Go side fills before (go2java) and reads after (java2go) this run. */
    static final String GO2JAVA = required("go2javaTopic");
    static final String JAVA2GO = required("java2goTopic");
    static final int MIXED_COUNT = 5;
    /** The 5.x client line (5.x moved the protocol classes from common.protocol to remoting.protocol). */
    static final boolean IS5 = classExists("org.apache.rocketmq.remoting.protocol.heartbeat.MessageModel");

    private Env() {}

    private static String required(String key) {
        String v = System.getProperty(key);
        if (v == null || v.isEmpty()) {
            throw new IllegalStateException("system property " + key + " not set (run through compat-tests/java_test.go)");
        }
        return v;
    }

    private static boolean classExists(String name) {
        try {
            Class.forName(name, false, Env.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException e) {
            return false;
        }
    }

    static String name(String what) {
        return what + "-" + RUN;
    }

    /** Polls cond every 50 ms until it holds or timeout passes; fails with what. */
    static void waitFor(Duration timeout, String what, BooleanSupplier cond) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!cond.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                fail("timed out after " + timeout + " waiting for " + what);
            }
            Thread.sleep(50);
        }
    }

    /** A message whose fields all derive from (scenario, i), so any receiver can check it. */
    static Message message(String topic, String scenario, int i) {
        Message m = new Message(topic, i % 2 == 0 ? "TagA" : "TagB", "key-" + scenario + "-" + i,
                body(scenario, i).getBytes(java.nio.charset.StandardCharsets.UTF_8));
        m.putUserProperty("seq", Integer.toString(i));
        m.putUserProperty("scenario", scenario);
        m.putUserProperty("unicode", "\u00fc-\u00e9-\u4e2d");
        return m;
    }

    static String body(String scenario, int i) {
        return "body-" + scenario + "-" + i;
    }

    static void checkMessage(MessageExt m, String scenario) {
        String body = new String(m.getBody(), java.nio.charset.StandardCharsets.UTF_8);
        int i = Integer.parseInt(m.getUserProperty("seq"));
        assertEquals(body(scenario, i), body, "body");
        assertEquals(i % 2 == 0 ? "TagA" : "TagB", m.getTags(), "tags of " + body);
        assertEquals("key-" + scenario + "-" + i, m.getKeys(), "keys of " + body);
        assertEquals(scenario, m.getUserProperty("scenario"), "property scenario of " + body);
        assertEquals("\u00fc-\u00e9-\u4e2d", m.getUserProperty("unicode"), "property unicode of " + body);
        assertEquals(m.getTopic(), m.getTopic());
    }

    /** The mixed-client message i (Go and Java build the same one). */
    static Map<String, String> mixedProps(String side, int i) {
        Map<String, String> p = new HashMap<>();
        p.put("color", side + "-" + i);
        p.put("x-unicode", "\u00fc\u4e2d");
        return p;
    }
}
