package message

import "strings"

// Property edits for the messages a broker rewrites (delay, timer, retry,
// transactions): not for the plain send path. Pairs keep their order; a
// replaced name moves to the end.

// DeleteProperties removes every pair named in names.
func DeleteProperties(props string, names ...string) string {
	if props == "" {
		return props
	}
	var b strings.Builder
	b.Grow(len(props))
	for _, pair := range strings.SplitAfter(props, string(PropertySeparator)) {
		if pair == "" {
			continue
		}
		name, _, _ := strings.Cut(pair, string(NameValueSeparator))
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
		if !strings.HasSuffix(pair, string(PropertySeparator)) {
			b.WriteByte(PropertySeparator)
		}
	}
	return b.String()
}

// SetProperties sets name=value pairs (kv alternates names and values),
// replacing earlier pairs of those names.
func SetProperties(props string, kv ...string) string {
	names := make([]string, 0, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		names = append(names, kv[i])
	}
	out := []byte(DeleteProperties(props, names...))
	for i := 0; i+1 < len(kv); i += 2 {
		out = AppendProperty(out, kv[i], kv[i+1])
	}
	return string(out)
}
