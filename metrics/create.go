package metrics

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
)

// createBuckets are Apache's buckets (ms) of the topic and group creation
// times: 10 ms, 100 ms, 1 s, 3 s, 5 s.
var createBuckets = []float64{10, 100, 1000, 3000, 5000}

// creates are rocketmq_topic_create_execution_time and
// rocketmq_consumer_group_create_execution_time (AdminBrokerProcessor):
// the handling time of UPDATE_AND_CREATE_TOPIC(_LIST) and
// UPDATE_AND_CREATE_SUBSCRIPTIONGROUP(_LIST), by outcome, taken from the
// RPC interceptor's exchange (the handler's time, as Apache's).
type creates struct {
	topic, group *prometheus.HistogramVec
}

func newCreates(constLabels prometheus.Labels) creates {
	return creates{
		topic: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "rocketmq_topic_create_execution_time_milliseconds", Help: "The distribution of create topic time",
			ConstLabels: constLabels, Buckets: createBuckets,
		}, []string{"invocation_status", "is_system"}),
		group: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "rocketmq_consumer_group_create_execution_time_milliseconds", Help: "The distribution of create subscription time",
			ConstLabels: constLabels, Buckets: createBuckets,
		}, []string{"invocation_status"}),
	}
}

// Request codes of the list variants (not served by rocketgo: answered
// REQUEST_CODE_NOT_SUPPORTED, and counted as failures, as Apache would
// count a failed one).
const (
	updateAndCreateTopicList        int32 = 18
	updateAndCreateSubscriptionList int32 = 225
)

// observe records x when it answers a creation; anything else costs a switch.
func (c creates) observe(x remoting.Exchange) {
	switch x.Code {
	case remoting.UpdateAndCreateTopic, updateAndCreateTopicList, remoting.UpdateAndCreateSubscription,
		updateAndCreateSubscriptionList:
	default:
		return
	}
	status := "failure"
	if x.Resp.Code == remoting.Success {
		status = "success"
	}
	ms := float64(x.Took.Nanoseconds()) / 1e6
	if x.Code == remoting.UpdateAndCreateSubscription || x.Code == updateAndCreateSubscriptionList {
		c.group.WithLabelValues(status).Observe(ms)
		return
	}
	topic := ""
	if x.Req != nil {
		topic = x.Req.Str("topic") // the list variant has none: Apache's joined names are no system topic either
	}
	c.topic.WithLabelValues(status, strconv.FormatBool(topic != "" && message.IsSystemTopicName(topic))).Observe(ms)
}
