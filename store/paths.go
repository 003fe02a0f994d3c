package store

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// Every file and directory the store creates, maps, truncates or deletes
// is named by storePath: a root the operator configured
// (storePathRootDir, storePathCommitLog) and elements that are each one
// safe name. A topic is such an element (consumequeue/<topic>/<queueId>),
// and a topic comes from clients, so a name that is not safe never becomes
// a path: Put and PutBatch refuse it when they first see its queue, the
// dispatcher skips a record carrying one (written by an older version),
// recovery ignores such entries under consumequeue/ and DeleteTopic
// refuses it. The broker validates names where they enter, with Apache's
// remarks; this is the defense in depth behind it.

// Names of the store layout under the root.
const (
	dirCommitLog    = "commitlog"
	dirConsumeQueue = "consumequeue"
	dirIndex        = "index"
	fileCheckpoint  = "checkpoint"
	fileAbort       = "abort"
	fileLock        = "lock"
)

// MaxTopicLen is the longest topic the store takes: NAME_MAX, the longest
// directory name. Plain topics are limited to 127 by the broker; retry and
// DLQ topics carry a group name and may be longer (the record is then
// written in the V2 layout, as Apache 5 does).
const MaxTopicLen = 255

// SafeName reports whether name can be one element of a store path: 1 to
// MaxTopicLen bytes of Apache's topic characters ^[%|a-zA-Z0-9_-]+$, which
// leaves out ".", "..", "/" and NUL. A lite topic's LMQ, %LMQ%$<parent>$<lite>
// (Apache's LiteUtil), may also hold '$': exactly the two separating its
// three non-empty parts, and nowhere in any other name.
func SafeName(name string) bool { return safeName(name) }

func safeName[S ~string | ~[]byte](name S) bool {
	if len(name) == 0 || len(name) > MaxTopicLen {
		return false
	}
	dollars, last := 0, -1
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c == '$' {
			if i == last+1 { // an empty part, or a leading '$'
				return false
			}
			dollars, last = dollars+1, i
			continue
		}
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			c == '%' || c == '|' || c == '_' || c == '-') {
			return false
		}
	}
	if dollars == 0 {
		return true
	}
	return dollars == 2 && last < len(name)-1 && strings.HasPrefix(string(name), lmqLitePrefix) && len(name) > len(lmqLitePrefix)+1
}

// checkQueueName refuses a topic or queue id that cannot name a consume
// queue directory.
func checkQueueName(topic string, queueID int32) error {
	switch {
	case len(topic) == 0 || len(topic) > MaxTopicLen:
		return fmt.Errorf("topic of %d bytes: %w", len(topic), ErrTopicTooLong)
	case !SafeName(topic):
		return fmt.Errorf("topic %q: %w", topic, ErrBadTopic)
	case queueID < 0:
		return fmt.Errorf("topic %s queue %d: %w", topic, queueID, ErrBadQueueID)
	}
	return nil
}

// storePath joins root and elems, refusing any element that is not a safe
// name, so the result is always root itself or a path below it.
func storePath(root string, elems ...string) (string, error) {
	p := root
	for _, e := range elems {
		if !SafeName(e) {
			return "", fmt.Errorf("store path %q below %s: %w", e, root, ErrBadTopic)
		}
		p = filepath.Join(p, e)
	}
	return p, nil
}

// mustStorePath is storePath for elements that are constants or numbers
// the store formats itself (file names, layout names).
func mustStorePath(root string, elems ...string) string {
	p, err := storePath(root, elems...)
	if err != nil {
		panic("BUG: " + err.Error())
	}
	return p
}

// cqDir is consumequeue/<topic>/<queueId>.
func cqDir(cqRoot, topic string, queueID int32) (string, error) {
	if err := checkQueueName(topic, queueID); err != nil {
		return "", err
	}
	return storePath(cqRoot, topic, strconv.Itoa(int(queueID)))
}
