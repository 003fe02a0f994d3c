package tx

// The transaction check service (Apache's TransactionalMessageCheckService,
// TransactionalMessageServiceImpl.check and
// DefaultTransactionalMessageCheckListener, 5.3.3). Every
// transactionCheckInterval, for each half queue:
//
//  1. the op set: op records from the op progress offset to the op queue's
//     end, each naming half offsets that are resolved (op.go);
//  2. the walk from the half progress offset to the queue's end as the run
//     began, over the half messages:
//     - resolved (in the op set), or a copy of a transaction an op record
//       resolved or this run already asked about: skip;
//     - checked transactionCheckMax times (TRANSACTION_CHECK_TIMES), or born
//       more than fileReservedTime hours ago: moved to
//       TRANS_CHECK_MAX_TIME_TOPIC, skip;
//     - stored after this run began: stop;
//     - with CHECK_IMMUNITY_TIME_IN_SECONDS and younger than it: skip when
//       the offset it was first stored at (TRAN_PREPARED_QUEUE_OFFSET) is
//       resolved, else re-append it carrying that offset, and go on;
//     - without, and younger than transactionTimeOut: stop;
//     - otherwise re-append it to the half queue with
//       TRANSACTION_CHECK_TIMES+1 and ask a producer of its group (PGROUP)
//       with CHECK_TRANSACTION_STATE about the new copy; its answer
//       (END_TRANSACTION) names the copy;
//  3. the progress: the half offset moves past what the walk processed, the
//     op offset past the leading run of op records whose half offsets were
//     all met; both are offsets of group CID_RMQ_SYS_TRANS, persisted with
//     consumerOffset.json.
//
// Bounds: one run spends at most 60 s per queue (Apache's
// MAX_PROCESS_TIME_LIMIT) and sends at most txCheckMaxPerRun checks per
// queue (Apache's check pool queue, 2000), re-appends of messages inside
// their immunity included (Apache re-appends every such message at every
// run, unbounded: a producer could make each run copy any number of them):
// the rest waits for the next run, neither re-appended nor counted. Checks
// go out with Conn.Send (one-way, never waiting); a producer that does not
// read is cut by the remoting limits like any slow client. With no producer of the group connected the
// message is re-appended and counted as Apache does (the check is lost), so
// it reaches TRANS_CHECK_MAX_TIME_TOPIC after transactionCheckMax runs.
//
// A transaction is its producer group and UNIQ_KEY (txID), which every copy
// keeps: a run skips every half message of a transaction any copy of which
// an op record names, and asks about a transaction once. So neither a late
// answer about an earlier copy nor a crash that rolled the progress back
// (it is written with consumerOffset.json), whichever broker made the
// copies, has the producer asked again and a commit stored twice. Apache
// matches the offsets op records name, only.

import (
	"slices"
	"strconv"
	"time"

	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
	"github.com/rocketgo/rocketgo/store"
)

const (
	// txCheckQueueTimeLimit is MAX_PROCESS_TIME_LIMIT: time spent on one
	// half queue per run.
	txCheckQueueTimeLimit = 60 * time.Second
	// txCheckMaxPerRun bounds the checks one run sends per half queue.
	txCheckMaxPerRun = 2000
	// txCheckMaxTimeQueueNums is TCMT_QUEUE_NUMS.
	txCheckMaxTimeQueueNums = 1
)

// checker is the check service's state, owned by its goroutine.
type checker struct {
	s   *Service
	log zerolog.Logger
	// sampled is for the lines about one message (Apache logs each): a
	// producer decides how many there are.
	sampled zerolog.Logger
	next    uint32 // round robin over a group's producer connections
	// now is the clock; tests move it.
	now func() time.Time
	// maxPerRun is txCheckMaxPerRun; tests lower it.
	maxPerRun int
}

func newChecker(s *Service, log zerolog.Logger) *checker {
	return &checker{s: s, log: log, sampled: log.Sample(&zerolog.BurstSampler{Burst: 10, Period: time.Minute}),
		now: time.Now, maxPerRun: txCheckMaxPerRun}
}

