package namesrv

// RegisterBrokerBody (REGISTER_BROKER, uncompressed), as an Apache broker
// writes it with fastjson:
//
//	{"filterServerList":[],
//	 "topicConfigSerializeWrapper":{
//	   "dataVersion":{"counter":12,"stateVersion":0,"timestamp":1700000000000},
//	   "topicConfigTable":{"T":{"attributes":{},"order":false,"perm":6,"readQueueNums":4,
//	     "topicFilterType":"SINGLE_TAG","topicName":"T","topicSysFlag":0,"writeQueueNums":4}},
//	   ...5.x mapping fields, ignored}}
//
// Brokers older than V3_0_11 send the bare topicConfigSerializeWrapper.
// fastjson writes Map<Integer,…> keys unquoted (5.x static-topic mapping
// details); such keys are quoted before a second decoding attempt.

import (
	"fmt"

	"github.com/rocketgo/rocketgo/config"
)

// versionV3_0_11 is MQVersion.Version.V3_0_11's ordinal: from it on the body
// is a RegisterBrokerBody.
const versionV3_0_11 = 37

// TopicConfig is the part of a broker's TopicConfig the name server keeps.
type TopicConfig struct {
	TopicName      string `json:"topicName"`
	ReadQueueNums  int32  `json:"readQueueNums"`
	WriteQueueNums int32  `json:"writeQueueNums"`
	Perm           int32  `json:"perm"`
	TopicSysFlag   int32  `json:"topicSysFlag"`
	Order          bool   `json:"order"`
}

// TopicConfigWrapper is Apache's TopicConfigSerializeWrapper.
type TopicConfigWrapper struct {
	DataVersion      DataVersion            `json:"dataVersion"`
	TopicConfigTable map[string]TopicConfig `json:"topicConfigTable"`
}

// RegisterBody is a decoded RegisterBrokerBody.
type RegisterBody struct {
	FilterServerList            []string           `json:"filterServerList"`
	TopicConfigSerializeWrapper TopicConfigWrapper `json:"topicConfigSerializeWrapper"`
}

// DecodeRegisterBody decodes a REGISTER_BROKER body sent by a broker of the
// given request version. An empty body yields an empty wrapper with a zero
// DataVersion, as Apache does.
func DecodeRegisterBody(body []byte, version int32) (RegisterBody, error) {
	var rb RegisterBody
	if len(body) == 0 {
		return rb, nil
	}
	var dst any = &rb
	if version < versionV3_0_11 {
		dst = &rb.TopicConfigSerializeWrapper
	}
	if err := json.Unmarshal(body, dst); err != nil {
		rb = RegisterBody{}
		if err2 := json.Unmarshal(config.QuoteBareKeys(body), dst); err2 != nil {
			return RegisterBody{}, fmt.Errorf("%w: register broker: %v", ErrBadBody, err)
		}
	}
	return rb, nil
}

// DecodeDataVersion decodes a DataVersion body (QUERY_DATA_VERSION).
func DecodeDataVersion(body []byte) (DataVersion, error) {
	var v DataVersion
	if err := json.Unmarshal(body, &v); err != nil {
		return DataVersion{}, fmt.Errorf("%w: data version: %v", ErrBadBody, err)
	}
	return v, nil
}

// DecodeRouteQueueDatas reads the queueDatas of a TopicRouteData body
// (REGISTER_TOPIC_IN_NAMESRV).
func DecodeRouteQueueDatas(body []byte) ([]QueueData, error) {
	var rd struct {
		QueueDatas []struct {
			BrokerName     string `json:"brokerName"`
			ReadQueueNums  int32  `json:"readQueueNums"`
			WriteQueueNums int32  `json:"writeQueueNums"`
			Perm           int32  `json:"perm"`
			TopicSysFlag   int32  `json:"topicSysFlag"`
		} `json:"queueDatas"`
	}
	if len(body) == 0 {
		return nil, nil
	}
	if err := json.Unmarshal(body, &rd); err != nil {
		if err2 := json.Unmarshal(config.QuoteBareKeys(body), &rd); err2 != nil {
			return nil, fmt.Errorf("%w: topic route data: %v", ErrBadBody, err)
		}
	}
	out := make([]QueueData, len(rd.QueueDatas))
	for i, q := range rd.QueueDatas {
		out[i] = QueueData(q)
	}
	return out, nil
}
