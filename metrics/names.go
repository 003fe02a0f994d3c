package metrics

import (
	"strconv"
	"strings"
)

// Apache's names for request codes, response codes and client versions, as
// its metrics label them: RemotingHelper.getRequestCodeDesc and
// getResponseCodeDesc (the RequestCode / ResponseCode field names in lower
// case; an unknown code is its number) and MQVersion.getVersionDesc (the
// Version enum's name at the ordinal a client sends; past the end, the
// last). Extracted from the Apache 5.3.3 sources.

var requestCodeNames = map[int32]string{
	10:     "send_message",
	11:     "pull_message",
	12:     "query_message",
	13:     "query_broker_offset",
	14:     "query_consumer_offset",
	15:     "update_consumer_offset",
	17:     "update_and_create_topic",
	18:     "update_and_create_topic_list",
	21:     "get_all_topic_config",
	22:     "get_topic_config_list",
	23:     "get_topic_name_list",
	25:     "update_broker_config",
	26:     "get_broker_config",
	27:     "trigger_delete_files",
	28:     "get_broker_runtime_info",
	29:     "search_offset_by_timestamp",
	30:     "get_max_offset",
	31:     "get_min_offset",
	32:     "get_earliest_msg_storetime",
	33:     "view_message_by_id",
	34:     "heart_beat",
	35:     "unregister_client",
	36:     "consumer_send_msg_back",
	37:     "end_transaction",
	38:     "get_consumer_list_by_group",
	39:     "check_transaction_state",
	40:     "notify_consumer_ids_changed",
	41:     "lock_batch_mq",
	42:     "unlock_batch_mq",
	43:     "get_all_consumer_offset",
	45:     "get_all_delay_offset",
	46:     "check_client_config",
	47:     "get_client_config",
	60:     "get_timer_check_point",
	61:     "get_timer_metrics",
	100:    "put_kv_config",
	101:    "get_kv_config",
	102:    "delete_kv_config",
	103:    "register_broker",
	104:    "unregister_broker",
	105:    "get_routeinfo_by_topic",
	106:    "get_broker_cluster_info",
	200:    "update_and_create_subscriptiongroup",
	201:    "get_all_subscriptiongroup_config",
	202:    "get_topic_stats_info",
	203:    "get_consumer_connection_list",
	204:    "get_producer_connection_list",
	205:    "wipe_write_perm_of_broker",
	206:    "get_all_topic_list_from_nameserver",
	207:    "delete_subscriptiongroup",
	208:    "get_consume_stats",
	209:    "suspend_consumer",
	210:    "resume_consumer",
	211:    "reset_consumer_offset_in_consumer",
	212:    "reset_consumer_offset_in_broker",
	213:    "adjust_consumer_thread_pool",
	214:    "who_consume_the_message",
	215:    "delete_topic_in_broker",
	216:    "delete_topic_in_namesrv",
	217:    "register_topic_in_namesrv",
	219:    "get_kvlist_by_namespace",
	220:    "reset_consumer_client_offset",
	221:    "get_consumer_status_from_client",
	222:    "invoke_broker_to_reset_offset",
	223:    "invoke_broker_to_get_consumer_status",
	224:    "get_topics_by_cluster",
	225:    "update_and_create_subscriptiongroup_list",
	300:    "query_topic_consume_by_who",
	301:    "register_filter_server",
	302:    "register_message_filter_class",
	303:    "query_consume_time_span",
	304:    "get_system_topic_list_from_ns",
	305:    "get_system_topic_list_from_broker",
	306:    "clean_expired_consumequeue",
	307:    "get_consumer_running_info",
	308:    "query_correction_offset",
	309:    "consume_message_directly",
	310:    "send_message_v2",
	311:    "get_unit_topic_list",
	312:    "get_has_unit_sub_topic_list",
	313:    "get_has_unit_sub_ununit_topic_list",
	314:    "clone_group_offset",
	315:    "view_broker_stats_data",
	316:    "clean_unused_topic",
	317:    "get_broker_consume_stats",
	318:    "update_namesrv_config",
	319:    "get_namesrv_config",
	320:    "send_batch_message",
	321:    "query_consume_queue",
	322:    "query_data_version",
	323:    "resume_check_half_message",
	324:    "send_reply_message",
	325:    "send_reply_message_v2",
	326:    "push_reply_message_to_client",
	327:    "add_write_perm_of_broker",
	328:    "get_all_producer_info",
	329:    "delete_expired_commitlog",
	343:    "query_topics_by_consumer",
	345:    "query_subscription_by_consumer",
	351:    "get_topic_config",
	352:    "get_subscriptiongroup_config",
	353:    "update_and_get_group_forbidden",
	354:    "check_rocksdb_cq_write_progress",
	355:    "export_rocksdb_config_to_json",
	361:    "lite_pull_message",
	370:    "recall_message",
	400:    "query_assignment",
	401:    "set_message_request_mode",
	402:    "get_all_message_request_mode",
	513:    "update_and_create_static_topic",
	901:    "get_broker_member_group",
	902:    "add_broker",
	903:    "remove_broker",
	904:    "broker_heartbeat",
	905:    "notify_min_broker_id_change",
	906:    "exchange_broker_ha_info",
	907:    "get_broker_ha_status",
	908:    "reset_master_flush_offset",
	1001:   "controller_alter_sync_state_set",
	1002:   "controller_elect_master",
	1003:   "controller_register_broker",
	1004:   "controller_get_replica_info",
	1005:   "controller_get_metadata_info",
	1006:   "controller_get_sync_state_data",
	1007:   "get_broker_epoch_cache",
	1008:   "notify_broker_role_changed",
	1009:   "update_controller_config",
	1010:   "get_controller_config",
	1011:   "clean_broker_data",
	1012:   "controller_get_next_broker_id",
	1013:   "controller_apply_broker_id",
	2001:   "update_cold_data_flow_ctr_config",
	2002:   "remove_cold_data_flow_ctr_config",
	2003:   "get_cold_data_flow_ctr_info",
	2004:   "set_commitlog_read_mode",
	3001:   "auth_create_user",
	3002:   "auth_update_user",
	3003:   "auth_delete_user",
	3004:   "auth_get_user",
	3005:   "auth_list_user",
	3006:   "auth_create_acl",
	3007:   "auth_update_acl",
	3008:   "auth_delete_acl",
	3009:   "auth_get_acl",
	3010:   "auth_list_acl",
	200050: "pop_message",
	200051: "ack_message",
	200052: "peek_message",
	200053: "change_message_invisibletime",
	200054: "notification",
	200055: "polling_info",
	200056: "pop_rollback",
	200151: "batch_ack_message",
}