// RunChecks checks every transactionCheckInterval (read at each turn, so
// that UPDATE_BROKER_CONFIG changes it) until quit closes. A broker runs it
// only as a master.
func (s *Service) RunChecks(quit <-chan struct{}) {
	tc := s.check
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	for {
		t.Reset(s.d.Config().CheckInterval)
		select {
		case <-quit:
			return
		case <-t.C:
		}
		tc.checkAll(quit)
	}
}

// checkAll is one run over every half queue.
func (tc *checker) checkAll(quit <-chan struct{}) {
	topic, ok := tc.s.d.Topics.Get(message.TransHalfTopic)
	if !ok {
		return
	}
	for q := int32(0); q < topic.ReadQueueNums; q++ {
		select {
		case <-quit:
			return
		default:
		}
		tc.checkQueue(q, quit)
	}
}

// progress is CID_RMQ_SYS_TRANS's offset of a queue, within the queue.
func (tc *checker) progress(topic string, q int32) int64 {
	st := tc.s.d.Store
	off, ok := tc.s.d.Offsets.Query(message.TransGroup, topic, q)
	if !ok || off < st.MinOffset(topic, q) {
		off = st.MinOffset(topic, q)
	}
	return min(off, st.MaxOffset(topic, q))
}

// opSet is step 1: the resolved half offsets (≥ the half progress) and the
// op records they came from.
type opSet struct {
	removed map[int64]int64 // half offset → op queue offset
	// resolved are the transactions (txID) of the half messages op records
	// name (at most txResolvedMax per run).
	resolved map[uint64]struct{}
	pending  map[int64]int // op queue offset → its half offsets not met yet
	done     []int64       // op queue offsets fully met (or naming nothing)
}

func (s *opSet) met(halfOff int64) bool {
	opOff, ok := s.removed[halfOff]
	if !ok {
		return false
	}
	delete(s.removed, halfOff)
	s.release(opOff)
	return true
}

func (s *opSet) release(opOff int64) {
	if s.pending[opOff]--; s.pending[opOff] <= 0 {
		delete(s.pending, opOff)
		s.done = append(s.done, opOff)
	}
}

// readOps builds the op set of half queue q from op queue offset opOff.
func (tc *checker) readOps(q int32, opOff, halfOff int64) *opSet {
	st := tc.s.d.Store
	s := &opSet{removed: map[int64]int64{}, pending: map[int64]int{}, resolved: map[uint64]struct{}{}}
	end := st.MaxOffset(message.TransOpHalfTopic, q)
	for o := opOff; o < end; {
		es := st.ReadQueue(message.TransOpHalfTopic, q, o, 64)
		if len(es) == 0 {
			// Unreadable slots (fillers, a deleted file): nothing to wait for.
			s.done = append(s.done, o)
			o++
			continue
		}
		for _, e := range es {
			for ; o < e.QueueOffset; o++ {
				s.done = append(s.done, o) // skipped filler entries
			}
			o = e.QueueOffset + 1
			n := 0
			rec, err := st.RecordAt(e.PhyOffset, e.Size)
			var v message.RecordView
			if err == nil {
				v, _, err = message.DecodeRecordView(rec)
			}
			switch {
			case err != nil:
				tc.sampled.Error().Err(err).Int64("opOffset", e.QueueOffset).Msg("unreadable transaction op record, skipped")
			case string(message.PropertyBytes(v.Properties, message.PropTags)) != transRemoveTag:
				tc.sampled.Error().Int64("opOffset", e.QueueOffset).Msg("transaction op record with an illegal tag, skipped")
			default:
				opOffsets(v.Body, func(h int64) {
					tc.noteResolved(s, q, h)
					if h < halfOff {
						return
					}
					if old, ok := s.removed[h]; ok {
						// Named twice (a repeated END_TRANSACTION): the
						// older record need not wait for it.
						if old == e.QueueOffset {
							return
						}
						s.release(old)
					}
					s.removed[h] = e.QueueOffset
					n++
				})
			}
			if n == 0 {
				s.done = append(s.done, e.QueueOffset)
			} else {
				s.pending[e.QueueOffset] = n
			}
		}
	}
	return s
}

