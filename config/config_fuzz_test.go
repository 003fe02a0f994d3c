package config

import (
	"bytes"
	"strings"
	"testing"
)

// ReadProperties also reads UPDATE_BROKER_CONFIG's body, which a client
// sends: no panic, and what it returns is what a properties file holds.
func FuzzReadProperties(f *testing.F) {
	for _, s := range []string{
		"brokerClusterName=DefaultCluster\nbrokerName=broker-a\nbrokerId=0\ndeleteWhen=04\n",
		"# comment\n! other\nkey : value\nk2 v2\nlong=a\\\n   b\\\\\nuni=\\u0041\\t\n",
		"maxTopicQueueNums=1024\nvalidateSystemTopicWhenUpdateTopic=true\n",
		"\\", "k=\\u00", "=", "a\\\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		pairs, err := ReadProperties(bytes.NewReader(body))
		if err != nil {
			return
		}
		if len(pairs) > bytes.Count(body, []byte("\n"))+bytes.Count(body, []byte("\r"))+1 {
			t.Fatalf("%d pairs from %d lines", len(pairs), bytes.Count(body, []byte("\n"))+1)
		}
		for _, kv := range pairs {
			if strings.ContainsAny(kv[0], "\n\r") && !bytes.Contains(body, []byte(`\n`)) && !bytes.Contains(body, []byte(`\r`)) &&
				!bytes.Contains(body, []byte(`\u`)) {
				t.Fatalf("key %q spans lines", kv[0])
			}
		}
	})
}
