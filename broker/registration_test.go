package broker

import (
	"fmt"
	"testing"

	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/namesrv"
	"github.com/rocketgo/rocketgo/remoting"
)

func regTopics(n int) []*tables.TopicConfig {
	out := make([]*tables.TopicConfig, n)
	for i := range out {
		tc := tables.TopicConfig{TopicName: fmt.Sprintf("%%RETRY%%group-%06d", i), ReadQueueNums: 1, WriteQueueNums: 1, Perm: 6}
		if i%3 == 0 {
			tc.Attributes = map[string]string{"+message.type": "NORMAL"}
		}
		tables.Normalize(&tc)
		out[i] = &tc
	}
	return out
}

// TestRegistrationBodies checks both body forms against the name server's
// decoders, and that the size estimate that decides an automatic split is
// an upper bound of the JSON body.
func TestRegistrationBodies(t *testing.T) {
	r := &registrar{b: brokerWith(DefaultConfig())}
	topics := regTopics(1000)
	v := remoting.DataVersion{Counter: 7, StateVersion: 1, Timestamp: 1700000000000}
	for _, compressed := range []bool{false, true} {
		r.b.updateConfig(func(c *Config) { c.CompressedRegister = compressed })
		body, err := r.encode(topics, v)
		if err != nil {
			t.Fatal(err)
		}
		var rb namesrv.RegisterBody
		if compressed {
			if !namesrv.IsZlib(body) {
				t.Fatalf("compressed body does not start with a zlib header: % x", body[:2])
			}
			rb, err = namesrv.DecodeCompressedRegisterBody(body, namesrv.DefaultMaxRegisterBodyInflated)
		} else {
			if namesrv.IsZlib(body) {
				t.Fatal("JSON body taken for zlib")
			}
			rb, err = namesrv.DecodeRegisterBody(body, 409)
			if est := r.estimate(topics); est < len(body) {
				t.Errorf("estimate %d below the JSON body's %d bytes", est, len(body))
			}
		}
		if err != nil {
			t.Fatalf("compressed=%v: %v", compressed, err)
		}
		w := rb.TopicConfigSerializeWrapper
		if len(w.TopicConfigTable) != len(topics) || w.DataVersion != (namesrv.DataVersion{Counter: 7, StateVersion: 1, Timestamp: 1700000000000}) {
			t.Fatalf("compressed=%v: %d topics, version %+v", compressed, len(w.TopicConfigTable), w.DataVersion)
		}
		got := w.TopicConfigTable[topics[42].TopicName]
		if got != (namesrv.TopicConfig{TopicName: topics[42].TopicName, ReadQueueNums: 1, WriteQueueNums: 1, Perm: 6}) {
			t.Errorf("compressed=%v: topic %+v", compressed, got)
		}
		t.Logf("compressed=%v: %d topics in %d bytes", compressed, len(topics), len(body))
	}
}

func TestChunk(t *testing.T) {
	topics := regTopics(10)
	for _, tc := range []struct {
		size     int
		withRest bool
		want     []int
	}{
		{4, true, []int{4, 4, 2}},
		{5, true, []int{5, 5, 0}}, // Apache sends the (empty) rest too
		{5, false, []int{5, 5}},
		{20, true, []int{10}},
	} {
		parts := chunk(topics, tc.size, tc.withRest)
		var got []int
		for _, p := range parts {
			got = append(got, len(p))
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("chunk(10, %d, %v) = %v, want %v", tc.size, tc.withRest, got, tc.want)
		}
	}
}

// The broker's cost of one full registration of 100,000 topics, per body
// form (the topics are sorted once per registration too).
func BenchmarkRegistrationBody100k(b *testing.B) {
	topics := regTopics(100_000)
	v := remoting.DataVersion{Counter: 1}
	for _, tc := range []struct {
		name              string
		compressed, split bool
	}{{"json", false, false}, {"compressed", true, false}, {"split-json", false, true}} {
		b.Run(tc.name, func(b *testing.B) {
			r := &registrar{b: brokerWith(DefaultConfig())}
			r.b.updateConfig(func(c *Config) { c.CompressedRegister = tc.compressed })
			b.ReportAllocs()
			var n int
			for b.Loop() {
				parts := [][]*tables.TopicConfig{topics}
				if tc.split {
					parts = chunk(topics, r.b.Config().SplitRegistrationSize, true)
				}
				n = 0
				for _, p := range parts {
					body, err := r.encode(p, v)
					if err != nil {
						b.Fatal(err)
					}
					n += len(body)
				}
			}
			b.ReportMetric(float64(n), "bytes/registration")
		})
	}
}