// txResolvedMax bounds the op-named half messages read per run to learn
// their transaction; past it a run matches offsets only, as Apache does.
const txResolvedMax = 100_000

// txID names a transaction: a hash of its producer group, UNIQ_KEY and body
// CRC, which the check service's copies and Apache's keep (the send path
// gives every message a UNIQ_KEY). Two half messages alike in all three are
// one transaction, as the clients see them (they name a transaction by its
// UNIQ_KEY): a send the client retried stores it twice.
func txID(v *message.RecordView) uint64 {
	// FNV-1a, inline: no hasher to allocate on END_TRANSACTION's path.
	const prime = 1099511628211
	h := uint64(14695981039346656037)
	for _, c := range message.PropertyBytes(v.Properties, message.PropProducerGroup) {
		h = (h ^ uint64(c)) * prime
	}
	h *= prime // a 0 byte between the two
	for _, c := range message.PropertyBytes(v.Properties, message.PropUniqClientMessageID) {
		h = (h ^ uint64(c)) * prime
	}
	// And the body's CRC: an application that sends one message object
	// twice (both clients keep its UNIQ_KEY) with another body makes two
	// transactions.
	for k := 0; k < 32; k += 8 {
		h = (h ^ uint64(uint8(v.BodyCRC>>k))) * prime
	}
	return h
}

// noteResolved records the transaction of the half message at offset h,
// which an op record names.
func (tc *checker) noteResolved(s *opSet, q int32, h int64) {
	if len(s.resolved) >= txResolvedMax {
		return
	}
	st := tc.s.d.Store
	es := st.ReadQueue(message.TransHalfTopic, q, h, 1)
	if len(es) == 0 || es[0].QueueOffset != h {
		return
	}
	rec, err := st.RecordAt(es[0].PhyOffset, es[0].Size)
	if err != nil {
		return
	}
	v, _, err := message.DecodeRecordView(rec)
	if err != nil {
		return
	}
	s.resolved[txID(&v)] = struct{}{}
}

// txResolved reports whether a copy of v's transaction was resolved.
func (s *opSet) txResolved(v *message.RecordView) bool {
	_, ok := s.resolved[txID(v)]
	return ok
}

// opProgress is calculateOpOffset: past the leading run of done op records.
func opProgress(done []int64, old int64) int64 {
	slices.Sort(done)
	off := old
	for _, d := range done {
		if d == off {
			off++
		} else if d > off {
			break
		}
	}
	return off
}