var responseCodeNames = map[int32]string{
	-1006: "rpc_time_out",
	-1004: "rpc_send_to_channel_failed",
	-1002: "rpc_addr_is_null",
	-1000: "rpc_unknown",
	0:     "success",
	1:     "system_error",
	2:     "system_busy",
	3:     "request_code_not_supported",
	4:     "transaction_failed",
	10:    "flush_disk_timeout",
	11:    "slave_not_available",
	12:    "flush_slave_timeout",
	13:    "message_illegal",
	14:    "service_not_available",
	15:    "version_not_supported",
	16:    "no_permission",
	17:    "topic_not_exist",
	18:    "topic_exist_already",
	19:    "pull_not_found",
	20:    "pull_retry_immediately",
	21:    "pull_offset_moved",
	22:    "query_not_found",
	23:    "subscription_parse_failed",
	24:    "subscription_not_exist",
	25:    "subscription_not_latest",
	26:    "subscription_group_not_exist",
	27:    "filter_data_not_exist",
	28:    "filter_data_not_latest",
	29:    "invalid_parameter",
	200:   "transaction_should_commit",
	201:   "transaction_should_rollback",
	202:   "transaction_state_unknow",
	203:   "transaction_state_group_wrong",
	204:   "no_buyer_id",
	205:   "not_in_current_unit",
	206:   "consumer_not_online",
	207:   "consume_msg_timeout",
	208:   "no_message",
	209:   "polling_full",
	210:   "polling_timeout",
	211:   "broker_not_exist",
	212:   "broker_dispatch_not_complete",
	213:   "broadcast_consumption",
	215:   "flow_control",
	501:   "not_leader_for_queue",
	604:   "illegal_operation",
	1500:  "go_away",
	2000:  "controller_fenced_master_epoch",
	2001:  "controller_fenced_sync_state_set_epoch",
	2002:  "controller_invalid_master",
	2003:  "controller_invalid_replicas",
	2004:  "controller_master_not_available",
	2005:  "controller_invalid_request",
	2006:  "controller_broker_not_alive",
	2007:  "controller_not_leader",
	2008:  "controller_broker_metadata_not_exist",
	2009:  "controller_invalid_clean_broker_metadata",
	2010:  "controller_broker_need_to_be_registered",
	2011:  "controller_master_still_exist",
	2012:  "controller_elect_master_failed",
	2013:  "controller_alter_sync_state_set_failed",
	2014:  "controller_broker_id_invalid",
	2015:  "controller_jraft_internal_error",
	2016:  "controller_broker_live_info_not_exists",
	3001:  "user_not_exist",
	3002:  "policy_not_exist",
}

