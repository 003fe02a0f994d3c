package remoting

// Pop consumption request codes (Apache 5.x RequestCode.java): the broker
// hands out messages with an invisibility time and the client acknowledges
// them, instead of pulling by offset.
const (
	PopMessage                 int32 = 200050
	AckMessage                 int32 = 200051
	PeekMessage                int32 = 200052
	ChangeMessageInvisibleTime int32 = 200053
	Notification               int32 = 200054
	PollingInfo                int32 = 200055
	BatchAckMessage            int32 = 200151
)

// Pop response codes (Apache 5.x ResponseCode.java).
const (
	NoMessage      int32 = 208 // POP/PEEK found nothing (also pollTime over)
	PollingFull    int32 = 209 // too many pops parked on the queue
	PollingTimeout int32 = 210 // a parked pop or notification expired
)
