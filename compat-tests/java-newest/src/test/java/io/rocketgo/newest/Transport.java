package io.rocketgo.newest;

import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.apache.rocketmq.client.apis.ClientConfiguration;

/**
 * A transport the cases run over (plain, or tls: ClientConfiguration.enableSsl),
 * named in -Dtransports, with its own endpoint, topic and groups in
 * -D&lt;transport&gt;.&lt;key&gt;. The Go side starts the servers, creates the
 * topics and groups, and checks which transport each endpoint saw.
 */
record Transport(String name, boolean ssl) {
    static String global(String k) {
        String v = System.getProperty(k);
        assertNotNull(v, "-D" + k + " not set");
        return v;
    }

    String prop(String k) {
        return global(name + "." + k);
    }

    ClientConfiguration config() {
        return ClientConfiguration.newBuilder().setEndpoints(prop("proxy")).enableSsl(ssl)
            .setRequestTimeout(Duration.ofSeconds(10)).build();
    }

    interface Case {
        void run(Transport t) throws Exception;
    }

    /** Runs c over every transport at once; the first failure is thrown, the others suppressed in it. */
    static void each(Case c) throws Exception {
        List<Transport> ts = new ArrayList<>();
        for (String name : global("transports").split(",")) {
            ts.add(new Transport(name, name.equals("tls")));
        }
        ExecutorService ex = Executors.newFixedThreadPool(ts.size());
        try {
            List<Future<?>> fs = new ArrayList<>();
            for (Transport t : ts) {
                fs.add(ex.submit(() -> {
                    c.run(t);
                    return null;
                }));
            }
            Throwable first = null;
            for (Future<?> f : fs) {
                try {
                    f.get();
                } catch (ExecutionException e) {
                    if (first == null) {
                        first = e.getCause();
                    } else {
                        first.addSuppressed(e.getCause());
                    }
                }
            }
            if (first instanceof Error e) {
                throw e;
            }
            if (first instanceof Exception e) {
                throw e;
            }
        } finally {
            ex.shutdownNow();
        }
    }
}
