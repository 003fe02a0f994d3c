package config

import (
	"bytes"
	"fmt"
	"os"
	"strings"
)

// EditProperties rewrites the values of set's keys in properties text and
// leaves every other byte as it was: comments, blank lines, order, the
// other keys and their spelling. A key's every occurrence gets the new
// value (the last would win when read); a key the text lacks is appended,
// in order's order. A value set to "" removes the key's lines.
func EditProperties(text []byte, set map[string]string, order []string) []byte {
	out := make([]byte, 0, len(text)+64*len(set))
	done := make(map[string]bool, len(set))
	var logical []byte // the raw physical lines of the logical line being read
	var joined strings.Builder
	rest := text
	for len(rest) > 0 {
		adv, line, _ := scanPropertyLines(rest, true)
		raw := rest[:adv]
		rest = rest[adv:]
		trimmed := strings.TrimLeft(string(line), " \t\f")
		if len(logical) == 0 && (trimmed == "" || trimmed[0] == '#' || trimmed[0] == '!') {
			out = append(out, raw...)
			continue
		}
		logical = append(logical, raw...)
		if trailingBackslashes(trimmed)%2 == 1 {
			joined.WriteString(trimmed[:len(trimmed)-1])
			if len(rest) > 0 {
				continue
			}
		} else {
			joined.WriteString(trimmed)
		}
		k, _ := splitProperty(joined.String())
		key := unescape(k)
		joined.Reset()
		v, ok := set[key]
		switch {
		case !ok:
			out = append(out, logical...)
		case v == "":
			done[key] = true
		default:
			done[key] = true
			out = appendPair(out, key, v, lineEnd(logical))
		}
		logical = logical[:0]
	}
	for _, k := range order {
		if v, ok := set[k]; ok && !done[k] && v != "" {
			if len(out) > 0 && out[len(out)-1] != '\n' && out[len(out)-1] != '\r' {
				out = append(out, '\n')
			}
			out = appendPair(out, k, v, "\n")
			done[k] = true
		}
	}
	return out
}

// lineEnd is the line end a logical line was written with ("" at the end
// of a file without a last newline).
func lineEnd(raw []byte) string {
	switch {
	case bytes.HasSuffix(raw, []byte("\r\n")):
		return "\r\n"
	case bytes.HasSuffix(raw, []byte("\n")):
		return "\n"
	case bytes.HasSuffix(raw, []byte("\r")):
		return "\r"
	}
	return ""
}

func appendPair(dst []byte, k, v, end string) []byte {
	dst = AppendProperties(dst, [][2]string{{k, v}})
	return append(dst[:len(dst)-1], end...) // AppendProperties ends the line with "\n"
}

// RotateBackups shifts path.bak to path.bak.1, path.bak.1 to path.bak.2 and
// so on, keeping keep generations beyond path.bak, before a write makes a
// new path.bak: an operator's file survives several updates.
func RotateBackups(path string, keep int) error {
	name := func(i int) string {
		if i == 0 {
			return path + ".bak"
		}
		return fmt.Sprintf("%s.bak.%d", path, i)
	}
	for i := keep - 1; i >= 0; i-- {
		if err := os.Rename(name(i), name(i+1)); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	return nil
}
