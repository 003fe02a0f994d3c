package remoting

// Admin request codes (mqadmin → broker, broker → client) added with the
// mqadmin compatibility work; see spec remoting.md §5.9–5.10.
const (
	UpdateAndCreateTopicList             int32 = 18
	GetTopicStatsInfo                    int32 = 202
	GetConsumerConnectionList            int32 = 203
	GetProducerConnectionList            int32 = 204
	GetConsumeStats                      int32 = 208
	ResetConsumerClientOffset            int32 = 220
	GetConsumerStatusFromClient          int32 = 221
	InvokeBrokerToResetOffset            int32 = 222
	InvokeBrokerToGetConsumerStatus      int32 = 223
	UpdateAndCreateSubscriptionGroupList int32 = 225
	QueryTopicConsumeByWho               int32 = 300
	QueryConsumeTimeSpan                 int32 = 303
	QueryConsumeQueue                    int32 = 321
	DeleteExpiredCommitLog               int32 = 329
	GetSystemTopicListFromBroker         int32 = 305
	CleanExpiredConsumeQueue             int32 = 306
	GetConsumerRunningInfo               int32 = 307
	QueryCorrectionOffset                int32 = 308
	ConsumeMessageDirectly               int32 = 309
	CloneGroupOffset                     int32 = 314
	ViewBrokerStatsData                  int32 = 315
	CleanUnusedTopic                     int32 = 316
	GetBrokerConsumeStats                int32 = 317
	GetAllProducerInfo                   int32 = 328
	QueryTopicsByConsumer                int32 = 343
	PopRollback                          int32 = 200056
	QuerySubscriptionByConsumer          int32 = 345
)
