package namesrv

import (
	"errors"

	"github.com/rocketgo/rocketgo/remoting"
)

// What clients and admin tools read and change: GET_ROUTEINFO_BY_TOPIC (105),
// GET_BROKER_CLUSTER_INFO (106), the topic lists (206, 224, 304, 311–313),
// DELETE_TOPIC_IN_NAMESRV (216), REGISTER_TOPIC_IN_NAMESRV (217).

// faqSuffix is Apache's FAQUrl.suggestTodo(APPLY_TOPIC_URL).
const faqSuffix = "\nSee https://rocketmq.apache.org/docs/bestPractice/06FAQ for further details."

func (h *handlers) getRouteInfoByTopic(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	topic, err := req.RequireStr("topic")
	if err != nil {
		return h.refuse(req, err)
	}
	rd, err := h.routes.Route(topic)
	if errors.Is(err, ErrTopicNotExist) {
		return remoting.NewResponse(req, remoting.TopicNotExist,
			"No topic route info in name server for the topic: "+topic+faqSuffix)
	}
	if h.cfg().OrderMessageEnable {
		rd.OrderTopicConf, _ = h.kv.Value(NamespaceOrderTopicConfig, topic) // absent: not ordered
	}
	return success(req, rd.AppendJSON(make([]byte, 0, 512)))
}

func (h *handlers) getBrokerClusterInfo(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	return success(req, h.routes.ClusterInfo().AppendJSON(nil))
}

func (h *handlers) getAllTopicList(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	if !h.cfg().EnableAllTopicList {
		return h.refuse(req, ErrDisabled)
	}
	return success(req, h.routes.Topics().AppendJSON(nil))
}

func (h *handlers) getTopicsByCluster(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	if !h.cfg().EnableTopicList {
		return h.refuse(req, ErrDisabled)
	}
	cluster, err := req.RequireStr("cluster")
	if err != nil {
		return h.refuse(req, err)
	}
	return success(req, h.routes.TopicsByCluster(cluster).AppendJSON(nil))
}

func (h *handlers) getSystemTopicList(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	return success(req, h.routes.SystemTopics().AppendJSON(nil))
}

func (h *handlers) topicsWithFlags(want, without int32) HandlerFunc {
	return func(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
		if !h.cfg().EnableTopicList {
			return h.refuse(req, ErrDisabled)
		}
		return success(req, h.routes.TopicsWithFlags(want, without).AppendJSON(nil))
	}
}

func (h *handlers) deleteTopicInNamesrv(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	topic, err := req.RequireStr("topic")
	if err != nil {
		return h.refuse(req, err)
	}
	cluster := req.Str("clusterName")
	h.routes.DeleteTopic(topic, cluster)
	h.log.Info().Str("topic", topic).Str("clusterName", cluster).Msg("topic deleted")
	return success(req, nil)
}

func (h *handlers) registerTopicInNamesrv(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	topic, err := req.RequireStr("topic")
	if err != nil {
		return h.refuse(req, err)
	}
	qds, err := DecodeRouteQueueDatas(req.Body)
	if err != nil {
		return h.refuse(req, err)
	}
	h.routes.RegisterTopic(topic, qds)
	return success(req, nil)
}
