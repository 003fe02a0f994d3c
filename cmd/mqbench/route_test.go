package main

import (
	"bytes"
	"net"
	"slices"
	"strings"
	"testing"

	jsoniter "github.com/json-iterator/go"
	"github.com/rocketgo/rocketgo/remoting"
)

func TestTopicSpread(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		n     int
		names []string
	}{
		{"one topic keeps its name", 1, []string{"T"}},
		{"zero is one", 0, []string{"T"}},
		{"numbered", 3, []string{"T_0", "T_1", "T_2"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := topicNames("T", c.n); !slices.Equal(got, c.names) {
				t.Fatalf("topicNames = %q, want %q", got, c.names)
			}
		})
	}
	first := []target{{addr: "a", brokerName: "b", topic: "T_0", queueID: 0}, {addr: "a", brokerName: "b", topic: "T_0", queueID: 1}}
	got := spreadTopics(first, topicNames("T", 3))
	var seq []string
	for _, tg := range got {
		if tg.addr != "a" || tg.brokerName != "b" {
			t.Fatalf("target %+v lost its broker", tg)
		}
		seq = append(seq, tg.topic+":"+string(rune('0'+tg.queueID)))
	}
	want := []string{"T_0:0", "T_1:0", "T_2:0", "T_0:1", "T_1:1", "T_2:1"}
	if !slices.Equal(seq, want) {
		t.Fatalf("spread = %q, want the topic varying fastest %q", seq, want)
	}
}

func TestShare(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		count int64
		n     int
		want  []int64
	}{{0, 3, []int64{0, 0, 0}}, {7, 3, []int64{3, 2, 2}}, {2, 4, []int64{1, 1, 0, 0}}} {
		var got []int64
		for i := range c.n {
			got = append(got, share(c.count, c.n, i))
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("share(%d over %d) = %v, want %v", c.count, c.n, got, c.want)
		}
	}
}

func TestRouteQueryFrame(t *testing.T) {
	q := &querier{window: 4, start: make([]int64, 4), topics: []string{"A", "B"}, c: &pconn{}}
	q.c.w.ser = remoting.RocketMQ
	q.c.w.buf = make([]byte, 0, 4096)
	q.appendQuery(0) // warm
	if n := testing.AllocsPerRun(100, func() {
		q.c.w.buf = q.c.w.buf[:0]
		q.appendQuery(1)
	}); n != 0 {
		t.Errorf("appendQuery allocates %.1f times", n)
	}
	var topics []string
	for range 2 {
		q.c.w.buf = q.c.w.buf[:0]
		q.appendQuery(2)
		c, err := remoting.DecodeFrame(q.c.w.buf[4:])
		if err != nil || c.Code != remoting.GetRouteInfoByTopic || c.Opaque%4 != 2 {
			t.Fatalf("decoded %+v, %v", c, err)
		}
		topics = append(topics, c.Str("topic"))
	}
	if topics[0] == topics[1] {
		t.Fatalf("consecutive queries ask for %q twice: want round robin", topics[0])
	}
}

func TestIdleRequests(t *testing.T) {
	t.Parallel()
	for _, ser := range []remoting.SerializeType{remoting.RocketMQ, remoting.JSON} {
		o := &options{ser: ser, group: `g"1`, topic: "T"}
		c, err := remoting.DecodeFrame(idleRequest(o, 7, true)[4:])
		if err != nil || c.Code != remoting.HeartBeat || c.Opaque != 7 {
			t.Fatalf("%s heartbeat: %+v, %v", ser, c, err)
		}
		var hb struct {
			ClientID    string `json:"clientID"`
			ProducerSet []struct {
				GroupName string `json:"groupName"`
			} `json:"producerDataSet"`
			ConsumerSet []jsoniter.RawMessage `json:"consumerDataSet"`
		}
		if err := json.Unmarshal(c.Body, &hb); err != nil || hb.ClientID == "" || len(hb.ProducerSet) != 1 ||
			hb.ProducerSet[0].GroupName != `g"1` || hb.ConsumerSet == nil {
			t.Fatalf("%s heartbeat body %s: %+v, %v", ser, c.Body, hb, err)
		}
		c, err = remoting.DecodeFrame(idleRequest(o, 8, false)[4:])
		if err != nil || c.Code != remoting.GetRouteInfoByTopic || c.Str("topic") != "T" {
			t.Fatalf("%s route: %+v, %v", ser, c, err)
		}
	}
}

// Connections that fail in different ways (an error of one type, then of
// another) are counted, and the first failure is printed: the run goes on.
func TestIdleFailuresOfSeveralKinds(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for i := 0; ; i++ {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if i%2 == 1 {
				_, _ = c.Write([]byte{0, 0, 0, 1}) // a frame length below 4
			}
			c.Close() // else EOF
		}
	}()
	o := &options{ser: remoting.RocketMQ, group: "g", topic: "T", conns: 40, broker: ln.Addr().String()}
	var out bytes.Buffer
	stop := make(chan struct{})
	close(stop)
	if err := runIdle(o, nil, &out, stop); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "IDLE open=0 failed=40") || !strings.Contains(out.String(), "# first failure: ") {
		t.Fatalf("output:\n%s", out.String())
	}
}
