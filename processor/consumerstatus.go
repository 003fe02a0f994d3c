package processor

// INVOKE_BROKER_TO_GET_CONSUMER_STATUS (223, mqadmin consumerStatus): the
// broker asks each live member of the group (or the one client named) for
// its offsets of a topic with GET_CONSUMER_STATUS_FROM_CLIENT (221) and
// answers what came back, client by client, as Apache's
// Broker2Client.getConsumeStatus does. Apache asks the members one after
// another, each with a 5 s wait; here they are asked at once, each with the
// same wait, so the answer comes within 5 s whatever the group's size. A
// member that does not answer in time, cannot be asked, refuses or answers
// garbage is left out of the table, with a log line, as in Apache.

import (
	"fmt"
	"sync"
	"time"

	"github.com/rocketgo/rocketgo/broker/admin"
	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/remoting"
)

// topicAndGroup reads the topic and group fields the requests of a group's
// state on a topic carry (223, 222, 303).
func topicAndGroup(req *remoting.Command) (topic, group string, err error) {
	if topic, err = req.RequireStr("topic"); err != nil {
		return "", "", err
	}
	group, err = req.RequireStr("group")
	return topic, group, err
}

// consumerStatusTimeout is Broker2Client.getConsumeStatus's invokeSync
// timeout (a variable for the tests of clients that never answer).
var consumerStatusTimeout = 5 * time.Second

func (p *brokerProcs) consumerStatus(c *remoting.Conn, req *remoting.Command) *remoting.Command {
	topic, group, err := topicAndGroup(req)
	if err != nil {
		return p.fail(req, err)
	}
	members := p.clients.ConsumerMembers(group)
	if len(members) == 0 {
		return remoting.NewResponse(req, remoting.SystemError,
			fmt.Sprintf("No Any Consumer online in the consumer group: [%s]", group))
	}
	// clientAddr names a client id (Apache compares it with clientId) and
	// asks that one only: the first connection that carries it.
	if origin := req.Str("clientAddr"); origin != "" {
		var one []tables.ConsumerMember
		for _, m := range members {
			if m.ClientID == origin {
				one = append(one, m)
				break
			}
		}
		members = one
	}
	p.log.Info().Str("remote", c.Remote).Str("topic", topic).Str("consumerGroup", group).
		Int("clients", len(members)).Msg("get consumer status")
	if len(members) == 0 {
		return okBody(req, admin.AppendConsumerStatus(nil, nil))
	}
	// req is recycled when the handler returns: the answer is made from a
	// copy of what it needs.
	st := &statusCalls{
		p: p, c: c, topic: topic, group: group, left: len(members),
		answers: make([]*admin.ClientOffsets, len(members)),
		head:    &remoting.Command{Code: req.Code, Opaque: req.Opaque, Serialize: req.Serialize, Began: req.Began},
	}
	for i, m := range members {
		ask := remoting.NewRequest(remoting.GetConsumerStatusFromClient, map[string]string{"topic": topic, "group": group}, nil)
		err := m.Conn.Invoke(ask, consumerStatusTimeout, func(ans *remoting.Command, err error) { st.answered(i, m, ans, err) })
		if err != nil {
			st.answered(i, m, nil, err)
		}
	}
	return nil // answered by the last call to end
}

// statusCalls gathers the members' answers; the last one to end answers
// the tool.
type statusCalls struct {
	p            *brokerProcs
	c            *remoting.Conn
	head         *remoting.Command
	topic, group string

	mu      sync.Mutex
	left    int
	answers []*admin.ClientOffsets // by member, nil for one left out
}

func (st *statusCalls) answered(i int, m tables.ConsumerMember, ans *remoting.Command, err error) {
	var offs *admin.ClientOffsets
	switch {
	case err != nil:
		st.p.log.Warn().Err(err).Str("topic", st.topic).Str("consumerGroup", st.group).Str("clientId", m.ClientID).
			Str("remote", m.Conn.Remote).Msg("get consumer status: client not asked or no answer")
	case ans.Code != remoting.Success || ans.Body == nil:
		// Apache leaves out a client that answers without a table.
	default:
		qs, perr := admin.ParseClientConsumerStatus(ans.Body)
		if perr != nil {
			st.p.log.Warn().Err(perr).Str("topic", st.topic).Str("consumerGroup", st.group).Str("clientId", m.ClientID).
				Str("remote", m.Conn.Remote).Msg("get consumer status: client's answer unreadable")
			break
		}
		offs = &admin.ClientOffsets{ClientID: m.ClientID, Offsets: qs}
	}
	st.mu.Lock()
	st.answers[i] = offs
	st.left--
	last := st.left == 0
	st.mu.Unlock()
	if !last {
		return
	}
	// A client id seen twice (two connections) keeps its first place and
	// its last answer, as a HashMap put does.
	var table []admin.ClientOffsets
	at := make(map[string]int, len(st.answers))
	for _, a := range st.answers {
		if a == nil {
			continue
		}
		if j, ok := at[a.ClientID]; ok {
			table[j] = *a
			continue
		}
		at[a.ClientID] = len(table)
		table = append(table, *a)
	}
	st.c.Reply(okBody(st.head, admin.AppendConsumerStatus(nil, table)))
}