// checkQueue is one run over half queue q (steps 1 to 3 at the top).
func (tc *checker) checkQueue(q int32, quit <-chan struct{}) {
	d := &tc.s.d
	cfg := d.Config()
	start := tc.now()
	startMs := start.UnixMilli()
	halfOff := tc.progress(message.TransHalfTopic, q)
	opOff := tc.progress(message.TransOpHalfTopic, q)
	ops := tc.readOps(q, opOff, halfOff)
	end := d.Store.MaxOffset(message.TransHalfTopic, q)
	i, sent := halfOff, 0
	renewed := map[uint64]struct{}{} // transactions re-appended by this run
walk:
	for i < end {
		select {
		case <-quit:
			break walk
		default:
		}
		if tc.now().Sub(start) > txCheckQueueTimeLimit || sent >= tc.maxPerRun {
			tc.log.Info().Int32("queueId", q).Int("checks", sent).Msg("transaction check run limit reached")
			break
		}
		if ops.met(i) {
			i++
			continue
		}
		es := d.Store.ReadQueue(message.TransHalfTopic, q, i, 1)
		if len(es) == 0 {
			if m := d.Store.MinOffset(message.TransHalfTopic, q); i < m {
				i = m // cleaned up under the walk
				continue
			}
			break
		}
		if es[0].QueueOffset != i {
			i = es[0].QueueOffset // filler entries skipped
			continue
		}
		rec, err := d.Store.RecordAt(es[0].PhyOffset, es[0].Size)
		var v message.RecordView
		if err == nil {
			v, _, err = message.DecodeRecordView(rec)
		}
		if err != nil {
			tc.sampled.Error().Err(err).Int64("queueOffset", i).Msg("unreadable half message, skipped")
			i++
			continue
		}
		if ops.txResolved(&v) {
			i++ // a copy (or the original) of a resolved transaction
			continue
		}
		// Another copy of a transaction this run already re-appended (and
		// asked about): the copy made then stands for it. Several copies
		// are walked in one run only after a crash rolled the progress back.
		id := txID(&v)
		if _, ok := renewed[id]; ok {
			i++
			continue
		}
		now := tc.now().UnixMilli()
		times, discard := checkTimes(v.Properties, cfg.CheckMax)
		if !discard && now-v.BornTimestamp > int64(cfg.FileReservedTime)*3600*1000 {
			tc.sampled.Info().Int64("queueOffset", i).Int64("bornTimestamp", v.BornTimestamp).
				Msg("half message exceed file reserved time, so skip it")
			discard = true
		}
		if discard {
			tc.discard(&v)
			i++
			continue
		}
		if v.StoreTimestamp >= startMs {
			break // stored during this run: next run
		}
		age := now - v.BornTimestamp
		immunity := cfg.TimeOut
		if s := message.PropertyBytes(v.Properties, message.PropCheckImmunityTimeSeconds); len(s) > 0 {
			immunity = immunityTime(string(s), cfg.TimeOut)
			if age < immunity {
				resolved, ok := tc.immune(&v, ops, times)
				if !ok {
					break
				}
				if !resolved {
					renewed[id] = struct{}{}
					sent++ // a re-append: in the run's budget, so that they cannot grow the log without bound
				}
				i++
				continue
			}
		} else if age >= 0 && age < immunity {
			break // too young: this queue waits for the next run
		}
		if !(age > immunity || age <= -1) {
			break
		}
		if !tc.checkOne(&cfg, &v, times) {
			break
		}
		renewed[id] = struct{}{}
		sent++
		i++
	}
	if i != halfOff {
		d.Offsets.Commit(message.TransGroup, message.TransHalfTopic, q, i)
	}
	if newOp := opProgress(ops.done, opOff); newOp != opOff {
		d.Offsets.Commit(message.TransGroup, message.TransOpHalfTopic, q, newOp)
	}
	if i != halfOff || sent > 0 {
		tc.log.Debug().Int32("queueId", q).Int64("halfOffset", i).Int64("halfMaxOffset", end).Int("checks", sent).
			Msg("transaction check run")
	}
}

// checkTimes is needDiscard: the TRANSACTION_CHECK_TIMES the re-appended
// copy carries (1 on the first check), or discard once it reached max.
func checkTimes(props []byte, max int) (int, bool) {
	s := message.PropertyBytes(props, message.PropTransactionCheckTimes)
	if len(s) == 0 {
		return 1, false
	}
	n, err := strconv.Atoi(string(s))
	if err != nil {
		n = -1 // Apache's getInt
	}
	if n >= max {
		return n, true
	}
	return n + 1, false
}

