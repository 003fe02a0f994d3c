package auth

// annotated is RequestHeaderRegistry with each header's @RocketMQAction
// and @RocketMQResource (5.3.3's remoting module, read from the sources):
// the codes DefaultAuthorizationContextBuilder does not special-case
// are authorized from it. A code absent here is not authorized at all
// (only authenticated), as in Apache: GET_BROKER_RUNTIME_INFO among
// others (requests.go gives UPDATE_BROKER_CONFIG and the subscription
// group writes, which Apache leaves out too, a resource of their own).
type annotation struct {
	// typ is the annotation's resource: Cluster names the broker's
	// cluster when no field gives a resource; Topic and Group without
	// fields give nothing (Apache builds no resource for them).
	typ     ResourceType
	actions []Action
	fields  []annotatedField // the header class's own fields, in order
}

// annotatedField is a header field carrying a resource name; with a
// splitter, several (StringUtils.split: any of its characters).
type annotatedField struct {
	key      string
	typ      ResourceType
	splitter string
}

var annotated = map[int32]annotation{
	10:     {0, []Action{ActionPub}, []annotatedField{{"topic", TypeTopic, ""}}},                                                                    // SEND_MESSAGE
	11:     {0, []Action{ActionSub}, []annotatedField{{"consumerGroup", TypeGroup, ""}, {"topic", TypeTopic, ""}}},                                  // PULL_MESSAGE
	12:     {0, []Action{ActionSub, ActionGet}, []annotatedField{{"topic", TypeTopic, ""}}},                                                         // QUERY_MESSAGE
	14:     {0, []Action{ActionGet}, []annotatedField{{"consumerGroup", TypeGroup, ""}, {"topic", TypeTopic, ""}}},                                  // QUERY_CONSUMER_OFFSET
	15:     {0, []Action{ActionSub}, []annotatedField{{"consumerGroup", TypeGroup, ""}, {"topic", TypeTopic, ""}}},                                  // UPDATE_CONSUMER_OFFSET
	17:     {0, []Action{ActionCreate}, []annotatedField{{"topic", TypeTopic, ""}}},                                                                 // UPDATE_AND_CREATE_TOPIC
	18:     {0, []Action{ActionCreate}, nil},                                                                                                        // UPDATE_AND_CREATE_TOPIC_LIST
	21:     {TypeTopic, []Action{ActionList}, nil},                                                                                                  // GET_ALL_TOPIC_CONFIG
	29:     {0, []Action{ActionGet}, []annotatedField{{"topic", TypeTopic, ""}}},                                                                    // SEARCH_OFFSET_BY_TIMESTAMP
	30:     {0, []Action{ActionGet}, []annotatedField{{"topic", TypeTopic, ""}}},                                                                    // GET_MAX_OFFSET
	31:     {0, []Action{ActionGet}, []annotatedField{{"topic", TypeTopic, ""}}},                                                                    // GET_MIN_OFFSET
	32:     {0, []Action{ActionGet}, []annotatedField{{"topic", TypeTopic, ""}}},                                                                    // GET_EARLIEST_MSG_STORETIME
	33:     {0, []Action{ActionGet}, []annotatedField{{"topic", TypeTopic, ""}}},                                                                    // VIEW_MESSAGE_BY_ID
	34:     {TypeGroup, []Action{ActionPub, ActionSub}, nil},                                                                                        // HEART_BEAT
	35:     {0, []Action{ActionPub, ActionSub}, []annotatedField{{"consumerGroup", TypeGroup, ""}}},                                                 // UNREGISTER_CLIENT
	36:     {0, []Action{ActionSub}, []annotatedField{{"group", TypeGroup, ""}, {"originTopic", TypeTopic, ""}}},                                    // CONSUMER_SEND_MSG_BACK
	37:     {0, []Action{ActionPub}, []annotatedField{{"topic", TypeTopic, ""}}},                                                                    // END_TRANSACTION
	38:     {0, []Action{ActionSub}, []annotatedField{{"consumerGroup", TypeGroup, ""}}},                                                            // GET_CONSUMER_LIST_BY_GROUP
	39:     {0, []Action{ActionPub}, []annotatedField{{"topic", TypeTopic, ""}}},                                                                    // CHECK_TRANSACTION_STATE
	40:     {0, []Action{ActionSub}, []annotatedField{{"consumerGroup", TypeGroup, ""}}},                                                            // NOTIFY_CONSUMER_IDS_CHANGED
	41:     {0, []Action{ActionSub}, nil},                                                                                                           // LOCK_BATCH_MQ
	42:     {0, []Action{ActionSub}, nil},                                                                                                           // UNLOCK_BATCH_MQ
	100:    {TypeCluster, []Action{ActionUpdate}, nil},                                                                                              // PUT_KV_CONFIG
	101:    {TypeCluster, []Action{ActionGet}, nil},                                                                                                 // GET_KV_CONFIG
	102:    {TypeCluster, []Action{ActionUpdate}, nil},                                                                                              // DELETE_KV_CONFIG
	103:    {TypeCluster, []Action{ActionUpdate}, []annotatedField{{"clusterName", TypeCluster, ""}}},                                               // REGISTER_BROKER
	104:    {TypeCluster, []Action{ActionUpdate}, []annotatedField{{"clusterName", TypeCluster, ""}}},                                               // UNREGISTER_BROKER
	105:    {TypeCluster, []Action{ActionGet}, nil},                                                                                                 // GET_ROUTEINFO_BY_TOPIC
	202:    {0, []Action{ActionGet}, []annotatedField{{"topic", TypeTopic, ""}}},                                                                    // GET_TOPIC_STATS_INFO
	203:    {0, []Action{ActionGet}, []annotatedField{{"consumerGroup", TypeGroup, ""}}},                                                            // GET_CONSUMER_CONNECTION_LIST
	204:    {TypeCluster, []Action{ActionGet}, nil},                                                                                                 // GET_PRODUCER_CONNECTION_LIST
	205:    {TypeCluster, []Action{ActionUpdate}, nil},                                                                                              // WIPE_WRITE_PERM_OF_BROKER
	207:    {0, []Action{ActionDelete}, []annotatedField{{"groupName", TypeGroup, ""}}},                                                             // DELETE_SUBSCRIPTIONGROUP
	208:    {0, []Action{ActionGet}, []annotatedField{{"consumerGroup", TypeGroup, ""}, {"topic", TypeTopic, ""}, {"topicList", TypeTopic, ";"}}},   // GET_CONSUME_STATS
	215:    {0, []Action{ActionDelete}, []annotatedField{{"topic", TypeTopic, ""}}},                                                                 // DELETE_TOPIC_IN_BROKER
	216:    {TypeCluster, []Action{ActionUpdate}, []annotatedField{{"clusterName", TypeCluster, ""}}},                                               // DELETE_TOPIC_IN_NAMESRV
	217:    {TypeCluster, []Action{ActionUpdate}, nil},                                                                                              // REGISTER_TOPIC_IN_NAMESRV
	219:    {TypeCluster, []Action{ActionGet}, nil},                                                                                                 // GET_KVLIST_BY_NAMESPACE
	222:    {0, []Action{ActionUpdate}, []annotatedField{{"group", TypeGroup, ""}, {"topic", TypeTopic, ""}}},                                       // INVOKE_BROKER_TO_RESET_OFFSET
	223:    {0, []Action{ActionGet}, []annotatedField{{"topic", TypeTopic, ""}, {"group", TypeGroup, ""}}},                                          // INVOKE_BROKER_TO_GET_CONSUMER_STATUS
	224:    {TypeTopic, []Action{ActionList}, nil},                                                                                                  // GET_TOPICS_BY_CLUSTER
	300:    {0, []Action{ActionGet}, []annotatedField{{"topic", TypeTopic, ""}}},                                                                    // QUERY_TOPIC_CONSUME_BY_WHO
	303:    {0, []Action{ActionGet}, []annotatedField{{"topic", TypeTopic, ""}, {"group", TypeGroup, ""}}},                                          // QUERY_CONSUME_TIME_SPAN
	307:    {0, []Action{ActionGet}, []annotatedField{{"consumerGroup", TypeGroup, ""}}},                                                            // GET_CONSUMER_RUNNING_INFO
	308:    {0, []Action{ActionGet}, []annotatedField{{"filterGroups", TypeGroup, ","}, {"compareGroup", TypeGroup, ""}, {"topic", TypeTopic, ""}}}, // QUERY_CORRECTION_OFFSET
	309:    {0, []Action{ActionSub}, []annotatedField{{"consumerGroup", TypeGroup, ""}, {"topic", TypeTopic, ""}}},                                  // CONSUME_MESSAGE_DIRECTLY
	310:    {0, []Action{ActionPub}, []annotatedField{{"b", TypeTopic, ""}}},                                                                        // SEND_MESSAGE_V2
	314:    {0, []Action{ActionUpdate}, []annotatedField{{"destGroup", TypeGroup, ""}, {"topic", TypeTopic, ""}}},                                   // CLONE_GROUP_OFFSET
	315:    {TypeCluster, []Action{ActionGet}, nil},                                                                                                 // VIEW_BROKER_STATS_DATA
	317:    {TypeCluster, []Action{ActionGet}, nil},                                                                                                 // GET_BROKER_CONSUME_STATS
	321:    {0, []Action{ActionGet}, []annotatedField{{"topic", TypeTopic, ""}, {"consumerGroup", TypeGroup, ""}}},                                  // QUERY_CONSUME_QUEUE
	322:    {TypeCluster, []Action{ActionGet}, []annotatedField{{"clusterName", TypeCluster, ""}}},                                                  // QUERY_DATA_VERSION
	323:    {0, []Action{ActionUpdate}, []annotatedField{{"topic", TypeTopic, ""}}},                                                                 // RESUME_CHECK_HALF_MESSAGE
	326:    {0, []Action{ActionSub}, []annotatedField{{"producerGroup", TypeGroup, ""}, {"topic", TypeTopic, ""}}},                                  // PUSH_REPLY_MESSAGE_TO_CLIENT
	327:    {TypeCluster, []Action{ActionUpdate}, nil},                                                                                              // ADD_WRITE_PERM_OF_BROKER
	328:    {TypeCluster, []Action{ActionGet}, nil},                                                                                                 // GET_ALL_PRODUCER_INFO
	343:    {0, []Action{ActionGet}, []annotatedField{{"group", TypeGroup, ""}}},                                                                    // QUERY_TOPICS_BY_CONSUMER
	345:    {0, []Action{ActionGet}, []annotatedField{{"group", TypeGroup, ""}, {"topic", TypeTopic, ""}}},                                          // QUERY_SUBSCRIPTION_BY_CONSUMER
	351:    {0, []Action{ActionGet}, []annotatedField{{"topic", TypeTopic, ""}}},                                                                    // GET_TOPIC_CONFIG
	352:    {0, []Action{ActionGet}, []annotatedField{{"group", TypeGroup, ""}}},                                                                    // GET_SUBSCRIPTIONGROUP_CONFIG
	353:    {0, []Action{ActionUpdate}, []annotatedField{{"group", TypeGroup, ""}, {"topic", TypeTopic, ""}}},                                       // UPDATE_AND_GET_GROUP_FORBIDDEN
	354:    {0, []Action{ActionGet}, []annotatedField{{"topic", TypeTopic, ""}}},                                                                    // CHECK_ROCKSDB_CQ_WRITE_PROGRESS
	355:    {TypeCluster, []Action{ActionGet}, nil},                                                                                                 // EXPORT_ROCKSDB_CONFIG_TO_JSON
	370:    {0, []Action{ActionPub}, []annotatedField{{"topic", TypeTopic, ""}}},                                                                    // RECALL_MESSAGE
	901:    {0, []Action{ActionGet}, []annotatedField{{"clusterName", TypeCluster, ""}}},                                                            // GET_BROKER_MEMBER_GROUP
	902:    {TypeCluster, []Action{ActionUpdate}, nil},                                                                                              // ADD_BROKER
	903:    {TypeCluster, []Action{ActionUpdate}, []annotatedField{{"brokerClusterName", TypeCluster, ""}}},                                         // REMOVE_BROKER
	904:    {TypeCluster, []Action{ActionUpdate}, []annotatedField{{"clusterName", TypeCluster, ""}}},                                               // BROKER_HEARTBEAT
	905:    {TypeCluster, []Action{ActionUpdate}, nil},                                                                                              // NOTIFY_MIN_BROKER_ID_CHANGE
	906:    {TypeCluster, []Action{ActionUpdate}, nil},                                                                                              // EXCHANGE_BROKER_HA_INFO
	908:    {TypeCluster, []Action{ActionUpdate}, nil},                                                                                              // RESET_MASTER_FLUSH_OFFSET
	1001:   {TypeCluster, []Action{ActionUpdate}, nil},                                                                                              // CONTROLLER_ALTER_SYNC_STATE_SET
	1002:   {TypeCluster, []Action{ActionUpdate}, []annotatedField{{"clusterName", TypeCluster, ""}}},                                               // CONTROLLER_ELECT_MASTER
	1003:   {TypeCluster, []Action{ActionUpdate}, []annotatedField{{"clusterName", TypeCluster, ""}}},                                               // CONTROLLER_REGISTER_BROKER
	1004:   {TypeCluster, []Action{ActionGet}, nil},                                                                                                 // CONTROLLER_GET_REPLICA_INFO
	1008:   {TypeCluster, []Action{ActionUpdate}, nil},                                                                                              // NOTIFY_BROKER_ROLE_CHANGED
	1011:   {TypeCluster, []Action{ActionUpdate}, []annotatedField{{"clusterName", TypeCluster, ""}}},                                               // CLEAN_BROKER_DATA
	1012:   {TypeCluster, []Action{ActionGet}, []annotatedField{{"clusterName", TypeCluster, ""}}},                                                  // CONTROLLER_GET_NEXT_BROKER_ID
	1013:   {TypeCluster, []Action{ActionUpdate}, []annotatedField{{"clusterName", TypeCluster, ""}}},                                               // CONTROLLER_APPLY_BROKER_ID
	3001:   {TypeCluster, []Action{ActionUpdate}, nil},                                                                                              // AUTH_CREATE_USER
	3002:   {TypeCluster, []Action{ActionUpdate}, nil},                                                                                              // AUTH_UPDATE_USER
	3003:   {TypeCluster, []Action{ActionUpdate}, nil},                                                                                              // AUTH_DELETE_USER
	3004:   {TypeCluster, []Action{ActionGet}, nil},                                                                                                 // AUTH_GET_USER
	3005:   {TypeCluster, []Action{ActionGet}, nil},                                                                                                 // AUTH_LIST_USER
	3006:   {TypeCluster, []Action{ActionUpdate}, nil},                                                                                              // AUTH_CREATE_ACL
	3007:   {TypeCluster, []Action{ActionUpdate}, nil},                                                                                              // AUTH_UPDATE_ACL
	3008:   {TypeCluster, []Action{ActionUpdate}, nil},                                                                                              // AUTH_DELETE_ACL
	3009:   {TypeCluster, []Action{ActionGet}, nil},                                                                                                 // AUTH_GET_ACL
	3010:   {TypeCluster, []Action{ActionGet}, nil},                                                                                                 // AUTH_LIST_ACL
	200050: {0, []Action{ActionSub}, []annotatedField{{"consumerGroup", TypeGroup, ""}, {"topic", TypeTopic, ""}}},                                  // POP_MESSAGE
	200051: {0, []Action{ActionSub}, []annotatedField{{"consumerGroup", TypeGroup, ""}, {"topic", TypeTopic, ""}}},                                  // ACK_MESSAGE
	200052: {0, []Action{ActionSub}, []annotatedField{{"topic", TypeTopic, ""}, {"consumerGroup", TypeGroup, ""}}},                                  // PEEK_MESSAGE
	200053: {0, []Action{ActionSub}, []annotatedField{{"consumerGroup", TypeGroup, ""}, {"topic", TypeTopic, ""}}},                                  // CHANGE_MESSAGE_INVISIBLETIME
	200054: {0, []Action{ActionSub}, []annotatedField{{"consumerGroup", TypeGroup, ""}, {"topic", TypeTopic, ""}}},                                  // NOTIFICATION
	200055: {0, []Action{ActionGet}, []annotatedField{{"consumerGroup", TypeGroup, ""}, {"topic", TypeTopic, ""}}},                                  // POLLING_INFO
	// POP_LITE_MESSAGE: Apache 5.5 annotates its resources but no action,
	// so it authorizes nothing; rocketgo asks what POP_MESSAGE asks.
	200070: {0, []Action{ActionSub}, []annotatedField{{"consumerGroup", TypeGroup, ""}, {"topic", TypeTopic, ""}}}, // POP_LITE_MESSAGE
}
