package adminclient

import (
	"fmt"

	"github.com/rocketgo/rocketgo/internal/fastjson"
)

// Apache's brokers write maps keyed by an object (TopicStatsTable's and
// ConsumeStats' offsetTable) the way fastjson does; see internal/fastjson.

func field(b []byte, name string) ([]byte, error) { return fastjson.Lookup(b, name) }

// queueMap decodes an object-keyed offsetTable into fn's calls.
func queueMap(table []byte, fn func(mq MessageQueue, val []byte) error) error {
	if table == nil {
		return nil
	}
	fs, err := fastjson.Fields(table)
	if err != nil {
		return err
	}
	for _, f := range fs {
		var mq MessageQueue
		if err := json.Unmarshal(f.Key, &mq); err != nil {
			return fmt.Errorf("message queue key: %w", err)
		}
		if err := fn(mq, f.Val); err != nil {
			return err
		}
	}
	return nil
}
