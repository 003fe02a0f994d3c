package message

import "sort"

// Properties string (MessageDecoder.messageProperties2String /
// string2messageProperties):
//
//	name 0x01 value 0x02 name 0x01 value 0x02 ...
//
// Every pair, including the last, is terminated by 0x02. Order is
// irrelevant. When parsing, the string is split on 0x02; a chunk is kept
// only if it is at least 3 bytes long and its first 0x01 leaves a non-empty
// name and a non-empty value (the value may contain further 0x01 bytes).
// A repeated name: the last occurrence wins (Java HashMap.put).
const (
	NameValueSeparator = '\x01'
	PropertySeparator  = '\x02'
)

// Property names (MessageConst.java).
const (
	PropKeys                     = "KEYS"
	PropTags                     = "TAGS"
	PropWaitStoreMsgOK           = "WAIT"
	PropDelayTimeLevel           = "DELAY"
	PropRetryTopic               = "RETRY_TOPIC"
	PropRealTopic                = "REAL_TOPIC"
	PropRealQueueID              = "REAL_QID"
	PropTransactionPrepared      = "TRAN_MSG"
	PropProducerGroup            = "PGROUP"
	PropMinOffset                = "MIN_OFFSET"
	PropMaxOffset                = "MAX_OFFSET"
	PropBuyerID                  = "BUYER_ID"
	PropOriginMessageID          = "ORIGIN_MESSAGE_ID"
	PropTransferFlag             = "TRANSFER_FLAG"
	PropCorrectionFlag           = "CORRECTION_FLAG"
	PropMQ2Flag                  = "MQ2_FLAG"
	PropReconsumeTime            = "RECONSUME_TIME"
	PropMsgRegion                = "MSG_REGION"
	PropTraceSwitch              = "TRACE_ON"
	PropUniqClientMessageID      = "UNIQ_KEY"
	PropExtendUniqInfo           = "EXTEND_UNIQ_INFO"
	PropMaxReconsumeTimes        = "MAX_RECONSUME_TIMES"
	PropConsumeStartTimestamp    = "CONSUME_START_TIME"
	PropInnerNum                 = "INNER_NUM"
	PropInnerBase                = "INNER_BASE"
	PropDupInfo                  = "DUP_INFO"
	PropCheckImmunityTimeSeconds = "CHECK_IMMUNITY_TIME_IN_SECONDS"
	PropTranPreparedQueueOffset  = "TRAN_PREPARED_QUEUE_OFFSET"
	PropTransactionID            = "__transactionId__"
	PropTransactionCheckTimes    = "TRANSACTION_CHECK_TIMES"
	PropInstanceID               = "INSTANCE_ID"
	PropCorrelationID            = "CORRELATION_ID"
	PropReplyToClient            = "REPLY_TO_CLIENT"
	PropTTL                      = "TTL"
	PropArriveTime               = "ARRIVE_TIME"
	PropPushReplyTime            = "PUSH_REPLY_TIME"
	PropCluster                  = "CLUSTER"
	PropMsgType                  = "MSG_TYPE"
	PropPopCK                    = "POP_CK"
	PropPopCKOffset              = "POP_CK_OFFSET"
	PropFirstPopTime             = "1ST_POP_TIME"
	PropShardingKey              = "__SHARDINGKEY"
	PropPriority                 = "_SYS_MSG_PRIORITY_"
	PropLiteTopic                = "__LITE_TOPIC"
	PropForwardQueueID           = "PROPERTY_FORWARD_QUEUE_ID"
	PropRedirect                 = "REDIRECT"
	PropInnerMultiDispatch       = "INNER_MULTI_DISPATCH"
	PropInnerMultiQueueOffset    = "INNER_MULTI_QUEUE_OFFSET"
	PropTraceContext             = "TRACE_CONTEXT"
	PropTimerDelaySec            = "TIMER_DELAY_SEC"
	PropTimerDelayMs             = "TIMER_DELAY_MS"
	PropTimerDeliverMs           = "TIMER_DELIVER_MS"
	PropTimerEnqueueMs           = "TIMER_ENQUEUE_MS"
	PropTimerDequeueMs           = "TIMER_DEQUEUE_MS"
	PropTimerRollTimes           = "TIMER_ROLL_TIMES"
	PropTimerOutMs               = "TIMER_OUT_MS"
	PropTimerDelUniqKey          = "TIMER_DEL_UNIQKEY"
	PropTimerDelayLevel          = "TIMER_DELAY_LEVEL"
	PropBornHost                 = "__BORNHOST"
	PropBornTimestamp            = "BORN_TIMESTAMP"
	PropTransientPrefix          = "__RMQ.TRANSIENT."
	PropCRC32                    = "__CRC32#"
	PropDLQOriginTopic           = "DLQ_ORIGIN_TOPIC"
	PropDLQOriginMessageID       = "DLQ_ORIGIN_MESSAGE_ID"
	PropStartDeliverTime         = "__STARTDELIVERTIME"
)

