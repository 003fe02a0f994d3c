package tx

// END_TRANSACTION (Apache's EndTransactionProcessor, 5.3.3).
//
// Every field of the request is hostile until checked: the commit log
// offset may be negative, past the end, in the middle of a record, at a
// record of another topic or at another group's half message. The half
// message is found only when the record at that offset decodes, lies in
// RMQ_SYS_TRANS_HALF_TOPIC and its consume queue entry points back at that
// very offset (so bytes inside a message body that look like a record are
// never taken for one); then the producer group, the half queue offset and
// the commit log offset must match the request, as Apache checks them.
//
// Reading the half message may fault pages in, and a commit appends and
// may wait for SYNC_FLUSH: none of it runs on an event loop. Requests go
// through a bounded queue (endTransactionPoolQueueCapacity) to
// endTransactionThreadPoolNums goroutines, Apache's pool keys; past the
// bound SYSTEM_BUSY. The answer (request form, the Go client's) is written
// through the caller's completion; the one-way form (Java's) is not answered.

import (
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
	"github.com/rocketgo/rocketgo/store"
)

var (
	// ErrHalfNotFound: END_TRANSACTION names no half message.
	ErrHalfNotFound = errors.New("tx: prepared transaction message not found")
	// ErrHalfMismatch: the half message's group or offsets differ from the request's.
	ErrHalfMismatch = errors.New("tx: prepared transaction message mismatch")
	// ErrCheckImmunity: a producer's own END_TRANSACTION after its
	// CHECK_IMMUNITY_TIME_IN_SECONDS passed (5.x ILLEGAL_OPERATION).
	ErrCheckImmunity = errors.New("tx: transaction past check immunity time")
	// ErrBusy: the END_TRANSACTION queue is full.
	ErrBusy = errors.New("tx: end transaction queue full")
	// errNoRealTopic: a half message without REAL_TOPIC or REAL_QID.
	errNoRealTopic = errors.New("tx: half message without REAL_TOPIC")
)

// EndRequest is END_TRANSACTION (EndTransactionRequestHeader).
type EndRequest struct {
	ProducerGroup        string
	TranStateTableOffset int64 // half queue offset
	CommitLogOffset      int64 // half message's commit log offset
	CommitOrRollback     int32 // message.TransactionNot / Commit / Rollbk
	FromTransactionCheck bool
	MsgID                string
	TransactionID        string
	// Remote names the producer in log lines.
	Remote string
}

// endTxDispatchWait bounds how long a worker waits for the dispatcher to
// index a half message appended just before its END_TRANSACTION arrived.
const endTxDispatchWait = 3 * time.Second

type endJob struct {
	r    EndRequest
	done func(error)
}

// ErrSlave: a slave does not end transactions; its master does.
var ErrSlave = errors.New("tx: a slave does not end transactions")

// EndTransaction takes an END_TRANSACTION from a client: on a slave it is
// refused with SLAVE_NOT_AVAILABLE and no remark, as Apache's; otherwise
// it is End's.
func (s *Service) EndTransaction(r *EndRequest, done func(error)) (queued bool, err error) {
	if s.d.Config().Slave {
		return false, remoting.Refuse(remoting.SlaveNotAvailable, ErrSlave, "")
	}
	return s.End(r, done)
}

// End takes an END_TRANSACTION. A state that is neither commit nor
// rollback is only logged and never answered (Apache returns no response):
// queued is false and err nil. Otherwise the request is queued (queued
// true) and done is called once, later, from a worker (Work): nil for
// SUCCESS, else a *Refusal (Apache's code and remark). A full queue is
// refused at once with SYSTEM_BUSY. done may be nil (a one-way request).
// r's strings must not be views into memory the caller reuses.
func (s *Service) End(r *EndRequest, done func(error)) (queued bool, err error) {
	switch r.CommitOrRollback {
	case message.TransactionCommit, message.TransactionRollbk:
	default:
		s.sampled.Warn().Str("remote", r.Remote).Str("producerGroup", r.ProducerGroup).Str("msgId", r.MsgID).
			Bool("fromTransactionCheck", r.FromTransactionCheck).Int32("commitOrRollback", r.CommitOrRollback).
			Msg("end transaction in pending state")
		return false, nil
	}
	if done == nil {
		done = func(error) {}
	}
	select {
	case s.jobs <- &endJob{r: *r, done: done}:
		return true, nil
	default:
		s.sampled.Warn().Int("endTransactionPoolQueueCapacity", cap(s.jobs)).Str("remote", r.Remote).
			Msg("end transaction queue full; refused")
		return false, remoting.Refuse(remoting.SystemBusy, ErrBusy, "[OVERLOAD]system busy, start flow control for a while")
	}
}

