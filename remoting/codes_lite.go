package remoting

// Lite-topic request codes (Apache 5.5 RequestCode.java, RIP-83). A lite
// topic is a light message queue (LMQ) under a parent topic of message type
// LITE; these codes subscribe clients to lite topics, pop from them and
// inspect them.
const (
	PopLiteMessage        int32 = 200070
	LiteSubscriptionCtl   int32 = 200071
	AckLiteMessage        int32 = 200072 // defined by Apache, never registered: lite acks use ACK_MESSAGE
	NotifyUnsubscribeLite int32 = 200073 // broker → client, one way
	GetBrokerLiteInfo     int32 = 200074
	GetParentTopicInfo    int32 = 200075
	GetLiteTopicInfo      int32 = 200076
	GetLiteClientInfo     int32 = 200077
	GetLiteGroupInfo      int32 = 200078
	TriggerLiteDispatch   int32 = 200079
)

// Lite-topic response codes (Apache 5.5 ResponseCode.java).
const (
	// LmqQuotaExceeded: a send would create a light message queue beyond
	// maxLmqConsumeQueueNum.
	LmqQuotaExceeded int32 = 2017
	// LiteSubscriptionQuotaExceeded: the broker holds maxLiteSubscriptionCount
	// (client, lite topic) subscriptions.
	LiteSubscriptionQuotaExceeded int32 = 2018
)
