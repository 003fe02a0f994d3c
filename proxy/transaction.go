package proxy

import (
	"context"
	"strconv"
	"sync"
	"time"

	v2 "github.com/rocketgo/rocketgo/apis/v2"

	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
)

// Transactions through the proxy (Apache's ClusterTransactionService):
// a half message's broker and offsets are remembered under its producer
// group (the topic) and transaction id until the client ends it; the
// producer group is heartbeated to the brokers holding its half messages,
// so that a broker's CHECK_TRANSACTION_STATE reaches the proxy, which
// relays it to one of the group's clients as RecoverOrphanedTransactionCommand.

// txData is what END_TRANSACTION needs besides the client's decision.
type txData struct {
	producerGroup        string
	transactionID        string
	brokerName           string
	brokerAddr           string
	topic                string
	msgID                string
	commitLogOffset      int64
	tranStateTableOffset int64
	expires              time.Time
}

// maxTxData bounds the transaction data kept in all (a client that sends
// half messages and never ends them cannot grow it past this).
const maxTxData = 200_000

type transactions struct {
	expire time.Duration
	perKey int

	mu   sync.Mutex
	data map[string][]txData // producerGroup + "\x00" + transactionId
	n    int
}

func newTransactions(cfg Config) *transactions {
	return &transactions{expire: time.Duration(cfg.TransactionDataExpireMillis) * time.Millisecond,
		perKey: max(1, cfg.TransactionDataMaxNum), data: make(map[string][]txData)}
}

func txKey(group, id string) string { return group + "\x00" + id }

func (t *transactions) add(d txData, now time.Time) {
	d.expires = now.Add(t.expire)
	k := txKey(d.producerGroup, d.transactionID)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.n >= maxTxData {
		t.sweepLocked(now)
		if t.n >= maxTxData {
			return // full of live entries: this one ends with INVALID_TRANSACTION_ID
		}
	}
	l := t.data[k]
	if len(l) >= t.perKey {
		l = l[1:]
		t.n--
	}
	t.data[k] = append(l, d)
	t.n++
}

// take removes and returns the newest data for the key.
func (t *transactions) take(group, id string, now time.Time) (txData, bool) {
	k := txKey(group, id)
	t.mu.Lock()
	defer t.mu.Unlock()
	l := t.data[k]
	for len(l) > 0 {
		d := l[len(l)-1]
		l = l[:len(l)-1]
		t.n--
		if now.Before(d.expires) {
			if len(l) == 0 {
				delete(t.data, k)
			} else {
				t.data[k] = l
			}
			return d, true
		}
	}
	delete(t.data, k)
	return txData{}, false
}

func (t *transactions) sweep(now time.Time) {
	t.mu.Lock()
	t.sweepLocked(now)
	t.mu.Unlock()
}

func (t *transactions) sweepLocked(now time.Time) {
	for k, l := range t.data {
		keep := l[:0]
		for _, d := range l {
			if now.Before(d.expires) {
				keep = append(keep, d)
			}
		}
		t.n -= len(l) - len(keep)
		if len(keep) == 0 {
			delete(t.data, k)
		} else {
			t.data[k] = keep
		}
	}
}

// EndTransaction sends END_TRANSACTION to the broker holding the half
// message (Apache's EndTransactionActivity / TransactionService).
func (s *Server) EndTransaction(ctx context.Context, req *v2.EndTransactionRequest) (*v2.EndTransactionResponse, error) {
	if err := validateTopic(req.GetTopic()); err != nil {
		return &v2.EndTransactionResponse{Status: statusOf(err)}, nil
	}
	if req.GetTransactionId() == "" {
		return &v2.EndTransactionResponse{Status: statusOf(refuse(v2.Code_INVALID_TRANSACTION_ID, "transaction id cannot be empty"))}, nil
	}
	var commitOrRollback int64 // TransactionStatus UNKNOWN: TRANSACTION_NOT_TYPE
	switch req.GetResolution() {
	case v2.TransactionResolution_COMMIT:
		commitOrRollback = int64(message.TransactionCommit)
	case v2.TransactionResolution_ROLLBACK:
		commitOrRollback = int64(message.TransactionRollbk)
	}
	group := req.GetTopic().GetName()
	d, ok := s.txs.take(group, req.GetTransactionId(), time.Now())
	if !ok {
		// Apache's TRANSACTION_DATA_NOT_FOUND has no v2 code mapped: it
		// answers INTERNAL_SERVER_ERROR (checked against its proxy).
		return &v2.EndTransactionResponse{Status: statusOf(refuse(v2.Code_INTERNAL_SERVER_ERROR,
			"cannot found transaction data"))}, nil
	}
	if commitOrRollback == 0 {
		// Apache's endTransaction with UNKNOWN sends nothing: the broker
		// checks again later.
		return &v2.EndTransactionResponse{Status: okStatus()}, nil
	}
	r := remoting.NewRequest(remoting.EndTransaction, nil, nil)
	r.Set("producerGroup", group)
	r.SetInt64("tranStateTableOffset", d.tranStateTableOffset)
	r.SetInt64("commitLogOffset", d.commitLogOffset)
	r.SetInt64("commitOrRollback", commitOrRollback)
	r.Set("fromTransactionCheck", strconv.FormatBool(req.GetSource() == v2.TransactionSource_SOURCE_SERVER_CHECK))
	r.Set("msgId", req.GetMessageId())
	r.Set("transactionId", req.GetTransactionId())
	r.Set("bname", d.brokerName)
	if err := s.cluster.cl.InvokeOneway(ctx, d.brokerAddr, r); err != nil {
		return &v2.EndTransactionResponse{Status: statusOf(err)}, nil
	}
	return &v2.EndTransactionResponse{Status: okStatus()}, nil
}

