package broker

import (
	"errors"
	"strings"
	"testing"
)

func TestRuntimeConfigUpdate(t *testing.T) {
	cfg := DefaultConfig()
	cfg.BrokerName = "b1"
	tests := []struct {
		name    string
		body    string
		wantErr error // nil: success; errAny: any error
		want    string
	}{
		{"known key", "flushConsumerOffsetInterval=6543\n", nil, "flushConsumerOffsetInterval=6543"},
		{"two keys, spaces", "autoCreateTopicEnable = false\nbrokerPermission=4\n", nil, "brokerPermission=4"},
		{"unknown key", "noSuchKey=1\n", errAny, ""},
		{"bad value", "listenPort=abc\n", errAny, ""},
		{"black list", "rocketmqHome=/x\n", ErrConfigBlackListed, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rc := NewRuntimeConfig(cfg)
			_, v0 := rc.Properties()
			err := rc.Update([]byte(tc.body))
			body, v1 := rc.Properties()
			switch {
			case tc.wantErr == nil && err != nil:
				t.Fatalf("Update(%q): %v", tc.body, err)
			case tc.wantErr == errAny && err == nil, tc.wantErr != nil && tc.wantErr != errAny && !errors.Is(err, tc.wantErr):
				t.Fatalf("Update(%q) = %v, want %v", tc.body, err, tc.wantErr)
			}
			if err != nil {
				if v1 != v0 {
					t.Fatalf("failed update changed the data version %+v -> %+v", v0, v1)
				}
				return
			}
			if !strings.Contains("\n"+string(body), "\n"+tc.want+"\n") {
				t.Fatalf("properties lack %q:\n%s", tc.want, body)
			}
			if v1.Counter != v0.Counter+1 {
				t.Fatalf("data version %+v -> %+v, want counter+1", v0, v1)
			}
			if !strings.Contains(string(body), "\nbrokerName=b1\n") {
				t.Fatalf("properties lost brokerName:\n%s", body)
			}
		})
	}
}

var errAny = errors.New("any error")
