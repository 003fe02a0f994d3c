package namesrv

import (
	"errors"
	"testing"

	"github.com/rocketgo/rocketgo/config"
)

func TestDecodeRegisterBody(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		version int32
		want    TopicConfig
		dv      DataVersion
	}{
		{
			name:    "4.9",
			version: 409,
			body:    `{"filterServerList":[],"topicConfigSerializeWrapper":{"dataVersion":{"counter":12,"timestamp":1700000000000},"topicConfigTable":{"T":{"order":false,"perm":6,"readQueueNums":8,"topicFilterType":"SINGLE_TAG","topicName":"T","topicSysFlag":0,"writeQueueNums":4}}}}`,
			want:    TopicConfig{TopicName: "T", ReadQueueNums: 8, WriteQueueNums: 4, Perm: 6},
			dv:      DataVersion{Counter: 12, Timestamp: 1700000000000},
		},
		{
			name:    "5.x with fastjson integer keys in mapping detail",
			version: 479,
			body:    `{"filterServerList":[],"topicConfigSerializeWrapper":{"dataVersion":{"counter":3,"stateVersion":2,"timestamp":5},"mappingDataVersion":{"counter":0,"stateVersion":0,"timestamp":1},"topicConfigTable":{"T":{"attributes":{"+message.type":"NORMAL"},"order":true,"perm":7,"readQueueNums":2,"topicFilterType":"SINGLE_TAG","topicName":"T","topicSysFlag":1,"writeQueueNums":2}},"topicQueueMappingDetailMap":{"T":{"hostedQueues":{0:[{"bname":"b","gen":0}],-1:[]},"bname":"b"}},"topicQueueMappingInfoMap":{}}}`,
			want:    TopicConfig{TopicName: "T", ReadQueueNums: 2, WriteQueueNums: 2, Perm: 7, TopicSysFlag: 1, Order: true},
			dv:      DataVersion{Counter: 3, StateVersion: 2, Timestamp: 5},
		},
		{
			name:    "pre V3_0_11 bare wrapper",
			version: 30,
			body:    `{"dataVersion":{"counter":1,"timestamp":2},"topicConfigTable":{"T":{"perm":6,"readQueueNums":1,"topicName":"T","writeQueueNums":1}}}`,
			want:    TopicConfig{TopicName: "T", ReadQueueNums: 1, WriteQueueNums: 1, Perm: 6},
			dv:      DataVersion{Counter: 1, Timestamp: 2},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rb, err := DecodeRegisterBody([]byte(tt.body), tt.version)
			if err != nil {
				t.Fatal(err)
			}
			w := rb.TopicConfigSerializeWrapper
			if got := w.TopicConfigTable["T"]; got != tt.want || w.DataVersion != tt.dv {
				t.Fatalf("got %+v %+v", got, w.DataVersion)
			}
		})
	}
}

func TestDecodeRegisterBodyErrors(t *testing.T) {
	if rb, err := DecodeRegisterBody(nil, 409); err != nil || rb.TopicConfigSerializeWrapper.TopicConfigTable != nil {
		t.Fatalf("empty body: %+v %v", rb, err)
	}
	if _, err := DecodeRegisterBody([]byte(`{"topicConfigSerializeWrapper":`), 409); !errors.Is(err, ErrBadBody) {
		t.Fatalf("truncated body: %v", err)
	}
}

func FuzzDecodeRegisterBody(f *testing.F) {
	f.Add([]byte(`{"filterServerList":[],"topicConfigSerializeWrapper":{"dataVersion":{"counter":1},"topicConfigTable":{"T":{"topicName":"T"}}}}`))
	f.Add([]byte(`{0:{1:"x"}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = DecodeRegisterBody(b, 409) // must not panic
		_ = config.QuoteBareKeys(b)
	})
}
