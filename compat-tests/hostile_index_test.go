package compattest

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// A disk with less room than an index file (Apache's default index, 5
// million slots and 20 million entries, is a 420 MB file): sends were
// acknowledged but never consumable, because dispatch waited for the index
// file forever ("create index file: no space left on device" every
// second), even after space returned. The index now pauses instead, and the
// consume queues go on: the official client consumes what it sent.
func TestHostileIndexNoSpace(t *testing.T) {
	start := time.Now()
	mnt := mountSmall(t, "tmpfs", 128)
	c := newClusterConf(t, "indexnospace", fmt.Sprintf(`storePathRootDir=%s
mappedFileSizeCommitLog=16777216
mappedFileSizeConsumeQueue=60000
`, filepath.Join(mnt, "store")))
	topic := uniq("IndexNoSpace")
	createTopic(t, c, topic)
	p := newProducer(t, c)
	var ids []string
	for i := range 20 {
		id := fmt.Sprintf("ix-%d", i)
		m := newMsg(topic, id, "T")
		m.WithKeys([]string{id})
		p.mustSend(t, m)
		ids = append(ids, id)
	}
	col := newCollector("ix")
	startConsumer(t, c, uniq("CG"), topic, "*", col)
	waitAll(t, col, ids, 30*time.Second, "consumed with no room for the index file")
	p.shutdown()
	report(t, start, len(ids), len(ids), "")
}