// Work is one END_TRANSACTION worker (the broker runs
// endTransactionThreadPoolNums of them); it returns when Deps.Quit closes.
// A request still queued then is dropped unanswered: its connection is
// closed.
func (s *Service) Work() {
	for {
		select {
		case <-s.d.Quit:
			return
		case j := <-s.jobs:
			s.Serve(&j.r, j.done)
		}
	}
}

// Serve ends one transaction on the calling goroutine and calls done with
// the answer, as a worker does with a queued request.
func (s *Service) Serve(r *EndRequest, done func(error)) {
	cfg := s.d.Config()
	v, err := s.halfMessage(r.CommitLogOffset)
	if err != nil {
		s.sampled.Warn().Err(err).Str("remote", r.Remote).Str("producerGroup", r.ProducerGroup).
			Int64("commitLogOffset", r.CommitLogOffset).Msg("end transaction refused")
		done(remoting.Refuse(remoting.SystemError, ErrHalfNotFound, "Find prepared transaction message failed"))
		return
	}
	if err := checkHalf(&cfg, r, &v); err != nil {
		s.sampled.Warn().Err(err).Str("remote", r.Remote).Str("producerGroup", r.ProducerGroup).
			Int64("commitLogOffset", r.CommitLogOffset).Msg("end transaction refused")
		done(err)
		return
	}
	key := txID(&v)
	first, ended := s.resolved.claim(key)
	if !first {
		// Ended, or being ended by another worker. Only once it has ended
		// may this half message's op record follow: an op record must never
		// reach the log before the commit it stands for.
		s.sampled.Info().Str("remote", r.Remote).Int64("queueOffset", v.QueueOffset).Bool("ended", ended).
			Msg("end transaction of a transaction already ended: op record only")
		if ended {
			if _, err := s.putOp(v.QueueID, v.QueueOffset); err != nil {
				s.log.Error().Err(err).Int64("queueOffset", v.QueueOffset).Msg("write transaction op record")
			}
		}
		done(nil)
		return
	}
	if r.CommitOrRollback == message.TransactionRollbk {
		if _, err := s.putOp(v.QueueID, v.QueueOffset); err != nil {
			// Apache answers SUCCESS too; the half message is checked again.
			s.log.Error().Err(err).Int64("queueOffset", v.QueueOffset).Msg("write transaction op record")
			s.resolved.release(key)
		} else {
			s.resolved.ended(key)
			s.d.Counts.RolledBack(string(message.PropertyBytes(v.Properties, message.PropRealTopic)))
		}
		done(nil)
		return
	}
	end, err := s.commitHalf(&cfg, &v)
	if err != nil {
		s.resolved.release(key)
		done(err)
		return
	}
	s.d.Counts.Committed(string(message.PropertyBytes(v.Properties, message.PropRealTopic)), v.BornTimestamp, time.Now().UnixMilli())
	if op, err := s.putOp(v.QueueID, v.QueueOffset); err != nil {
		// The commit is stored: answer SUCCESS as Apache does; the half
		// message will be checked, and its commit not stored again while
		// this broker remembers it (it stays claimed, not ended).
		s.log.Error().Err(err).Int64("queueOffset", v.QueueOffset).Msg("write transaction op record")
	} else {
		s.resolved.ended(key)
		end = op.PhysicalOffset + int64(op.WroteBytes)
	}
	need := cfg.Durability
	if need == 0 || string(message.PropertyBytes(v.Properties, message.PropWaitStoreMsgOK)) == "false" {
		done(nil)
		return
	}
	// Apache answers FLUSH_DISK_TIMEOUT, FLUSH_SLAVE_TIMEOUT and
	// SLAVE_NOT_AVAILABLE of the committed message SUCCESS
	// (sendFinalMessage): so does every outcome of the wait.
	s.d.Wait(end, need, func(error) { done(nil) })
}

