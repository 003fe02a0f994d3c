package adminclient

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Apache's brokers write maps keyed by an object (TopicStatsTable's and
// ConsumeStats' offsetTable: {{"brokerName":"b","queueId":0,"topic":"T"}:{...}})
// the way fastjson does, which is not JSON. objectFields splits such an
// object into its raw keys and values; each part is then ordinary JSON.

var errFastjson = errors.New("malformed fastjson object")

// rawField is one key and value of an object, as written.
type rawField struct{ key, val []byte }

// objectFields returns the fields of the object b (whitespace around it
// allowed); keys may be strings, numbers or objects.
func objectFields(b []byte) ([]rawField, error) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil, errFastjson
	}
	i = skipSpace(b, i+1)
	var out []rawField
	if i < len(b) && b[i] == '}' {
		return out, nil
	}
	for {
		k, err := skipValue(b, i)
		if err != nil {
			return nil, err
		}
		key := b[i:k]
		i = skipSpace(b, k)
		if i >= len(b) || b[i] != ':' {
			return nil, errFastjson
		}
		i = skipSpace(b, i+1)
		v, err := skipValue(b, i)
		if err != nil {
			return nil, err
		}
		out = append(out, rawField{key, b[i:v]})
		i = skipSpace(b, v)
		if i >= len(b) {
			return nil, errFastjson
		}
		if b[i] == '}' {
			return out, nil
		}
		if b[i] != ',' {
			return nil, errFastjson
		}
		i = skipSpace(b, i+1)
	}
}

// field returns the raw value of the object b's string key name, nil if absent.
func field(b []byte, name string) ([]byte, error) {
	fs, err := objectFields(b)
	if err != nil {
		return nil, err
	}
	for _, f := range fs {
		var k string
		if json.Unmarshal(f.key, &k) == nil && k == name {
			return f.val, nil
		}
	}
	return nil, nil
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the end of the value starting at b[i]: a string, a
// bracketed value (brackets counted outside strings) or a bare token.
func skipValue(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, errFastjson
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				e, err := skipString(b, j)
				if err != nil {
					return 0, err
				}
				j = e - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, nil
				}
			}
		}
		return 0, errFastjson
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != ':' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\n' {
		j++
	}
	if j == i {
		return 0, fmt.Errorf("%w: unexpected %q", errFastjson, b[i])
	}
	return j, nil
}

func skipString(b []byte, i int) (int, error) {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1, nil
		}
	}
	return 0, errFastjson
}

// queueMap decodes an object-keyed offsetTable into fn's calls.
func queueMap(table []byte, fn func(mq MessageQueue, val []byte) error) error {
	if table == nil {
		return nil
	}
	fs, err := objectFields(table)
	if err != nil {
		return err
	}
	for _, f := range fs {
		var mq MessageQueue
		if err := json.Unmarshal(f.key, &mq); err != nil {
			return fmt.Errorf("message queue key: %w", err)
		}
		if err := fn(mq, f.val); err != nil {
			return err
		}
	}
	return nil
}
