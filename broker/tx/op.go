package tx

// Op records: a half message is resolved (committed, rolled back) once an
// op record names its half queue offset. Layout, as Apache writes them:
//
//	topic       RMQ_SYS_TRANS_OP_HALF_TOPIC
//	queue       the half message's queue id (0)
//	properties  TAGS=d, WAIT=true (Apache's Message(topic, "d", body))
//	body        ASCII decimal half queue offsets:
//	              4.9, 5.0.x: one offset, no separator        "17"
//	              5.1+:       each offset followed by ','     "17,18,21,"
//
// Readers (opOffsets) split on ',' and skip empty or unparsable items, so
// they read both. rocketgo writes one op record per END_TRANSACTION, the
// 4.9 body with a single offset and no separator, right after the commit's
// record and before answering, for two reasons:
//   - both readers understand it: 4.9 parses the whole body as one number
//     (a 5.1 batch "17," is unreadable to it), 5.x splits on ',';
//   - a commit is never answered before its op record is in the commit
//     log, and the op record follows its commit record there: after a crash
//     either both survive or the op record is lost with or after the commit
//     record, never the op record without the commit. Apache 5.1+ queues
//     the offset in memory and writes a batch up to transactionOpBatchInterval
//     (3 s) later, so a crash in between leaves a committed message whose
//     half message is checked (and committed) again.
// The cost is one small record (about 110 bytes) per transaction where 5.x
// batches up to transactionOpMsgMaxSize characters of offsets into one.

import (
	"strconv"
	"strings"
	"time"

	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/store"
)

// transRemoveTag is the tags of an op record (TransactionalMessageUtil.REMOVE_TAG).
const transRemoveTag = "d"

// opProperties are the stored properties of an op record.
var opProperties = string(message.AppendProperty(message.AppendProperty(nil, message.PropTags, transRemoveTag),
	message.PropWaitStoreMsgOK, "true"))

// putOp appends the op record resolving the half message at halfOffset of
// half queue queueID.
func (s *Service) putOp(queueID int32, halfOffset int64) (store.PutResult, error) {
	m := store.PutMessage{
		Topic:         message.TransOpHalfTopic,
		QueueID:       queueID,
		Body:          strconv.AppendInt(nil, halfOffset, 10),
		Properties:    opProperties,
		BornTimestamp: time.Now().UnixMilli(),
		BornHost:      s.d.StoreHost,
		StoreHost:     s.d.StoreHost,
	}
	return s.d.Store.Put(&m)
}

// opOffsets calls fn for every half queue offset an op record's body names,
// in either format (see the top of this file). Items that are empty or not
// a number are skipped, as Apache's getLong turns them into -1, below any
// half offset.
func opOffsets(body []byte, fn func(int64)) {
	s := string(body)
	for s != "" {
		item, rest, _ := strings.Cut(s, ",")
		s = rest
		if item == "" {
			continue
		}
		if v, err := strconv.ParseInt(item, 10, 64); err == nil && v >= 0 {
			fn(v)
		}
	}
}