// halfMessage reads and decodes the half message at a commit log offset,
// or fails when there is none (see the top of the file). The view's slices
// point into a copy of the record.
func (s *Service) halfMessage(off int64) (message.RecordView, error) {
	if off < s.d.Store.MinPhyOffset() || off >= s.d.Store.MaxPhyOffset() {
		return message.RecordView{}, fmt.Errorf("half message at %d: outside the commit log [%d, %d)",
			off, s.d.Store.MinPhyOffset(), s.d.Store.MaxPhyOffset())
	}
	rec, err := s.d.Store.MessageAt(off)
	if err != nil {
		return message.RecordView{}, fmt.Errorf("half message: %w", err)
	}
	v, _, err := message.DecodeRecordView(rec)
	if err != nil {
		return message.RecordView{}, fmt.Errorf("half message at %d: %w", off, err)
	}
	if string(v.Topic) != message.TransHalfTopic {
		return message.RecordView{}, fmt.Errorf("half message at %d: record of topic %q", off, v.Topic)
	}
	// Only a record the store indexed at that very offset is a message; a
	// record-like run of bytes inside a body is not.
	deadline := time.Now().Add(endTxDispatchWait)
	for {
		if es := s.d.Store.ReadQueue(message.TransHalfTopic, v.QueueID, v.QueueOffset, 1); len(es) > 0 {
			if es[0].QueueOffset != v.QueueOffset || es[0].PhyOffset != off || es[0].Size != int32(len(rec)) {
				return message.RecordView{}, fmt.Errorf("half message at %d: not the record of queue offset %d",
					off, v.QueueOffset)
			}
			return v, nil
		}
		// Not indexed yet: wait for the dispatcher only if it has not
		// passed that offset (then it never will index it).
		if s.d.Store.DispatchedPhyOffset() > off || time.Now().After(deadline) {
			return message.RecordView{}, fmt.Errorf("half message at %d: no consume queue entry at %d",
				off, v.QueueOffset)
		}
		select {
		case <-s.d.Quit:
			return message.RecordView{}, fmt.Errorf("half message at %d: %w", off, store.ErrClosed)
		case <-time.After(time.Millisecond): // the dispatcher runs behind the append by about that
		}
	}
}

// checkHalf is Apache's rejectCommitOrRollback and checkPrepareMessage.
func checkHalf(cfg *Config, r *EndRequest, v *message.RecordView) error {
	if !r.FromTransactionCheck {
		if s := message.PropertyBytes(v.Properties, message.PropCheckImmunityTimeSeconds); len(s) > 0 {
			if age := time.Now().UnixMilli() - v.BornTimestamp; age > immunityTime(string(s), cfg.TimeOut) {
				return &remoting.Refusal{Code: remoting.IllegalOperation, Err: ErrCheckImmunity}
			}
		}
	}
	if string(message.PropertyBytes(v.Properties, message.PropProducerGroup)) != r.ProducerGroup {
		return remoting.Refuse(remoting.SystemError, ErrHalfMismatch, "The producer group wrong")
	}
	if v.QueueOffset != r.TranStateTableOffset {
		return remoting.Refuse(remoting.SystemError, ErrHalfMismatch, "The transaction state table offset wrong")
	}
	if v.PhysicalOffset != r.CommitLogOffset {
		return remoting.Refuse(remoting.SystemError, ErrHalfMismatch, "The commit log offset wrong")
	}
	return nil
}

// immunityTime is TransactionalMessageUtil.getImmunityTime: the
// CHECK_IMMUNITY_TIME_IN_SECONDS property in ms, or transactionTimeOut when
// it is -1 or not a number.
func immunityTime(s string, transactionTimeOut int64) int64 {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n == -1 {
		return transactionTimeOut
	}
	return n * 1000
}

// commitHalf stores the committed message: the half message in its
// REAL_TOPIC/REAL_QID with the COMMIT sysFlag and the half message's offset
// as its prepared transaction offset, through the schedule hook (a DELAY it
// carries applies now). It returns the commit log offset it ends at.
//
// Properties: Apache 5.5's endMessageTransaction clears REAL_TOPIC and
// REAL_QID from the half message's properties and serialises them, then
// clears TRAN_MSG from the map, which the commit log never reads again:
// its committed records carry TRAN_MSG=true, PGROUP and the rest, without
// REAL_TOPIC and REAL_QID. rocketgo stores the same set.
func (s *Service) commitHalf(cfg *Config, v *message.RecordView) (int64, error) {
	topic := string(message.PropertyBytes(v.Properties, message.PropRealTopic))
	qid, err := strconv.Atoi(string(message.PropertyBytes(v.Properties, message.PropRealQueueID)))
	if topic == "" || err != nil {
		return 0, remoting.Refuse(remoting.SystemError, errNoRealTopic, "Find prepared transaction message failed")
	}
	if err := s.d.CheckRealTopic(topic, qid); err != nil {
		return 0, fmt.Errorf("%w: %w", remoting.Refuse(remoting.MessageIllegal, message.ErrTopicInvalid, "%s", endTxIllegalRemark(cfg)), err)
	}
	m := store.PutMessage{
		Topic:                     topic,
		QueueID:                   int32(qid),
		Flag:                      v.Flag,
		Body:                      v.Body,
		Properties:                message.DeleteProperties(string(v.Properties), message.PropRealTopic, message.PropRealQueueID),
		SysFlag:                   v.SysFlag&^message.TransactionMask | message.TransactionCommit,
		BornTimestamp:             v.BornTimestamp,
		BornHost:                  v.BornHost,
		StoreHost:                 v.StoreHost,
		ReconsumeTimes:            v.ReconsumeTimes,
		PreparedTransactionOffset: v.PhysicalOffset,
	}
	pr, err := s.d.Commit(&m)
	if err != nil {
		s.sampled.Error().Err(err).Str("topic", topic).Int("queueId", qid).Msg("store committed message")
		return 0, endTxPutRefusal(cfg, err)
	}
	return pr.PhysicalOffset + int64(pr.WroteBytes), nil
}

