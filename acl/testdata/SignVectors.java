// Generates signed-*.hex: requests signed by Apache's 4.9.8 client hook
// (AclClientRPCHook), encoded by its RemotingCommand. Run once with the
// rmq4 classpath of compat-tests/java:
//   java -cp "$(cat cp4.txt)" SignVectors.java
// The vectors are captured, never regenerated.
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.apache.rocketmq.acl.common.AclClientRPCHook;
import org.apache.rocketmq.acl.common.SessionCredentials;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;

public class SignVectors {
    static void dump(String name, RemotingCommand req) throws Exception {
        ByteBuffer bb = req.encode();
        byte[] b = new byte[bb.remaining()];
        bb.get(b);
        StringBuilder sb = new StringBuilder();
        for (int i = 4; i < b.length; i++) { // without the length field
            sb.append(String.format("%02x", b[i]));
            if ((i - 3) % 32 == 0) sb.append('\n');
        }
        java.nio.file.Files.writeString(java.nio.file.Path.of(name), sb.toString() + "\n");
    }

    public static void main(String[] args) throws Exception {
        AclClientRPCHook hook = new AclClientRPCHook(new SessionCredentials("rocketgoAK", "rocketgoSecret"));
        RemotingCommand send = RemotingCommand.createRequestCommand(310, null);
        send.addExtField("a", "PID_acl");
        send.addExtField("b", "TopicAcl");
        send.addExtField("c", "TBW102");
        send.addExtField("d", "4");
        send.addExtField("e", "1");
        send.addExtField("f", "0");
        send.addExtField("g", "1764547200000");
        send.addExtField("h", "0");
        send.addExtField("i", "KEYS\u0001k1\u0002UNIQ_KEY\u0001ABC\u0002");
        send.addExtField("j", "0");
        send.addExtField("k", "false");
        send.setBody("hello acl \u00fc".getBytes(StandardCharsets.UTF_8));
        hook.doBeforeRequest("127.0.0.1:10911", send);
        dump("signed-send-v2.hex", send);

        AclClientRPCHook tok = new AclClientRPCHook(new SessionCredentials("rocketgoAK", "rocketgoSecret", "token-123"));
        RemotingCommand pull = RemotingCommand.createRequestCommand(11, null);
        pull.addExtField("consumerGroup", "GID_acl");
        pull.addExtField("topic", "TopicAcl");
        pull.addExtField("queueId", "0");
        pull.addExtField("queueOffset", "0");
        pull.addExtField("maxMsgNums", "32");
        pull.addExtField("sysFlag", "2");
        pull.addExtField("commitOffset", "0");
        pull.addExtField("suspendTimeoutMillis", "15000");
        pull.addExtField("subVersion", "0");
        tok.doBeforeRequest("127.0.0.1:10911", pull);
        dump("signed-pull-token.hex", pull);

        RemotingCommand hb = RemotingCommand.createRequestCommand(34, null);
        hb.setBody("{\"clientID\":\"c1\",\"consumerDataSet\":[{\"groupName\":\"GID_acl\",\"subscriptionDataSet\":[{\"topic\":\"TopicAcl\",\"subString\":\"*\"}]}],\"producerDataSet\":[]}".getBytes(StandardCharsets.UTF_8));
        hook.doBeforeRequest("127.0.0.1:10911", hb);
        dump("signed-heartbeat.hex", hb);
    }
}
