package metrics

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/rocketgo/rocketgo/remoting"
)

// TestRPCLabels: Apache's names for known codes, the number for an unknown
// one until maxRPCSeries label sets, then "other"; a late pull answer is a
// long poll.
func TestRPCLabels(t *testing.T) {
	r := newRPC(prometheus.Labels{"cluster": "C"})
	resp := &remoting.Command{Code: remoting.Success}
	r.After(remoting.Exchange{Code: remoting.SendMessageV2, Resp: resp, Took: 2 * time.Millisecond})
	r.After(remoting.Exchange{Code: remoting.PullMessage, Resp: &remoting.Command{Code: 19}, Took: time.Second, Late: true})
	r.After(remoting.Exchange{Code: 777777, Resp: &remoting.Command{Code: remoting.RequestCodeNotSupported}})
	got := series(t, r)
	for _, want := range []string{
		"send_message_v2/success/false",
		"pull_message/pull_not_found/true",
		"777777/request_code_not_supported/false",
	} {
		if got[want] != 1 {
			t.Errorf("series %s: %v", want, got)
		}
	}
	for i := 0; i < 2*maxRPCSeries; i++ {
		r.After(remoting.Exchange{Code: int32(1_000_000 + i), Resp: resp})
	}
	got = series(t, r)
	if len(got) > maxRPCSeries+1 || got["other/success/false"] == 0 {
		t.Fatalf("%d series, other=%d", len(got), got["other/success/false"])
	}
}

func series(t *testing.T, r *RPC) map[string]uint64 {
	t.Helper()
	ch := make(chan prometheus.Metric, 4096)
	r.hist.Collect(ch)
	close(ch)
	out := map[string]uint64{}
	for m := range ch {
		d, l := sample(t, m)
		out[l["request_code"]+"/"+l["response_code"]+"/"+l["is_long_polling"]] += d.GetHistogram().GetSampleCount()
	}
	return out
}

// BenchmarkRPCAfter is the interceptor's cost per answered request.
func BenchmarkRPCAfter(b *testing.B) {
	r := newRPC(nil)
	resp := &remoting.Command{Code: remoting.Success}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			r.After(remoting.Exchange{Code: remoting.SendMessageV2 + int32(i&1), Resp: resp, Took: time.Millisecond})
			i++
		}
	})
}

// TestCreateTimes: topic and group creations are timed by outcome, a system
// topic's apart; other requests are not.
func TestCreateTimes(t *testing.T) {
	r := newRPC(nil)
	ok, bad := &remoting.Command{Code: remoting.Success}, &remoting.Command{Code: remoting.InvalidParameter}
	topic := func(name string) *remoting.Command {
		return remoting.NewRequest(remoting.UpdateAndCreateTopic, map[string]string{"topic": name}, nil)
	}
	r.After(remoting.Exchange{Code: remoting.UpdateAndCreateTopic, Req: topic("T"), Resp: ok, Took: 20 * time.Millisecond})
	r.After(remoting.Exchange{Code: remoting.UpdateAndCreateTopic, Req: topic("T"), Resp: bad})
	r.After(remoting.Exchange{Code: remoting.UpdateAndCreateTopic, Req: topic("SCHEDULE_TOPIC_XXXX"), Resp: ok})
	r.After(remoting.Exchange{Code: remoting.UpdateAndCreateSubscription, Resp: ok, Took: 2 * time.Second})
	r.After(remoting.Exchange{Code: remoting.SendMessageV2, Resp: ok})
	got := map[string]uint64{}
	for name, v := range map[string]*prometheus.HistogramVec{"topic": r.creates.topic, "group": r.creates.group} {
		ch := make(chan prometheus.Metric, 16)
		v.Collect(ch)
		close(ch)
		for m := range ch {
			var d dto.Metric
			if err := m.Write(&d); err != nil {
				t.Fatal(err)
			}
			k := name
			for _, p := range d.GetLabel() {
				k += "/" + p.GetValue()
			}
			got[k] = d.GetHistogram().GetSampleCount()
			if k == "group/success" && d.GetHistogram().GetBucket()[2].GetCumulativeCount() != 0 { // 2 s: above 1000
				t.Errorf("a 2 s creation in the 1 s bucket: %v", d.GetHistogram())
			}
		}
	}
	want := map[string]uint64{"topic/success/false": 1, "topic/failure/false": 1, "topic/success/true": 1, "group/success": 1}
	if len(got) != len(want) {
		t.Fatalf("series %v, want %v", got, want)
	}
	for k, n := range want {
		if got[k] != n {
			t.Errorf("%s: %d, want %d (all %v)", k, got[k], n, got)
		}
	}
}