func endTxIllegalRemark(cfg *Config) string {
	return fmt.Sprintf("The message is illegal, maybe msg body or properties length not matched. msg body length "+
		"limit %dB, msg properties length limit 32KB.", cfg.MaxMessageSize)
}

// endTxPutRefusal is EndTransactionProcessor.sendFinalMessage's answer to a
// committed message the store refused.
func endTxPutRefusal(cfg *Config, err error) error {
	var r *remoting.Refusal
	switch {
	case errors.As(err, &r):
		return err // the schedule hook's (timer) refusal
	case errors.Is(err, store.ErrMessageTooLarge), errors.Is(err, store.ErrPropertiesTooLarge),
		errors.Is(err, store.ErrTopicTooLong), errors.Is(err, store.ErrBadTopic), errors.Is(err, store.ErrBadQueueID):
		r = remoting.Refuse(remoting.MessageIllegal, nil, "%s", endTxIllegalRemark(cfg))
	case errors.Is(err, store.ErrClosed), errors.Is(err, store.ErrNotStarted), errors.Is(err, store.ErrDiskFull):
		r = remoting.Refuse(remoting.ServiceNotAvailable, nil, "Service not available now.")
	case errors.Is(err, store.ErrResource):
		r = remoting.Refuse(remoting.SystemError, nil, "Create mapped file failed.")
	default:
		r = remoting.Refuse(remoting.SystemError, nil, "UNKNOWN_ERROR")
	}
	r.Err = err
	return r
}

// resolvedTxsMax is how many recently ended transactions END_TRANSACTION
// remembers (about 1.5 MB).
const resolvedTxsMax = 1 << 16

// resolvedTxs are the transactions (txID) END_TRANSACTION ended lately, so that a
// second END_TRANSACTION of one — the producer's own arriving after it
// answered a check, an answer to an earlier copy, a repeated request —
// writes an op record for the half message it names (which ends that copy's
// checks) but stores no second commit, nor a commit after a rollback.
// Apache stores a commit for each. A set bounded by a ring of the last
// resolvedTxsMax; past a restart or the ring, the check service's op set
// (check.go) keeps a transaction from being asked
// about again.
type resolvedTxs struct {
	mu   sync.Mutex
	set  map[uint64]bool // claimed; true once ended
	ring [resolvedTxsMax]uint64
	next int
	full bool
}

// claim records k and reports whether it was not there (the caller ends
// the transaction, then calls ended or release), else whether the one who
// claimed it ended it.
func (rs *resolvedTxs) claim(k uint64) (first, ended bool) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if e, ok := rs.set[k]; ok {
		return false, e
	}
	if rs.full {
		delete(rs.set, rs.ring[rs.next])
	}
	rs.ring[rs.next] = k
	rs.set[k] = false
	if rs.next++; rs.next == resolvedTxsMax {
		rs.next, rs.full = 0, true
	}
	return true, false
}

// ended records that k's transaction ended: its op record is in the log.
func (rs *resolvedTxs) ended(k uint64) {
	rs.mu.Lock()
	if _, ok := rs.set[k]; ok {
		rs.set[k] = true
	}
	rs.mu.Unlock()
}

// release forgets k: ending the transaction failed. (Its ring slot stays;
// evicting it later may forget a later claim of k early, which only
// shortens what is remembered.)
func (rs *resolvedTxs) release(k uint64) {
	rs.mu.Lock()
	delete(rs.set, k)
	rs.mu.Unlock()
}