// brokerCheck is a CHECK_TRANSACTION_STATE a broker sent to the proxy.
type brokerCheck struct {
	addr string
	req  *remoting.Command
}

// maxPendingChecks bounds the checks waiting for the relay worker; more
// are dropped (the broker checks again).
const maxPendingChecks = 4096

// onBrokerRequest is the Remoting client's handler for requests brokers
// send on the proxy's connections; it runs on a connection reader and only
// queues.
func (s *Server) onBrokerRequest(addr string, req *remoting.Command) {
	if req.Code == remoting.NotifyUnsubscribeLite {
		s.notifyUnsubscribeLite(addr, req)
		return
	}
	if req.Code != remoting.CheckTransactionState {
		s.sampled.Debug().Int32("code", req.Code).Str("remote", addr).Msg("ignoring request from broker")
		return
	}
	select {
	case s.checks <- brokerCheck{addr: addr, req: req}:
	default:
		s.sampled.Warn().Str("remote", addr).Msg("transaction check dropped, relay queue full")
	}
}

// checkRelay turns the brokers' checks into RecoverOrphanedTransactionCommand
// on a telemetry stream of the message's producer group.
func (s *Server) checkRelay() {
	turn := 0
	for {
		select {
		case <-s.quit:
			return
		case bc := <-s.checks:
			turn++
			s.relayCheck(bc, turn)
		}
	}
}

func (s *Server) relayCheck(bc brokerCheck, turn int) {
	rec, _, err := message.DecodeRecord(bc.req.Body)
	if err != nil {
		s.sampled.Warn().Err(err).Str("remote", bc.addr).Msg("transaction check with an undecodable message")
		return
	}
	props := message.ParseProperties(rec.Properties)
	group := props[message.PropProducerGroup]
	txID := bc.req.Str("transactionId")
	if txID == "" {
		txID = props[message.PropUniqClientMessageID]
	}
	tso, _ := strconv.ParseInt(bc.req.Str("tranStateTableOffset"), 10, 64)
	clo, _ := strconv.ParseInt(bc.req.Str("commitLogOffset"), 10, 64)
	c := s.clients.producerOf(group, turn)
	if c == nil {
		s.sampled.Warn().Str("producerGroup", group).Msg("transaction check: no client of the group has a telemetry stream")
		return
	}
	s.txs.add(txData{producerGroup: group, transactionID: txID, brokerName: bc.req.Str("bname"), brokerAddr: bc.addr,
		topic: rec.Topic, msgID: props[message.PropUniqClientMessageID], commitLogOffset: clo, tranStateTableOffset: tso}, time.Now())
	m := messageOf(&rec, props, "")
	if !c.send(&v2.TelemetryCommand{Command: &v2.TelemetryCommand_RecoverOrphanedTransactionCommand{
		RecoverOrphanedTransactionCommand: &v2.RecoverOrphanedTransactionCommand{Message: m, TransactionId: txID}}}) {
		s.sampled.Warn().Str("producerGroup", group).Str("clientId", c.id).Msg("transaction check: telemetry write failed")
	}
}

// noteTxGroup records that producer group has half messages on the broker
// at addr, so the heartbeat loop registers it there.
func (s *Server) noteTxGroup(addr, group string) {
	s.txGroupsMu.Lock()
	defer s.txGroupsMu.Unlock()
	if s.txGroups == nil {
		s.txGroups = make(map[string]map[string]time.Time)
	}
	g := s.txGroups[addr]
	if g == nil {
		g = make(map[string]time.Time)
		s.txGroups[addr] = g
	}
	_, known := g[group]
	if len(g) < maxTxGroups || known {
		g[group] = time.Now()
	}
	if !known {
		select {
		case s.beat <- struct{}{}: // register now, not at the next period
		default:
		}
	}
}
