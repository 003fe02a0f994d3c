package main

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/rocketgo/rocketgo/internal/adminclient"
)

// producer lists the producers connected to the broker of -b, by group in
// the order of the broker's answer (Apache's tool walks the HashMap it
// decodes), each as ProducerInfo.toString.
func producer(a *admin, o *options, args []string) error {
	broker := o.Req("b", "broker", "broker address")
	if err := a.parse(o, args); err != nil {
		return err
	}
	groups, err := a.AllProducerInfo(strings.TrimSpace(*broker))
	if err != nil {
		return err
	}
	for _, g := range groups {
		if len(g.Producers) == 0 {
			fmt.Fprintf(a.out, "producer group (%s) instances are empty\n", g.Group)
			continue
		}
		for _, p := range g.Producers {
			fmt.Fprintf(a.out, "producer group (%s) instance : clientId=%s,remoteIP=%s, language=%s, version=%d, lastUpdateTimestamp=%d\n",
				g.Group, p.ClientID, p.RemoteIP, p.Language, p.Version, p.LastUpdateTimestamp)
		}
	}
	return nil
}

// checkMsgSendRT sends -a messages of -s bytes to the topic, the i-th to
// the i-th of its publish queues round the list (Apache's selector), and
// prints each send's queue, success and time in ms, then the mean time
// leaving out the first send.
func checkMsgSendRT(a *admin, o *options, args []string) error {
	topic := o.Req("t", "topic", "topic name")
	amount := o.Int64("a", "amount", 100, "message amount | default 100")
	size := o.Int64("s", "size", 128, "message size | default 128 Byte")
	if err := a.parse(o, args); err != nil {
		return err
	}
	if *size > maxToolMessage {
		return fmt.Errorf("-s %d: over %d bytes", *size, maxToolMessage)
	}
	t := strings.TrimSpace(*topic)
	// Apache's producer group: the time in ms
	group := strconv.FormatInt(time.Now().UnixMilli(), 10)
	m := adminclient.OutMessage{Topic: t, Body: bytes.Repeat([]byte{'a'}, int(max(*size, 0)))}
	r, err := a.Route(t)
	if err != nil {
		return err
	}
	queues, err := r.PublishQueues(t)
	if err != nil {
		return err
	}
	if len(queues) == 0 {
		return fmt.Errorf("no writable queue in the route of %s", t)
	}
	fmt.Fprintf(a.out, "%-32s  %-4s  %-20s    %s\n", "#Broker Name", "#QID", "#Send Result", "#RT")
	var elapsed int64
	for i := int64(0); i < *amount; i++ {
		q := queues[i%int64(len(queues))]
		start := time.Now()
		_, err := a.SendRoute(r, group, m, q.BrokerName, q.QueueID)
		took := time.Since(start).Milliseconds()
		if i != 0 {
			elapsed += took
		}
		if err != nil { // Apache prints false and goes on
			fmt.Fprintf(a.errOut, "%v\n", err)
		}
		fmt.Fprintf(a.out, "%-32s  %-4d  %-20t    %d\n", q.BrokerName, q.QueueID, err == nil, took)
	}
	fmt.Fprintf(a.out, "Avg RT: %.2f\n", float64(elapsed)/float64(*amount-1))
	return nil
}

// maxToolMessage bounds a body the tool builds from a size it is given:
// Apache's default maxMessageSize.
const maxToolMessage = 4 << 20

// sendMsgStatus sends -c messages of about -s bytes ("hello jodie"
// repeated) to the topic named like the broker of -b (every broker serves
// one), after one of 16 bytes, and prints each send's time and result.
func sendMsgStatus(a *admin, o *options, args []string) error {
	broker := o.Req("b", "brokerName", "Broker Name e.g. clusterName_brokerName as DefaultCluster_broker-a")
	size := o.Int32("s", "messageSize", 128, "Message Size, Default: 128")
	count := o.Int32("c", "count", 50, "send message count, Default: 50")
	if err := a.parse(o, args); err != nil {
		return err
	}
	if *size > maxToolMessage {
		return fmt.Errorf("-s %d: over %d bytes", *size, maxToolMessage)
	}
	t := strings.TrimSpace(*broker)
	body := func(n int32) []byte {
		var b []byte
		for i := int32(0); i < n; i += 11 {
			b = append(b, "hello jodie"...)
		}
		return b
	}
	r, err := a.Route(t)
	if err != nil {
		return err
	}
	const group = "PID_SMSC"
	if _, err := a.SendRoute(r, group, adminclient.OutMessage{Topic: t, Body: body(16)}, "", -1); err != nil {
		return err
	}
	m := adminclient.OutMessage{Topic: t, Body: body(*size)}
	for i := int32(0); i < *count; i++ {
		start := time.Now()
		res, err := a.SendRoute(r, group, m, "", -1)
		if err != nil {
			return err
		}
		fmt.Fprintf(a.out, "rt=%dms, SendResult=SendResult [sendStatus=%s, msgId=%s, offsetMsgId=%s, messageQueue=%s, queueOffset=%d, recallHandle=null]\n",
			time.Since(start).Milliseconds(), res.Status, res.MsgID, res.OffsetMsgID, mqString(res.Queue), res.QueueOffset)
	}
	return nil
}