// immune handles a half message inside its CHECK_IMMUNITY_TIME_IN_SECONDS
// (checkPrepareQueueOffset): resolved when the offset it was first stored at
// is in the op set, else re-appended carrying that offset. ok is false when
// the walk must stop here (a bad property, a failed append).
//
// The copy is Apache's renewImmunityHalfMessageInner: its needDiscard has
// already counted the run (TRANSACTION_CHECK_TIMES = times), and it
// serialises the properties after renewHalfMessageInner set WAIT=false, so
// both are in the copy. Waiting out an immunity thus spends
// transactionCheckMax, in either broker.
func (tc *checker) immune(v *message.RecordView, ops *opSet, times int) (resolved, ok bool) {
	s := message.PropertyBytes(v.Properties, message.PropTranPreparedQueueOffset)
	if len(s) > 0 {
		first, err := strconv.ParseInt(string(s), 10, 64)
		if err != nil || first == -1 {
			return false, false
		}
		if ops.met(first) {
			return true, true
		}
	}
	first := strconv.FormatInt(v.QueueOffset, 10)
	if len(s) > 0 {
		first = string(s)
	}
	if _, _, err := tc.renew(v, message.PropTranPreparedQueueOffset, first,
		message.PropTransactionCheckTimes, strconv.Itoa(times), message.PropWaitStoreMsgOK, "false"); err != nil {
		tc.sampled.Error().Err(err).Int64("queueOffset", v.QueueOffset).Msg("re-append half message")
		return false, false
	}
	return false, true
}

// renew re-appends a half message to its half queue with properties set
// (renewHalfMessageInner). Unlike Apache, the copy keeps the message's flag
// and reconsume times, which the committed message is made from.
func (tc *checker) renew(v *message.RecordView, kv ...string) (store.PutResult, string, error) {
	m := store.PutMessage{
		Topic:          message.TransHalfTopic,
		QueueID:        v.QueueID,
		Flag:           v.Flag,
		Body:           v.Body,
		Properties:     message.SetProperties(string(v.Properties), kv...),
		SysFlag:        v.SysFlag,
		BornTimestamp:  v.BornTimestamp,
		BornHost:       v.BornHost,
		StoreHost:      v.StoreHost,
		ReconsumeTimes: v.ReconsumeTimes,
	}
	pr, err := tc.s.d.Store.Put(&m)
	return pr, m.Properties, err
}

// checkOne re-appends a half message with TRANSACTION_CHECK_TIMES = times
// and sends CHECK_TRANSACTION_STATE about the copy to a producer of its
// group. It reports false when the copy could not be appended.
func (tc *checker) checkOne(cfg *Config, v *message.RecordView, times int) bool {
	pr, props, err := tc.renew(v, message.PropTransactionCheckTimes, strconv.Itoa(times))
	if err != nil {
		tc.sampled.Error().Err(err).Int64("queueOffset", v.QueueOffset).Msg("re-append half message for check")
		return false
	}
	realTopic := string(message.PropertyBytes(v.Properties, message.PropRealTopic))
	realQID, _ := strconv.Atoi(string(message.PropertyBytes(v.Properties, message.PropRealQueueID)))
	uniq := string(message.PropertyBytes(v.Properties, message.PropUniqClientMessageID))
	group := string(message.PropertyBytes(v.Properties, message.PropProducerGroup))
	tc.sampled.Info().Str("realTopic", realTopic).Str("uniqKey", uniq).Int64("queueOffset", pr.QueueOffset).
		Int64("commitLogOffset", pr.PhysicalOffset).Int("checkTimes", times).Msg("check transaction")
	c := tc.producerConn(group)
	if c == nil {
		tc.sampled.Warn().Str("producerGroup", group).Msg("check transaction failed, no producer connected")
		return true
	}
	// The body is the copy as a stored message with its real topic and
	// queue (Apache's MessageDecoder.encode of the re-appended MessageExt,
	// whose properties renewHalfMessageInner set WAIT=false in).
	props = message.SetProperties(props, message.PropWaitStoreMsgOK, "false")
	body, err := message.AppendRecord(nil, &message.Record{
		QueueID: int32(realQID), Flag: v.Flag, QueueOffset: pr.QueueOffset, PhysicalOffset: pr.PhysicalOffset,
		SysFlag: v.SysFlag, BornTimestamp: v.BornTimestamp, BornHost: v.BornHost, StoreTimestamp: v.StoreTimestamp,
		StoreHost: v.StoreHost, ReconsumeTimes: v.ReconsumeTimes, PreparedTransactionOffset: v.PreparedTransactionOffset,
		BodyCRC: v.BodyCRC, Body: v.Body, Topic: realTopic, Properties: props,
	})
	if err != nil {
		tc.sampled.Error().Err(err).Int64("queueOffset", pr.QueueOffset).Msg("encode check transaction body")
		return true
	}
	ext := []remoting.Field{
		{Key: "topic", Value: message.TransHalfTopic},
		{Key: "tranStateTableOffset", Value: strconv.FormatInt(pr.QueueOffset, 10)},
		{Key: "commitLogOffset", Value: strconv.FormatInt(pr.PhysicalOffset, 10)},
		{Key: "offsetMsgId", Value: message.OffsetMsgID(tc.s.d.StoreHost, pr.PhysicalOffset)},
		{Key: "bname", Value: cfg.BrokerName},
	}
	if uniq != "" {
		ext = append(ext, remoting.Field{Key: "msgId", Value: uniq}, remoting.Field{Key: "transactionId", Value: uniq})
	}
	req := &remoting.Command{Code: remoting.CheckTransactionState, Language: remoting.LangJava,
		Version: remoting.ServerVersion(), ExtFields: ext, Body: body}
	if err := c.Send(req); err != nil {
		tc.sampled.Warn().Err(err).Str("producerGroup", group).Str("remote", c.Remote).Msg("check transaction failed")
	}
	return true
}

