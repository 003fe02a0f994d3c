// PushConsumer runs one Apache Java push consumer (the reference classpath's
// client) for TestMQAdminTable's commands that ask a consumer through the
// broker (consumerStatus): clustering, from the first offset, every message
// of the subscription consumed; it prints its client id once started and
// runs until its stdin ends.
//
//	java -cp <reference classpath> PushConsumer.java NSADDR GROUP TOPIC EXPRESSION
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;

public class PushConsumer {
    public static void main(String[] args) throws Exception {
        DefaultMQPushConsumer c = new DefaultMQPushConsumer(args[1]);
        c.setNamesrvAddr(args[0]);
        c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        // offsets reach the broker within a second, not the default five
        c.setPersistConsumerOffsetInterval(1000);
        c.subscribe(args[2], args[3]);
        c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> ConsumeConcurrentlyStatus.CONSUME_SUCCESS);
        c.start();
        System.out.println(c.getDefaultMQPushConsumerImpl().getmQClientFactory().getClientId());
        System.out.flush();
        while (System.in.read() >= 0) {
        }
        c.shutdown();
    }
}
