package broker

import (
	"regexp"
	"strings"
	"testing"
)

func TestHumanBytes(t *testing.T) {
	// MixAll.humanReadableByteCount(n, false) of Apache 5.3.3.
	for n, want := range map[int64]string{
		0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 1536: "1.5 KiB",
		64 << 20: "64.0 MiB", 270_582_939_648: "252.0 GiB", 3 << 40: "3.0 TiB",
	} {
		if got := humanBytes(n); got != want {
			t.Errorf("humanBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

// The keys Apache 5.3.3's GET_BROKER_RUNTIME_INFO has besides the counters
// (rocketmq-dashboard's broker status lists them all).
func TestRuntimeInfoDiskAndPoolKeys(t *testing.T) {
	dir := t.TempDir()
	b, done := testBroker(t, dir, nil)
	defer done()
	ri := b.RuntimeInfo()
	if !regexp.MustCompile(`^Total : \d+\.\d [KMGTPE]iB, Free : \d+\.\d [KMGTPE]iB\.$`).MatchString(ri["commitLogDirCapacity"]) {
		t.Errorf("commitLogDirCapacity = %q", ri["commitLogDirCapacity"])
	}
	ratio := ""
	for k, v := range ri {
		if strings.HasPrefix(k, "commitLogDiskRatio_") {
			if !strings.HasSuffix(k, "commitlog") {
				t.Errorf("key %q: want commitLogDiskRatio_<commit log dir>", k)
			}
			ratio = v
		}
	}
	if ratio == "" || ratio != ri["commitLogDiskRatio"] || ri["consumeQueueDiskRatio"] == "" {
		t.Errorf("disk ratios: per path %q, commitLogDiskRatio %q, consumeQueueDiskRatio %q", ratio,
			ri["commitLogDiskRatio"], ri["consumeQueueDiskRatio"])
	}
	for k, want := range map[string]string{
		"remainTransientStoreBufferNumbs": "2147483647", "litePullThreadPoolQueueCapacity": "100000",
		"queryThreadPoolQueueCapacity": "20000", "ackThreadPoolQueueCapacity": "100000", "ackThreadPoolQueueSize": "0",
		"ackThreadPoolQueueHeadWaitTimeMills": "0", "EndTransactionThreadPoolQueueCapacity": "100000",
	} {
		if ri[k] != want {
			t.Errorf("%s = %q, want %q", k, ri[k], want)
		}
	}
}