// producerConn is ProducerManager.getAvailableChannel: a live connection of
// the group, round robin over its members, so that a producer that went
// away is replaced by another member; nil when none is connected.
func (tc *checker) producerConn(group string) *remoting.Conn {
	conns := tc.s.d.Producers.ProducerConns(group)
	if len(conns) == 0 {
		return nil
	}
	tc.next++
	for k := range conns {
		if c := conns[(int(tc.next)+k)%len(conns)]; !c.Closed() {
			return c
		}
	}
	return nil
}

// discard moves a half message checked too often (or too old) to
// TRANS_CHECK_MAX_TIME_TOPIC, created on demand with one queue
// (DefaultTransactionalMessageCheckListener.resolveDiscardMsg).
func (tc *checker) discard(v *message.RecordView) {
	tc.sampled.Error().Int64("queueOffset", v.QueueOffset).Int64("commitLogOffset", v.PhysicalOffset).
		Str("uniqKey", string(message.PropertyBytes(v.Properties, message.PropUniqClientMessageID))).
		Msg("half message has been checked too many times, so discard it by moving it to system topic TRANS_CHECK_MAX_TIME_TOPIC")
	if _, _, err := tc.s.d.Topics.CreateIfAbsent(tables.TopicConfig{TopicName: message.TransCheckMaxTimeTopic,
		ReadQueueNums: txCheckMaxTimeQueueNums, WriteQueueNums: txCheckMaxTimeQueueNums, Perm: message.PermRead | message.PermWrite}); err != nil {
		tc.log.Error().Err(err).Msg("create TRANS_CHECK_MAX_TIME_TOPIC")
		return
	}
	m := store.PutMessage{
		Topic: message.TransCheckMaxTimeTopic, QueueID: 0, Flag: v.Flag, Body: v.Body, Properties: string(v.Properties),
		SysFlag: v.SysFlag, BornTimestamp: v.BornTimestamp, BornHost: v.BornHost, StoreHost: v.StoreHost,
		ReconsumeTimes: v.ReconsumeTimes,
	}
	if _, err := tc.s.d.Store.Put(&m); err != nil {
		tc.log.Error().Err(err).Int64("queueOffset", v.QueueOffset).
			Msg("put checked-too-many-time half message to TRANS_CHECK_MAX_TIME_TOPIC failed")
		return
	}
	tc.s.d.Counts.Discarded(string(message.PropertyBytes(v.Properties, message.PropRealTopic)))
}
