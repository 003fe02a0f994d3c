package io.rocketgo.compat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.LocalTransactionState;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.client.producer.TransactionListener;
import org.apache.rocketmq.client.producer.TransactionMQProducer;
import org.apache.rocketmq.client.producer.TransactionSendResult;
import org.apache.rocketmq.common.TopicConfig;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.tools.admin.DefaultMQAdminExt;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Transactional messages (issue #13) with the official Java TransactionMQProducer, run by
 * compat-tests/java_test.go (TestJavaTransactions) for 4.9.8 and 5.3.3, against rocketgo and,
 * with ROCKETGO_TX_TARGETS=...apache, against Apache's broker: the same assertions hold for both.
 * Every consumed message is checked to be committed, once, never before the producer committed it;
 * every rolled-back one never delivered; every check counted. The broker restarts are done by the Go
 * side on request (a file under txDir).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class TransactionTest {
    static final Duration WAIT = Duration.ofSeconds(60);
    static final long HOLD_MS = 200; // executeLocalTransaction's time before COMMIT: an early delivery shows
    static final LocalTransactionState C = LocalTransactionState.COMMIT_MESSAGE;
    static final LocalTransactionState R = LocalTransactionState.ROLLBACK_MESSAGE;
    static final LocalTransactionState U = LocalTransactionState.UNKNOW;
    static final String ID = "compat_id";
    /** The broker under test is Apache's (java_test.go passes txTarget). */
    static final boolean APACHE = "apache".equals(System.getProperty("txTarget"));

    /** One message: the listener's answers and what the test expects. */
    static final class Expect {
        String scenario;
        LocalTransactionState exec;
        LocalTransactionState[] answers = {};
        boolean commit;
        int checks;
        String checker; // instance every check must reach, or null
        boolean normal; // a plain send
        boolean throwInExec;
    }

    record Check(long at, String by) {}

    record Delivery(long at, String topic, int queueId, long queueOffset) {}

    private final Map<String, Expect> want = new ConcurrentHashMap<>();
    private final Map<String, Long> prepared = new ConcurrentHashMap<>();
    private final Map<String, Long> decided = new ConcurrentHashMap<>();
    private final Map<String, List<Check>> checks = new ConcurrentHashMap<>();
    private final Map<String, Integer> gated = new ConcurrentHashMap<>();
    private final Set<String> closed = ConcurrentHashMap.newKeySet();
    private final Map<String, List<Delivery>> got = new ConcurrentHashMap<>();
    private final List<String> problems = new CopyOnWriteArrayList<>();
    private final List<Runnable> cleanups = new ArrayList<>();
    /** Producers of the running test, shut down after it: a later check of its messages finds none. */
    private final List<TransactionMQProducer> producers = new ArrayList<>();
    private final Set<String> wasGated = ConcurrentHashMap.newKeySet();
    private DefaultMQAdminExt admin;
    private String topic;

    @BeforeAll
    void start() throws Exception {
        admin = new DefaultMQAdminExt();
        admin.setNamesrvAddr(Env.NAMESRV);
        admin.setInstanceName(Env.name("txadmin"));
        admin.start();
        topic = Env.name("tx");
        admin.createAndUpdateTopicConfig(Env.BROKER_ADDR, new TopicConfig(topic, 4, 4, 6));
        Env.waitFor(WAIT, "route of " + topic, () -> {
            try {
                return !admin.examineTopicRouteInfo(topic).getQueueDatas().isEmpty();
            } catch (Exception e) {
                return false;
            }
        });
        startConsumer();
    }

    private DefaultMQPushConsumer consumer;
    private int consumers;

    /**
     * Starts a member of the test's consumer group. The restart scenarios replace it around the broker
     * restart: a 4.9.8 client's pull parked on the closed connection fails only at its own time-out
     * (~30 s), with either broker, which would only measure the client.
     */
    private void startConsumer() throws Exception {
        DefaultMQPushConsumer c = new DefaultMQPushConsumer(Env.name("txcg"));
        c.setNamesrvAddr(Env.NAMESRV);
        c.setInstanceName(Env.name("txcons" + consumers++));
        c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        c.setHeartbeatBrokerInterval(2000);
        c.setPersistConsumerOffsetInterval(1000);
        c.subscribe(topic, "*");
        c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            long now = System.currentTimeMillis();
            for (MessageExt m : msgs) {
                String id = m.getUserProperty(ID);
                got.computeIfAbsent(id == null ? "?" : id, k -> new CopyOnWriteArrayList<>())
                        .add(new Delivery(now, m.getTopic(), m.getQueueId(), m.getQueueOffset()));
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        c.start();
        cleanups.add(c::shutdown);
        consumer = c;
    }

    @AfterAll
    void stop() {
        for (int i = cleanups.size() - 1; i >= 0; i--) {
            try {
                cleanups.get(i).run();
            } catch (RuntimeException ignored) {
                // already shut down
            }
        }
        admin.shutdown();
    }

    @AfterEach
    void shutdownProducers() {
        for (TransactionMQProducer p : producers) {
            p.shutdown();
        }
        producers.clear();
    }

    final class Listener implements TransactionListener {
        final String name;

        Listener(String name) {
            this.name = name;
        }

        @Override
        public LocalTransactionState executeLocalTransaction(Message m, Object arg) {
            String id = m.getUserProperty(ID);
            Expect e = want.get(id);
            prepared.put(id, System.currentTimeMillis());
            if (e.throwInExec) {
                throw new IllegalStateException("local transaction of " + id + " failed (on purpose)");
            }
            if (e.exec == C) {
                sleep(HOLD_MS);
            }
            if (e.exec != U) {
                decided.putIfAbsent(id, System.currentTimeMillis());
            }
            return e.exec;
        }

        @Override
        public LocalTransactionState checkLocalTransaction(MessageExt m) {
            long now = System.currentTimeMillis();
            String id = m.getUserProperty(ID);
            Expect e = id == null ? null : want.get(id);
            if (e == null) {
                problems.add("check of a message this test did not send: " + m);
                return U;
            }
            // Apache sends the half message back with its real topic restored.
            if (!topic.equals(m.getTopic()) || !("tx-" + id).equals(new String(m.getBody(), StandardCharsets.UTF_8))) {
                problems.add("check of " + id + ": topic " + m.getTopic() + " body " + new String(m.getBody(), StandardCharsets.UTF_8));
            }
            synchronized (TransactionTest.this) {
                if (closed.contains(e.scenario)) {
                    gated.merge(id, 1, Integer::sum);
                    return U;
                }
                List<Check> cs = checks.computeIfAbsent(id, k -> new CopyOnWriteArrayList<>());
                cs.add(new Check(now, name));
                // A transaction decided at once answers the local truth if checked.
                LocalTransactionState ans = e.answers.length == 0 ? e.exec
                        : e.answers[Math.min(cs.size(), e.answers.length) - 1];
                if (ans != U) {
                    decided.putIfAbsent(id, now);
                }
                return ans;
            }
        }
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }

    private TransactionMQProducer producer(String group, String instance) throws Exception {
        TransactionMQProducer p = new TransactionMQProducer(group);
        p.setNamesrvAddr(Env.NAMESRV);
        p.setInstanceName(instance);
        p.setSendMsgTimeout(10_000);
        // Only a registered producer can be checked: heartbeat often.
        p.setHeartbeatBrokerInterval(1000);
        p.setTransactionListener(new Listener(instance));
        p.start();
        producers.add(p);
        return p;
    }

    private static Expect expect(String scenario, LocalTransactionState exec, boolean commit, int checks,
                                 LocalTransactionState... answers) {
        Expect e = new Expect();
        e.scenario = scenario;
        e.exec = exec;
        e.commit = commit;
        e.checks = checks;
        e.answers = answers;
        return e;
    }

    private void send(TransactionMQProducer p, String id, Expect e) throws Exception {
        want.put(id, e);
        Message m = new Message(topic, e.scenario, id, ("tx-" + id).getBytes(StandardCharsets.UTF_8));
        m.putUserProperty(ID, id);
        TransactionSendResult r = p.sendMessageInTransaction(m, null);
        assertEquals(SendStatus.SEND_OK, r.getSendStatus(), "send status of " + id);
        assertEquals(e.throwInExec ? U : e.exec, r.getLocalTransactionState(), "local state of " + id);
    }

    /**
     * Makes a producer checkable: only a producer whose heartbeat reached the broker can be checked, and
     * the 5.x client heartbeats a broker only once a send taught it the broker's address. The warm-up is
     * rolled back at once; its checks are not counted (right after a kill -9 restart Apache may check a
     * message answered a second before).
     */
    private void register(TransactionMQProducer p, String group, String inst) throws Exception {
        Expect warm = expect("warm", R, false, -1);
        send(p, "warm-" + inst, warm);
        waitProducers(group, inst);
    }

    /** Waits until the broker's connections of group are exactly the instances. */
    private void waitProducers(String group, String... instances) throws Exception {
        long deadline = System.nanoTime() + WAIT.toNanos();
        String last = "";
        while (true) {
            try {
                Set<String> ids = new HashSet<>();
                admin.examineProducerConnectionInfo(group, topic).getConnectionSet().forEach(c -> ids.add(c.getClientId()));
                last = ids.toString();
                boolean all = ids.size() == instances.length;
                for (String inst : instances) {
                    all = all && ids.stream().anyMatch(id -> id.contains("@" + inst));
                }
                if (all) {
                    return;
                }
            } catch (Exception ex) {
                last = ex.toString();
            }
            if (System.nanoTime() > deadline) {
                fail("producer connections of " + group + " never became " + String.join(",", instances) + " (last: " + last + ")");
            }
            Thread.sleep(100);
        }
    }

    private void waitResolved(String scenario) throws Exception {
        Env.waitFor(WAIT, "scenario " + scenario + " resolved", () -> {
            for (Map.Entry<String, Expect> en : want.entrySet()) {
                Expect e = en.getValue();
                if (!e.scenario.equals(scenario)) {
                    continue;
                }
                if (e.commit && !got.containsKey(en.getKey())) {
                    return false;
                }
                if (checks.getOrDefault(en.getKey(), List.of()).size() < e.checks) {
                    return false;
                }
            }
            return true;
        });
    }

    @Test
    @Order(1)
    void commit() throws Exception {
        TransactionMQProducer p = producer(Env.name("pgtxc"), Env.name("txc"));
        for (int i = 0; i < 3; i++) {
            send(p, "commit-" + i, expect("commit", C, true, 0));
        }
        waitResolved("commit");
    }

    @Test
    @Order(2)
    void rollback() throws Exception {
        TransactionMQProducer p = producer(Env.name("pgtxr"), Env.name("txr"));
        for (int i = 0; i < 3; i++) {
            send(p, "rollback-" + i, expect("rollback", R, false, 0));
        }
        send(p, "rollback-sentinel", expect("rollback", C, true, 0));
        waitResolved("rollback");
    }

    @Test
    @Order(3)
    void unknownThenCommit() throws Exception {
        String group = Env.name("pgtxuc"), inst = Env.name("txuc");
        TransactionMQProducer p = producer(group, inst);
        register(p, group, inst);
        for (int i = 0; i < 2; i++) {
            send(p, "ucommit-" + i, expect("ucommit", U, true, 1, C));
        }
        send(p, "ucommit-twice", expect("ucommit", U, true, 2, U, C));
        waitResolved("ucommit");
    }

    @Test
    @Order(4)
    void unknownThenRollback() throws Exception {
        String group = Env.name("pgtxur"), inst = Env.name("txur");
        TransactionMQProducer p = producer(group, inst);
        register(p, group, inst);
        for (int i = 0; i < 2; i++) {
            send(p, "urollback-" + i, expect("urollback", U, false, 1, R));
        }
        send(p, "urollback-twice", expect("urollback", U, false, 2, U, R));
        waitResolved("urollback");
    }

    /** An exception in executeLocalTransaction leaves the transaction unknown: it is checked. */
    @Test
    @Order(5)
    void listenerThrows() throws Exception {
        String group = Env.name("pgtxth"), inst = Env.name("txth");
        TransactionMQProducer p = producer(group, inst);
        register(p, group, inst);
        Expect commit = expect("throws", C, true, 1, C);
        commit.throwInExec = true;
        send(p, "throws-commit", commit);
        Expect rollback = expect("throws", R, false, 1, R);
        rollback.throwInExec = true;
        send(p, "throws-rollback", rollback);
        waitResolved("throws");
    }

    /** The first member prepares and leaves; the check reaches the second. */
    @Test
    @Order(6)
    void producerReplaced() throws Exception {
        String group = Env.name("pgtxrep"), first = Env.name("txrep1"), second = Env.name("txrep2");
        closed.add("replaced");
        wasGated.add("replaced");
        TransactionMQProducer p1 = producer(group, first);
        Expect c = expect("replaced", U, true, 1, C);
        c.checker = second;
        send(p1, "replaced-commit", c);
        Expect r = expect("replaced", U, false, 1, R);
        r.checker = second;
        send(p1, "replaced-rollback", r);
        p1.shutdown();
        register(producer(group, second), group, second);
        synchronized (this) {
            closed.remove("replaced");
        }
        waitResolved("replaced");
    }

    @Test
    @Order(7)
    void mixed() throws Exception {
        String group = Env.name("pgtxmix"), inst = Env.name("txmix");
        TransactionMQProducer p = producer(group, inst);
        register(p, group, inst);
        DefaultMQProducer plain = new DefaultMQProducer(Env.name("pgplain"));
        plain.setNamesrvAddr(Env.NAMESRV);
        plain.setInstanceName(Env.name("txplain"));
        plain.start();
        cleanups.add(plain::shutdown);
        for (int i = 0; i < 4; i++) {
            String id = "mixed-plain-" + i;
            Expect n = expect("mixed", C, true, 0);
            n.normal = true;
            want.put(id, n);
            Message m = new Message(topic, "mixed", id, ("plain-" + id).getBytes(StandardCharsets.UTF_8));
            m.putUserProperty(ID, id);
            assertEquals(SendStatus.SEND_OK, plain.send(m).getSendStatus());
            switch (i % 3) {
                case 0 -> send(p, "mixed-commit-" + i, expect("mixed", C, true, 0));
                case 1 -> send(p, "mixed-rollback-" + i, expect("mixed", R, false, 0));
                default -> send(p, "mixed-unknown-" + i, expect("mixed", U, true, 1, C));
            }
        }
        waitResolved("mixed");
    }

    @Test
    @Order(8)
    void restartGraceful() throws Exception {
        restart("restart-term", "term");
    }

    @Test
    @Order(9)
    void restartKill9() throws Exception {
        restart("restart-kill", "kill");
    }

    /** Prepared before the broker restart, resolved after it by checks alone. */
    private void restart(String scenario, String how) throws Exception {
        String dir = System.getProperty("txDir", "");
        if (dir.isEmpty()) {
            org.junit.jupiter.api.Assumptions.abort("no txDir: the Go side does not restart the broker");
        }
        String group = Env.name("pgtx" + how), before = Env.name("txrs1" + how), after = Env.name("txrs2" + how);
        closed.add(scenario);
        wasGated.add(scenario);
        TransactionMQProducer p1 = producer(group, before);
        for (int i = 0; i < 4; i++) {
            boolean commit = i % 2 == 0;
            send(p1, scenario + "-" + i, expect(scenario, U, commit, 1, commit ? C : R));
        }
        p1.shutdown();
        consumer.shutdown();
        Path done = Path.of(dir, "restart-done-" + how);
        Files.writeString(Path.of(dir, "restart-request-" + how + ".tmp"), how);
        Files.move(Path.of(dir, "restart-request-" + how + ".tmp"), Path.of(dir, "restart-request-" + how));
        Env.waitFor(Duration.ofSeconds(180), "broker restart (" + how + ") by the Go side", () -> Files.exists(done));
        String err = Files.readString(done);
        assertTrue(err.isEmpty(), "restart failed: " + err);
        startConsumer();
        register(producer(group, after), group, after);
        synchronized (this) {
            closed.remove(scenario);
        }
        Env.waitFor(Duration.ofSeconds(120), "scenario " + scenario + " resolved", () -> {
            for (Map.Entry<String, Expect> en : want.entrySet()) {
                Expect e = en.getValue();
                if (e.scenario.equals(scenario) && (e.commit && !got.containsKey(en.getKey())
                        || checks.getOrDefault(en.getKey(), List.of()).size() < e.checks)) {
                    return false;
                }
            }
            return true;
        });
    }

    /** After a quiet period of a few check intervals: every message as expected, and the figures. */
    @Test
    @Order(100)
    void verifyAll() throws Exception {
        Thread.sleep(4000);
        List<String> errors = new ArrayList<>(problems);
        List<Long> toDelivery = new ArrayList<>(), toCheck = new ArrayList<>();
        int sent = 0, delivered = 0;
        for (Map.Entry<String, Expect> en : new TreeMap<>(want).entrySet()) {
            String id = en.getKey();
            Expect e = en.getValue();
            List<Delivery> ds = got.getOrDefault(id, List.of());
            Set<String> positions = new HashSet<>();
            for (Delivery d : ds) {
                positions.add(d.queueId() + "/" + d.queueOffset());
                if (!topic.equals(d.topic())) {
                    errors.add(id + " delivered with topic " + d.topic());
                }
            }
            if (!e.normal) {
                sent++;
            }
            // Apache's race, not rocketgo's (which writes the op record before it answers and ends a
            // transaction once): Apache 5.x writes the op record of an END_TRANSACTION up to
            // transactionOpBatchInterval later, so a check run may ask about a message already answered,
            // and it stores a commit per COMMIT answer. On the apache target such extra checks are
            // reported, with one more queue position each, not failed.
            List<Check> cs = checks.getOrDefault(id, List.of());
            int extra = 0;
            if (APACHE && e.checks >= 0 && cs.size() > e.checks) {
                extra = cs.size() - e.checks;
                System.out.println("apache race: " + id + " checked " + extra + " more time(s) after it was answered, delivered at "
                        + positions.size() + " positions");
            }
            if (e.commit && (positions.isEmpty() || positions.size() > 1 + extra)) {
                errors.add(id + " (committed) delivered at " + positions.size() + " queue positions " + positions);
            }
            if (!e.commit && !ds.isEmpty()) {
                errors.add(id + " (rolled back) delivered " + ds.size() + " times");
            }
            boolean timed = !e.normal && !wasGated.contains(e.scenario);
            if (e.commit && !e.normal && !ds.isEmpty()) {
                delivered++;
                Long d = decided.get(id);
                long first = ds.stream().mapToLong(Delivery::at).min().getAsLong();
                if (d == null) {
                    errors.add(id + " delivered but never committed by the producer");
                } else if (first < d) {
                    errors.add(id + " delivered " + (d - first) + " ms before the producer committed it");
                } else if (timed) {
                    toDelivery.add(first - d);
                }
            }
            if (!e.normal && e.checks >= 0 && cs.size() != e.checks + extra) {
                errors.add(id + " checked " + cs.size() + " times, want " + e.checks);
            }
            for (Check c : cs) {
                if (e.checker != null && !e.checker.equals(c.by())) {
                    errors.add(id + " checked by " + c.by() + ", want " + e.checker);
                }
            }
            if (timed && e.checks > 0 && !cs.isEmpty() && prepared.containsKey(id)) {
                toCheck.add(cs.get(0).at() - prepared.get(id));
            }
        }
        String stats = "TXSTATS sent=" + sent + " delivered=" + delivered + " deliveryMs=" + join(toDelivery)
                + " checkMs=" + join(toCheck);
        System.out.println(stats);
        String dir = System.getProperty("txDir", "");
        if (!dir.isEmpty()) {
            Files.writeString(Path.of(dir, "txstats"), stats + "\n"); // read by java_test's report
        }
        if (!errors.isEmpty()) {
            fail(errors.size() + " problems:\n" + String.join("\n", errors));
        }
    }

    private static String join(List<Long> xs) {
        StringBuilder b = new StringBuilder();
        for (Long x : xs) {
            b.append(b.length() == 0 ? "" : ",").append(x);
        }
        return b.toString();
    }
}
