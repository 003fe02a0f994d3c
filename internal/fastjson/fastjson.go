// Package fastjson reads what Alibaba's fastjson (Apache RocketMQ's JSON
// library) writes for maps keyed by objects, {{"brokerName":"b","queueId":0,
// "topic":"T"}:5}, which is not JSON: it splits an object into its raw keys
// and values, each then ordinary JSON for encoding/json.
//
// Owns: scanning such objects. Never: decodes values, copies the input, or
// loops or panics on truncated or hostile text (every error is ErrMalformed).
package fastjson

import (
	"errors"
	"fmt"
)

// ErrMalformed is any text that is not an object fastjson could have written.
var ErrMalformed = errors.New("malformed fastjson object")

// Field is one key and value of an object, as written (slices of the input).
type Field struct{ Key, Val []byte }

// Fields returns the fields of the object b (whitespace around it
// allowed); keys may be strings, numbers or objects.
func Fields(b []byte) ([]Field, error) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil, ErrMalformed
	}
	i = skipSpace(b, i+1)
	var out []Field
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
			return nil, ErrMalformed
		}
		i = skipSpace(b, i+1)
		v, err := skipValue(b, i)
		if err != nil {
			return nil, err
		}
		out = append(out, Field{Key: key, Val: b[i:v]})
		i = skipSpace(b, v)
		if i >= len(b) {
			return nil, ErrMalformed
		}
		if b[i] == '}' {
			return out, nil
		}
		if b[i] != ',' {
			return nil, ErrMalformed
		}
		i = skipSpace(b, i+1)
	}
}

// Lookup returns the raw value of the object b's string key name, nil if absent.
func Lookup(b []byte, name string) ([]byte, error) {
	fs, err := Fields(b)
	if err != nil {
		return nil, err
	}
	for _, f := range fs {
		var k string
		if json.Unmarshal(f.Key, &k) == nil && k == name {
			return f.Val, nil
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
		return 0, ErrMalformed
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
		return 0, ErrMalformed
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != ':' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\n' {
		j++
	}
	if j == i {
		return 0, fmt.Errorf("%w: unexpected %q", ErrMalformed, b[i])
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
	return 0, ErrMalformed
}

// Elements returns the raw elements of the array b (whitespace around it
// allowed), each as written: objects in it may have object keys.
func Elements(b []byte) ([][]byte, error) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '[' {
		return nil, ErrMalformed
	}
	i = skipSpace(b, i+1)
	var out [][]byte
	if i < len(b) && b[i] == ']' {
		return out, nil
	}
	for {
		e, err := skipValue(b, i)
		if err != nil {
			return nil, err
		}
		out = append(out, b[i:e])
		i = skipSpace(b, e)
		if i >= len(b) {
			return nil, ErrMalformed
		}
		if b[i] == ']' {
			return out, nil
		}
		if b[i] != ',' {
			return nil, ErrMalformed
		}
		i = skipSpace(b, i+1)
	}
}
