package remoting

// Request codes (Apache RequestCode.java). Only the ones rocketgo serves or sends
// are named; the rest still travel as plain numbers.
const (
	SendMessage                   int32 = 10
	PullMessage                   int32 = 11
	QueryMessage                  int32 = 12
	QueryConsumerOffset           int32 = 14
	UpdateConsumerOffset          int32 = 15
	UpdateAndCreateTopic          int32 = 17
	GetAllTopicConfig             int32 = 21
	UpdateBrokerConfig            int32 = 25
	GetBrokerConfig               int32 = 26
	GetBrokerRuntimeInfo          int32 = 28
	SearchOffsetByTimestamp       int32 = 29
	GetMaxOffset                  int32 = 30
	GetMinOffset                  int32 = 31
	GetEarliestMsgStoreTime       int32 = 32
	ViewMessageByID               int32 = 33
	HeartBeat                     int32 = 34
	UnregisterClient              int32 = 35
	ConsumerSendMsgBack           int32 = 36
	EndTransaction                int32 = 37
	GetConsumerListByGroup        int32 = 38
	CheckTransactionState         int32 = 39
	NotifyConsumerIDsChanged      int32 = 40
	LockBatchMQ                   int32 = 41
	UnlockBatchMQ                 int32 = 42
	GetAllConsumerOffset          int32 = 43
	GetAllDelayOffset             int32 = 45
	CheckClientConfig             int32 = 46
	GetTimerCheckPoint            int32 = 60
	GetTimerMetrics               int32 = 61
	PutKVConfig                   int32 = 100
	GetKVConfig                   int32 = 101
	DeleteKVConfig                int32 = 102
	RegisterBroker                int32 = 103
	UnregisterBroker              int32 = 104
	GetRouteInfoByTopic           int32 = 105
	GetBrokerClusterInfo          int32 = 106
	UpdateAndCreateSubscription   int32 = 200
	GetAllSubscriptionGroupConfig int32 = 201
	GetAllTopicListFromNameServer int32 = 206
	GetAllMessageRequestMode      int32 = 402
	GetBrokerHAStatus             int32 = 907
	DeleteSubscriptionGroup       int32 = 207
	DeleteTopicInBroker           int32 = 215
	DeleteTopicInNamesrv          int32 = 216
	GetKVListByNamespace          int32 = 219
	GetTopicsByCluster            int32 = 224
	SendMessageV2                 int32 = 310
	SendBatchMessage              int32 = 320
	QueryDataVersion              int32 = 322
	SendReplyMessage              int32 = 324
	SendReplyMessageV2            int32 = 325
	LitePullMessage               int32 = 361
	GetSystemTopicListFromNS      int32 = 304
	GetUnitTopicList              int32 = 311
	GetHasUnitSubTopicList        int32 = 312
	GetHasUnitSubUnunitTopicList  int32 = 313
	RegisterTopicInNamesrv        int32 = 217
	GetTopicConfig                int32 = 351
	GetSubscriptionGroupConfig    int32 = 352
)

// Response codes (Apache ResponseCode.java / RemotingSysResponseCode.java).
const (
	Success                   int32 = 0
	SystemError               int32 = 1
	SystemBusy                int32 = 2
	RequestCodeNotSupported   int32 = 3
	FlushDiskTimeout          int32 = 10
	SlaveNotAvailable         int32 = 11
	FlushSlaveTimeout         int32 = 12
	MessageIllegal            int32 = 13
	ServiceNotAvailable       int32 = 14
	NoPermission              int32 = 16
	TopicNotExist             int32 = 17
	PullNotFound              int32 = 19
	PullRetryImmediately      int32 = 20
	PullOffsetMoved           int32 = 21
	QueryNotFound             int32 = 22
	SubscriptionParseFailed   int32 = 23
	SubscriptionNotExist      int32 = 24
	SubscriptionNotLatest     int32 = 25
	SubscriptionGroupNotExist int32 = 26
	InvalidParameter          int32 = 29
	ConsumerNotOnline         int32 = 206
	ConsumeMsgTimeout         int32 = 207
	IllegalOperation          int32 = 604 // 5.x: END_TRANSACTION past CHECK_IMMUNITY_TIME_IN_SECONDS
)
