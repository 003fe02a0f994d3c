package remoting

// QuoteIntKeys rewrites fastjson's unquoted integer map keys ({0:"a"}, as
// Apache's name server writes brokerAddrs) as JSON strings so that
// encoding/json reads them. A run of digits outside a string counts as a
// key when it follows '{' or ',' and is followed by ':'.
func QuoteIntKeys(b []byte) []byte {
	var out []byte
	inStr, esc := false, false
	last := byte(0) // last non-space byte outside strings
	for i := 0; i < len(b); i++ {
		ch := b[i]
		if inStr {
			if out != nil {
				out = append(out, ch)
			}
			switch {
			case esc:
				esc = false
			case ch == '\\':
				esc = true
			case ch == '"':
				inStr = false
				last = '"'
			}
			continue
		}
		if (ch == '-' || (ch >= '0' && ch <= '9')) && (last == '{' || last == ',') {
			j := i + 1
			for j < len(b) && b[j] >= '0' && b[j] <= '9' {
				j++
			}
			k := j
			for k < len(b) && (b[k] == ' ' || b[k] == '\n' || b[k] == '\t' || b[k] == '\r') {
				k++
			}
			if k < len(b) && b[k] == ':' {
				if out == nil {
					out = append(make([]byte, 0, len(b)+16), b[:i]...)
				}
				out = append(out, '"')
				out = append(out, b[i:j]...)
				out = append(out, '"')
				last = '"'
				i = j - 1
				continue
			}
		}
		if out != nil {
			out = append(out, ch)
		}
		switch ch {
		case '"':
			inStr = true
		case ' ', '\n', '\t', '\r':
		default:
			last = ch
		}
	}
	if out == nil {
		return b
	}
	return out
}
