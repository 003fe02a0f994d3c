// MQAdminBatch runs many Apache mqadmin commands in one JVM, for
// TestMQAdminGo: each stdin line is one command's arguments, separated by
// tabs; its stdout is what MQAdminStartup printed, a newline and the END
// line. One
// JVM instead of one per command: the JVM start costs more than a command.
//
//	java -cp <rocketmq-tools 5.3.3 classpath> MQAdminBatch.java
import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

import org.apache.rocketmq.tools.command.MQAdminStartup;

public class MQAdminBatch {
    static final String END = "@@mqadmin-batch-end@@";

    public static void main(String[] ignored) throws Exception {
        PrintStream real = System.out;
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line; (line = in.readLine()) != null; ) {
            ByteArrayOutputStream buf = new ByteArrayOutputStream();
            System.setOut(new PrintStream(buf, true, "UTF-8"));
            try {
                MQAdminStartup.main0(line.split("\t", -1), null);
            } catch (Throwable t) {
                t.printStackTrace(); // on stderr, as the tool's own failures
            } finally {
                System.out.flush();
                System.setOut(real);
            }
            real.write(buf.toByteArray());
            real.print("\n" + END + "\n"); // on a line of its own: output may lack a final newline
            real.flush();
        }
    }
}
