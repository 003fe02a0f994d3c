package broker

import (
	"strings"

	"github.com/rocketgo/rocketgo/message"
)

// Property edits for the messages the broker rewrites (delay, timer, retry):
// not on the plain send path. Pairs keep their order; a replaced name moves
// to the end.

// propsDel removes every pair named in names.
func propsDel(props string, names ...string) string {
	if props == "" {
		return props
	}
	var b strings.Builder
	b.Grow(len(props))
	for _, pair := range strings.SplitAfter(props, string(message.PropertySeparator)) {
		if pair == "" {
			continue
		}
		name, _, _ := strings.Cut(pair, string(message.NameValueSeparator))
		drop := false
		for _, n := range names {
			if name == n {
				drop = true
				break
			}
		}
		if drop {
			continue
		}
		b.WriteString(pair)
		if !strings.HasSuffix(pair, string(message.PropertySeparator)) {
			b.WriteByte(message.PropertySeparator)
		}
	}
	return b.String()
}

// propsSet sets name=value pairs (kv alternates names and values),
// replacing earlier pairs of those names.
func propsSet(props string, kv ...string) string {
	names := make([]string, 0, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		names = append(names, kv[i])
	}
	out := []byte(propsDel(props, names...))
	for i := 0; i+1 < len(kv); i += 2 {
		out = message.AppendProperty(out, kv[i], kv[i+1])
	}
	return string(out)
}
