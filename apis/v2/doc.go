// Package v2 is the gRPC API of the RocketMQ 5.x SDKs (proto package
// apache.rocketmq.v2: the messages, MessagingService and Admin), generated
// by make protos from the .proto files in apis/proto, which are those of
// github.com/apache/rocketmq-apis at tag v2.1.1 (commit
// 11087ada97c710253fae46eacb5b04738453c303), the source of the Maven
// artifact org.apache.rocketmq:rocketmq-proto:2.1.1.
package v2
