// Package v2 is the gRPC API of the RocketMQ 5.x SDKs (proto package
// apache.rocketmq.v2: the messages, MessagingService and Admin), generated
// by make protos from the .proto files in apis/proto, which are those of
// github.com/apache/rocketmq-apis at tag v2.1.2 (commit
// 68c2cc9442928f769f8938515a05af6fa05c9993), the source of the Maven
// artifact org.apache.rocketmq:rocketmq-proto:2.1.2.
package v2