// versionNames is MQVersion.Version in ordinal order.
var versionNames = strings.Fields("V3_0_0_SNAPSHOT V3_0_0_ALPHA1 V3_0_0_BETA1 V3_0_0_BETA2 V3_0_0_BETA3 V3_0_0_BETA4 V3_0_0_BETA5 " +
	"V3_0_0_BETA6_SNAPSHOT V3_0_0_BETA6 V3_0_0_BETA7_SNAPSHOT V3_0_0_BETA7 V3_0_0_BETA8_SNAPSHOT " +
	"V3_0_0_BETA8 V3_0_0_BETA9_SNAPSHOT V3_0_0_BETA9 V3_0_0_FINAL V3_0_1_SNAPSHOT V3_0_1 " +
	"V3_0_2_SNAPSHOT V3_0_2 V3_0_3_SNAPSHOT V3_0_3 V3_0_4_SNAPSHOT V3_0_4 V3_0_5_SNAPSHOT V3_0_5 " +
	"V3_0_6_SNAPSHOT V3_0_6 V3_0_7_SNAPSHOT V3_0_7 V3_0_8_SNAPSHOT V3_0_8 V3_0_9_SNAPSHOT V3_0_9 " +
	"V3_0_10_SNAPSHOT V3_0_10 V3_0_11_SNAPSHOT V3_0_11 V3_0_12_SNAPSHOT V3_0_12 V3_0_13_SNAPSHOT " +
	"V3_0_13 V3_0_14_SNAPSHOT V3_0_14 V3_0_15_SNAPSHOT V3_0_15 V3_1_0_SNAPSHOT V3_1_0 " +
	"V3_1_1_SNAPSHOT V3_1_1 V3_1_2_SNAPSHOT V3_1_2 V3_1_3_SNAPSHOT V3_1_3 V3_1_4_SNAPSHOT V3_1_4 " +
	"V3_1_5_SNAPSHOT V3_1_5 V3_1_6_SNAPSHOT V3_1_6 V3_1_7_SNAPSHOT V3_1_7 V3_1_8_SNAPSHOT V3_1_8 " +
	"V3_1_9_SNAPSHOT V3_1_9 V3_2_0_SNAPSHOT V3_2_0 V3_2_1_SNAPSHOT V3_2_1 V3_2_2_SNAPSHOT V3_2_2 " +
	"V3_2_3_SNAPSHOT V3_2_3 V3_2_4_SNAPSHOT V3_2_4 V3_2_5_SNAPSHOT V3_2_5 V3_2_6_SNAPSHOT V3_2_6 " +
	"V3_2_7_SNAPSHOT V3_2_7 V3_2_8_SNAPSHOT V3_2_8 V3_2_9_SNAPSHOT V3_2_9 V3_3_1_SNAPSHOT V3_3_1 " +
	"V3_3_2_SNAPSHOT V3_3_2 V3_3_3_SNAPSHOT V3_3_3 V3_3_4_SNAPSHOT V3_3_4 V3_3_5_SNAPSHOT V3_3_5 " +
	"V3_3_6_SNAPSHOT V3_3_6 V3_3_7_SNAPSHOT V3_3_7 V3_3_8_SNAPSHOT V3_3_8 V3_3_9_SNAPSHOT V3_3_9 " +
	"V3_4_1_SNAPSHOT V3_4_1 V3_4_2_SNAPSHOT V3_4_2 V3_4_3_SNAPSHOT V3_4_3 V3_4_4_SNAPSHOT V3_4_4 " +
	"V3_4_5_SNAPSHOT V3_4_5 V3_4_6_SNAPSHOT V3_4_6 V3_4_7_SNAPSHOT V3_4_7 V3_4_8_SNAPSHOT V3_4_8 " +
	"V3_4_9_SNAPSHOT V3_4_9 V3_5_1_SNAPSHOT V3_5_1 V3_5_2_SNAPSHOT V3_5_2 V3_5_3_SNAPSHOT V3_5_3 " +
	"V3_5_4_SNAPSHOT V3_5_4 V3_5_5_SNAPSHOT V3_5_5 V3_5_6_SNAPSHOT V3_5_6 V3_5_7_SNAPSHOT V3_5_7 " +
	"V3_5_8_SNAPSHOT V3_5_8 V3_5_9_SNAPSHOT V3_5_9 V3_6_1_SNAPSHOT V3_6_1 V3_6_2_SNAPSHOT V3_6_2 " +
	"V3_6_3_SNAPSHOT V3_6_3 V3_6_4_SNAPSHOT V3_6_4 V3_6_5_SNAPSHOT V3_6_5 V3_6_6_SNAPSHOT V3_6_6 " +
	"V3_6_7_SNAPSHOT V3_6_7 V3_6_8_SNAPSHOT V3_6_8 V3_6_9_SNAPSHOT V3_6_9 V3_7_1_SNAPSHOT V3_7_1 " +
	"V3_7_2_SNAPSHOT V3_7_2 V3_7_3_SNAPSHOT V3_7_3 V3_7_4_SNAPSHOT V3_7_4 V3_7_5_SNAPSHOT V3_7_5 " +
	"V3_7_6_SNAPSHOT V3_7_6 V3_7_7_SNAPSHOT V3_7_7 V3_7_8_SNAPSHOT V3_7_8 V3_7_9_SNAPSHOT V3_7_9 " +
	"V3_8_1_SNAPSHOT V3_8_1 V3_8_2_SNAPSHOT V3_8_2 V3_8_3_SNAPSHOT V3_8_3 V3_8_4_SNAPSHOT V3_8_4 " +
	"V3_8_5_SNAPSHOT V3_8_5 V3_8_6_SNAPSHOT V3_8_6 V3_8_7_SNAPSHOT V3_8_7 V3_8_8_SNAPSHOT V3_8_8 " +
	"V3_8_9_SNAPSHOT V3_8_9 V3_9_1_SNAPSHOT V3_9_1 V3_9_2_SNAPSHOT V3_9_2 V3_9_3_SNAPSHOT V3_9_3 " +
	"V3_9_4_SNAPSHOT V3_9_4 V3_9_5_SNAPSHOT V3_9_5 V3_9_6_SNAPSHOT V3_9_6 V3_9_7_SNAPSHOT V3_9_7 " +
	"V3_9_8_SNAPSHOT V3_9_8 V3_9_9_SNAPSHOT V3_9_9 V4_0_0_SNAPSHOT V4_0_0 V4_0_1_SNAPSHOT V4_0_1 " +
	"V4_0_2_SNAPSHOT V4_0_2 V4_0_3_SNAPSHOT V4_0_3 V4_0_4_SNAPSHOT V4_0_4 V4_0_5_SNAPSHOT V4_0_5 " +
	"V4_0_6_SNAPSHOT V4_0_6 V4_0_7_SNAPSHOT V4_0_7 V4_0_8_SNAPSHOT V4_0_8 V4_0_9_SNAPSHOT V4_0_9 " +
	"V4_1_0_SNAPSHOT V4_1_0 V4_1_1_SNAPSHOT V4_1_1 V4_1_2_SNAPSHOT V4_1_2 V4_1_3_SNAPSHOT V4_1_3 " +
	"V4_1_4_SNAPSHOT V4_1_4 V4_1_5_SNAPSHOT V4_1_5 V4_1_6_SNAPSHOT V4_1_6 V4_1_7_SNAPSHOT V4_1_7 " +
	"V4_1_8_SNAPSHOT V4_1_8 V4_1_9_SNAPSHOT V4_1_9 V4_2_0_SNAPSHOT V4_2_0 V4_2_1_SNAPSHOT V4_2_1 " +
	"V4_2_2_SNAPSHOT V4_2_2 V4_2_3_SNAPSHOT V4_2_3 V4_2_4_SNAPSHOT V4_2_4 V4_2_5_SNAPSHOT V4_2_5 " +
	"V4_2_6_SNAPSHOT V4_2_6 V4_2_7_SNAPSHOT V4_2_7 V4_2_8_SNAPSHOT V4_2_8 V4_2_9_SNAPSHOT V4_2_9 " +
	"V4_3_0_SNAPSHOT V4_3_0 V4_3_1_SNAPSHOT V4_3_1 V4_3_2_SNAPSHOT V4_3_2 V4_3_3_SNAPSHOT V4_3_3 " +
	"V4_3_4_SNAPSHOT V4_3_4 V4_3_5_SNAPSHOT V4_3_5 V4_3_6_SNAPSHOT V4_3_6 V4_3_7_SNAPSHOT V4_3_7 " +
	"V4_3_8_SNAPSHOT V4_3_8 V4_3_9_SNAPSHOT V4_3_9 V4_4_0_SNAPSHOT V4_4_0 V4_4_1_SNAPSHOT V4_4_1 " +
	"V4_4_2_SNAPSHOT V4_4_2 V4_4_3_SNAPSHOT V4_4_3 V4_4_4_SNAPSHOT V4_4_4 V4_4_5_SNAPSHOT V4_4_5 " +
	"V4_4_6_SNAPSHOT V4_4_6 V4_4_7_SNAPSHOT V4_4_7 V4_4_8_SNAPSHOT V4_4_8 V4_4_9_SNAPSHOT V4_4_9 " +
	"V4_5_0_SNAPSHOT V4_5_0 V4_5_1_SNAPSHOT V4_5_1 V4_5_2_SNAPSHOT V4_5_2 V4_5_3_SNAPSHOT V4_5_3 " +
	"V4_5_4_SNAPSHOT V4_5_4 V4_5_5_SNAPSHOT V4_5_5 V4_5_6_SNAPSHOT V4_5_6 V4_5_7_SNAPSHOT V4_5_7 " +
	"V4_5_8_SNAPSHOT V4_5_8 V4_5_9_SNAPSHOT V4_5_9 V4_6_0_SNAPSHOT V4_6_0 V4_6_1_SNAPSHOT V4_6_1 " +
	"V4_6_2_SNAPSHOT V4_6_2 V4_6_3_SNAPSHOT V4_6_3 V4_6_4_SNAPSHOT V4_6_4 V4_6_5_SNAPSHOT V4_6_5 " +
	"V4_6_6_SNAPSHOT V4_6_6 V4_6_7_SNAPSHOT V4_6_7 V4_6_8_SNAPSHOT V4_6_8 V4_6_9_SNAPSHOT V4_6_9 " +
	"V4_7_0_SNAPSHOT V4_7_0 V4_7_1_SNAPSHOT V4_7_1 V4_7_2_SNAPSHOT V4_7_2 V4_7_3_SNAPSHOT V4_7_3 " +
	"V4_7_4_SNAPSHOT V4_7_4 V4_7_5_SNAPSHOT V4_7_5 V4_7_6_SNAPSHOT V4_7_6 V4_7_7_SNAPSHOT V4_7_7 " +
	"V4_7_8_SNAPSHOT V4_7_8 V4_7_9_SNAPSHOT V4_7_9 V4_8_0_SNAPSHOT V4_8_0 V4_8_1_SNAPSHOT V4_8_1 " +
	"V4_8_2_SNAPSHOT V4_8_2 V4_8_3_SNAPSHOT V4_8_3 V4_8_4_SNAPSHOT V4_8_4 V4_8_5_SNAPSHOT V4_8_5 " +
	"V4_8_6_SNAPSHOT V4_8_6 V4_8_7_SNAPSHOT V4_8_7 V4_8_8_SNAPSHOT V4_8_8 V4_8_9_SNAPSHOT V4_8_9 " +
	"V4_9_0_SNAPSHOT V4_9_0 V4_9_1_SNAPSHOT V4_9_1 V4_9_2_SNAPSHOT V4_9_2 V4_9_3_SNAPSHOT V4_9_3 " +
	"V4_9_4_SNAPSHOT V4_9_4 V4_9_5_SNAPSHOT V4_9_5 V4_9_6_SNAPSHOT V4_9_6 V4_9_7_SNAPSHOT V4_9_7 " +
	"V4_9_8_SNAPSHOT V4_9_8 V4_9_9_SNAPSHOT V4_9_9 V5_0_0_SNAPSHOT V5_0_0 V5_0_1_SNAPSHOT V5_0_1 " +
	"V5_0_2_SNAPSHOT V5_0_2 V5_0_3_SNAPSHOT V5_0_3 V5_0_4_SNAPSHOT V5_0_4 V5_0_5_SNAPSHOT V5_0_5 " +
	"V5_0_6_SNAPSHOT V5_0_6 V5_0_7_SNAPSHOT V5_0_7 V5_0_8_SNAPSHOT V5_0_8 V5_0_9_SNAPSHOT V5_0_9 " +
	"V5_1_0_SNAPSHOT V5_1_0 V5_1_1_SNAPSHOT V5_1_1 V5_1_2_SNAPSHOT V5_1_2 V5_1_3_SNAPSHOT V5_1_3 " +
	"V5_1_4_SNAPSHOT V5_1_4 V5_1_5_SNAPSHOT V5_1_5 V5_1_6_SNAPSHOT V5_1_6 V5_1_7_SNAPSHOT V5_1_7 " +
	"V5_1_8_SNAPSHOT V5_1_8 V5_1_9_SNAPSHOT V5_1_9 V5_2_0_SNAPSHOT V5_2_0 V5_2_1_SNAPSHOT V5_2_1 " +
	"V5_2_2_SNAPSHOT V5_2_2 V5_2_3_SNAPSHOT V5_2_3 V5_2_4_SNAPSHOT V5_2_4 V5_2_5_SNAPSHOT V5_2_5 " +
	"V5_2_6_SNAPSHOT V5_2_6 V5_2_7_SNAPSHOT V5_2_7 V5_2_8_SNAPSHOT V5_2_8 V5_2_9_SNAPSHOT V5_2_9 " +
	"V5_3_0_SNAPSHOT V5_3_0 V5_3_1_SNAPSHOT V5_3_1 V5_3_2_SNAPSHOT V5_3_2 V5_3_3_SNAPSHOT V5_3_3 " +
	"V5_3_4_SNAPSHOT V5_3_4 V5_3_5_SNAPSHOT V5_3_5 V5_3_6_SNAPSHOT V5_3_6 V5_3_7_SNAPSHOT V5_3_7 " +
	"V5_3_8_SNAPSHOT V5_3_8 V5_3_9_SNAPSHOT V5_3_9 V5_4_0_SNAPSHOT V5_4_0 V5_4_1_SNAPSHOT V5_4_1 " +
	"V5_4_2_SNAPSHOT V5_4_2 V5_4_3_SNAPSHOT V5_4_3 V5_4_4_SNAPSHOT V5_4_4 V5_4_5_SNAPSHOT V5_4_5 " +
	"V5_4_6_SNAPSHOT V5_4_6 V5_4_7_SNAPSHOT V5_4_7 V5_4_8_SNAPSHOT V5_4_8 V5_4_9_SNAPSHOT V5_4_9 " +
	"V5_5_0_SNAPSHOT V5_5_0 V5_5_1_SNAPSHOT V5_5_1 V5_5_2_SNAPSHOT V5_5_2 V5_5_3_SNAPSHOT V5_5_3 " +
	"V5_5_4_SNAPSHOT V5_5_4 V5_5_5_SNAPSHOT V5_5_5 V5_5_6_SNAPSHOT V5_5_6 V5_5_7_SNAPSHOT V5_5_7 " +
	"V5_5_8_SNAPSHOT V5_5_8 V5_5_9_SNAPSHOT V5_5_9 V5_6_0_SNAPSHOT V5_6_0 V5_6_1_SNAPSHOT V5_6_1 " +
	"V5_6_2_SNAPSHOT V5_6_2 V5_6_3_SNAPSHOT V5_6_3 V5_6_4_SNAPSHOT V5_6_4 V5_6_5_SNAPSHOT V5_6_5 " +
	"V5_6_6_SNAPSHOT V5_6_6 V5_6_7_SNAPSHOT V5_6_7 V5_6_8_SNAPSHOT V5_6_8 V5_6_9_SNAPSHOT V5_6_9 " +
	"V5_7_0_SNAPSHOT V5_7_0 V5_7_1_SNAPSHOT V5_7_1 V5_7_2_SNAPSHOT V5_7_2 V5_7_3_SNAPSHOT V5_7_3 " +
	"V5_7_4_SNAPSHOT V5_7_4 V5_7_5_SNAPSHOT V5_7_5 V5_7_6_SNAPSHOT V5_7_6 V5_7_7_SNAPSHOT V5_7_7 " +
	"V5_7_8_SNAPSHOT V5_7_8 V5_7_9_SNAPSHOT V5_7_9 V5_8_0_SNAPSHOT V5_8_0 V5_8_1_SNAPSHOT V5_8_1 " +
	"V5_8_2_SNAPSHOT V5_8_2 V5_8_3_SNAPSHOT V5_8_3 V5_8_4_SNAPSHOT V5_8_4 V5_8_5_SNAPSHOT V5_8_5 " +
	"V5_8_6_SNAPSHOT V5_8_6 V5_8_7_SNAPSHOT V5_8_7 V5_8_8_SNAPSHOT V5_8_8 V5_8_9_SNAPSHOT V5_8_9 " +
	"V5_9_0_SNAPSHOT V5_9_0 V5_9_1_SNAPSHOT V5_9_1 V5_9_2_SNAPSHOT V5_9_2 V5_9_3_SNAPSHOT V5_9_3 " +
	"V5_9_4_SNAPSHOT V5_9_4 V5_9_5_SNAPSHOT V5_9_5 V5_9_6_SNAPSHOT V5_9_6 V5_9_7_SNAPSHOT V5_9_7 " +
	"V5_9_8_SNAPSHOT V5_9_8 V5_9_9_SNAPSHOT V5_9_9 HIGHER_VERSION ")

func requestName(code int32) string {
	if n, ok := requestCodeNames[code]; ok {
		return n
	}
	return strconv.Itoa(int(code))
}

func responseName(code int32) string {
	if n, ok := responseCodeNames[code]; ok {
		return n
	}
	return strconv.Itoa(int(code))
}

// versionName is MQVersion.getVersionDesc, in lower case as the labels
// carry it.
func versionName(v int32) string {
	switch {
	case v < 0:
		return strconv.Itoa(int(v))
	case int(v) >= len(versionNames):
		v = int32(len(versionNames) - 1)
	}
	return strings.ToLower(versionNames[v])
}