// ParseProperties decodes a properties string with Java's rules (see the
// layout above). It never fails; malformed chunks are skipped.
func ParseProperties(s string) map[string]string {
	m := make(map[string]string)
	eachProperty(s, func(name, value string) bool {
		m[name] = value
		return true
	})
	return m
}

// eachProperty calls fn for every pair Java would keep, in string order,
// until fn returns false. It does not allocate.
func eachProperty[S ~string | ~[]byte](s S, fn func(name, value S) bool) {
	n := len(s)
	i := 0
	for i < n {
		end := indexByteFrom(s, i, PropertySeparator)
		if end < 0 {
			end = n
		}
		if end-i >= 3 {
			kv := indexByteFrom(s, i, NameValueSeparator)
			if kv > i && kv < end-1 {
				if !fn(s[i:kv], s[kv+1:end]) {
					return
				}
			}
		}
		i = end + 1
	}
}

// indexByteFrom returns the index of the first c in s at or after from, or -1.
func indexByteFrom[S ~string | ~[]byte](s S, from int, c byte) int {
	for j := from; j < len(s); j++ {
		if s[j] == c {
			return j
		}
	}
	return -1
}

// Property returns the value of name in the raw properties string, "" if
// absent. It scans without allocating; the result is a substring of props.
func Property(props, name string) string {
	return property(props, name)
}

// PropertyBytes is Property over a byte view (e.g. a record's properties
// inside a mapped file). The result is a view into props.
func PropertyBytes(props []byte, name string) []byte {
	return property(props, name)
}

func property[S ~string | ~[]byte](props S, name string) S {
	var found S
	eachProperty(props, func(k, v S) bool {
		if len(k) == len(name) && string(k) == name {
			found = v // last occurrence wins, as in Java's map
		}
		return true
	})
	return found
}

// AppendProperty appends one "name\x01value\x02" pair. A pair with an empty
// name or value is skipped (Java would drop it on parse).
func AppendProperty(dst []byte, name, value string) []byte {
	if name == "" || value == "" {
		return dst
	}
	// Java clients (4.9.x, 5.x) send their properties string without the
	// trailing separator: add it before the new pair.
	if len(dst) > 0 && dst[len(dst)-1] != PropertySeparator {
		dst = append(dst, PropertySeparator)
	}
	dst = append(dst, name...)
	dst = append(dst, NameValueSeparator)
	dst = append(dst, value...)
	return append(dst, PropertySeparator)
}

// AppendProperties appends every pair of m, sorted by name so the output
// is deterministic. Pairs with an empty name or value are skipped.
func AppendProperties(dst []byte, m map[string]string) []byte {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		dst = AppendProperty(dst, k, m[k])
	}
	return dst
}

// JoinProperties returns a + b as one properties string, inserting the
// 0x02 separator if a is non-empty and does not end with one (how the
// broker appends batch-level properties to inner messages).
func JoinProperties[S ~string | ~[]byte](dst []byte, a, b S) []byte {
	dst = append(dst, a...)
	if len(a) > 0 && len(b) > 0 && a[len(a)-1] != PropertySeparator {
		dst = append(dst, PropertySeparator)
	}
	return append(dst, b...)
}
