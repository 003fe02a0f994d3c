// Package config reads and writes the servers' configuration files: the
// Java-properties files (broker.conf, namesrv.conf), read into plain structs
// whose fields carry Apache's key names in `key:"..."` tags, and the
// fastjson-shaped JSON files under store/config (jsonfile.go).
//
// Owns: the properties syntax and the reflection that maps keys to fields;
// durable replacement of a JSON file with its .bak; reading fastjson's bare
// integer keys; Secret, a value printed as "***" and written to files in clear.
// Never: holds defaults (each owner's DefaultConfig does) or knows what a
// file's fields mean.
package config

import (
	"bufio"
	"encoding"
	"fmt"
	"io"
	"os"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/rs/zerolog"
)

// Load reads the properties file at path into dst, a pointer to a struct (or a
// struct of structs: tagged fields of nested struct fields are searched too).
func Load(path string, dst any, log zerolog.Logger) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("config: %w", err) // the PathError names the file
	}
	defer f.Close()
	if err := Parse(f, dst, log); err != nil {
		return fmt.Errorf("config: %s: %w", path, err)
	}
	return nil
}

// ReadPropertiesFile reads the properties file at path (ReadProperties).
func ReadPropertiesFile(path string) ([][2]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err) // the PathError names the file
	}
	defer f.Close()
	return ReadProperties(f)
}

// Parse reads properties from r into dst. Unknown keys are logged once each and
// ignored, as Apache ignores keys it has no setter for.
func Parse(r io.Reader, dst any, log zerolog.Logger) error {
	props, err := ReadProperties(r)
	if err != nil {
		return err
	}
	fields := map[string]reflect.Value{}
	collect(reflect.ValueOf(dst).Elem(), fields)
	for _, kv := range props {
		f, ok := fields[kv[0]]
		if !ok {
			log.Warn().Str("key", kv[0]).Msg("unknown config key ignored")
			continue
		}
		if err := set(f, kv[1]); err != nil {
			return fmt.Errorf("key %s=%q: %w", kv[0], kv[1], err)
		}
	}
	return nil
}

// Set assigns one key, as a command-line override (-n namesrvAddr) does.
func Set(dst any, key, value string) error {
	fields := map[string]reflect.Value{}
	collect(reflect.ValueOf(dst).Elem(), fields)
	f, ok := fields[key]
	if !ok {
		return fmt.Errorf("config: unknown key %s", key)
	}
	return set(f, value)
}

func collect(v reflect.Value, out map[string]reflect.Value) {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		if !sf.IsExported() {
			continue
		}
		if key := sf.Tag.Get("key"); key != "" {
			out[key] = v.Field(i)
			continue
		}
		if sf.Type.Kind() == reflect.Struct {
			collect(v.Field(i), out)
		}
	}
}

var textUnmarshaler = reflect.TypeOf((*encoding.TextUnmarshaler)(nil)).Elem()

func set(f reflect.Value, s string) error {
	s = strings.TrimSpace(s)
	if f.CanAddr() && f.Addr().Type().Implements(textUnmarshaler) {
		return f.Addr().Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(s))
	}
	switch f.Kind() {
	case reflect.String:
		f.SetString(s)
	case reflect.Bool:
		// Java's Boolean.parseBoolean: "true" in any case, everything else false.
		f.SetBool(strings.EqualFold(s, "true"))
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, err := strconv.ParseInt(s, 10, f.Type().Bits())
		if err != nil {
			return err
		}
		f.SetInt(n)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, err := strconv.ParseUint(s, 10, f.Type().Bits())
		if err != nil {
			return err
		}
		f.SetUint(n)
	case reflect.Float32, reflect.Float64:
		n, err := strconv.ParseFloat(s, f.Type().Bits())
		if err != nil {
			return err
		}
		f.SetFloat(n)
	default:
		return fmt.Errorf("unsupported field kind %s", f.Kind())
	}
	return nil
}

// ReadProperties parses the java.util.Properties text format: '#' and '!'
// comments, '=' ':' or whitespace separators, backslash line continuations and
// escapes. Pairs come back in file order; a later duplicate wins when applied.
func ReadProperties(r io.Reader) ([][2]string, error) {
	var out [][2]string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	sc.Split(scanPropertyLines)
	var logical strings.Builder
	for sc.Scan() {
		line := strings.TrimLeft(sc.Text(), " \t\f")
		if logical.Len() == 0 && (line == "" || line[0] == '#' || line[0] == '!') {
			continue
		}
		if cont := trailingBackslashes(line)%2 == 1; cont {
			logical.WriteString(line[:len(line)-1])
			continue
		}
		logical.WriteString(line)
		k, v := splitProperty(logical.String())
		logical.Reset()
		out = append(out, [2]string{unescape(k), unescape(v)})
	}
	if logical.Len() > 0 {
		k, v := splitProperty(logical.String())
		out = append(out, [2]string{unescape(k), unescape(v)})
	}
	return out, sc.Err()
}

// scanPropertyLines splits at "\n", "\r" or "\r\n", the line ends of
// java.util.Properties (bufio.ScanLines knows no lone "\r": "a=1\rb=2" would
// be one pair, where Apache reads two).
func scanPropertyLines(data []byte, atEOF bool) (advance int, line []byte, err error) {
	for i, c := range data {
		switch {
		case c == '\n':
			return i + 1, data[:i], nil
		case c != '\r':
		case i+1 < len(data) && data[i+1] == '\n':
			return i + 2, data[:i], nil
		case i+1 < len(data) || atEOF:
			return i + 1, data[:i], nil
		default:
			return 0, nil, nil // a "\n" may follow
		}
	}
	if atEOF && len(data) > 0 {
		return len(data), data, nil
	}
	return 0, nil, nil
}

func trailingBackslashes(s string) int {
	n := 0
	for i := len(s) - 1; i >= 0 && s[i] == '\\'; i-- {
		n++
	}
	return n
}

func splitProperty(s string) (string, string) {
	i := 0
	for i < len(s) {
		c := s[i]
		if c == '\\' {
			i += 2
			continue
		}
		if c == '=' || c == ':' || c == ' ' || c == '\t' || c == '\f' {
			break
		}
		i++
	}
	if i >= len(s) {
		return s, ""
	}
	key := s[:i]
	rest := strings.TrimLeft(s[i:], " \t\f")
	if rest != "" && (rest[0] == '=' || rest[0] == ':') {
		rest = strings.TrimLeft(rest[1:], " \t\f")
	}
	return key, rest
}

func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch s[i] {
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 'f':
			b.WriteByte('\f')
		case 'u':
			if i+4 < len(s) {
				if n, err := strconv.ParseUint(s[i+1:i+5], 16, 32); err == nil {
					b.WriteRune(rune(n))
					i += 4
					continue
				}
			}
			b.WriteByte('u')
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// Pairs lists src's tagged fields as key/value text in field order, for -p
// style dumps of the effective configuration: a Secret prints as "***".
func Pairs(src any) [][2]string { return pairs(src, false) }

// FilePairs is Pairs with the Secrets' values: what a config file written
// back must keep.
func FilePairs(src any) [][2]string { return pairs(src, true) }

var secretType = reflect.TypeOf(Secret(""))

func pairs(src any, secrets bool) [][2]string {
	var out [][2]string
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			sf := t.Field(i)
			if !sf.IsExported() {
				continue
			}
			switch key := sf.Tag.Get("key"); {
			case key != "" && secrets && sf.Type == secretType:
				out = append(out, [2]string{key, v.Field(i).String()})
			case key != "":
				out = append(out, [2]string{key, fmt.Sprint(v.Field(i).Interface())})
			case sf.Type.Kind() == reflect.Struct:
				walk(v.Field(i))
			}
		}
	}
	walk(reflect.Indirect(reflect.ValueOf(src)))
	return out
}

// AppendProperties appends sorted key=value lines, leaving out empty
// values. A backslash, newline or carriage return in a value is escaped, so
// the line reads back as the same value (Apache writes them raw and cannot
// read such a file back).
func AppendProperties(dst []byte, pairs [][2]string) []byte {
	sort.SliceStable(pairs, func(i, j int) bool { return pairs[i][0] < pairs[j][0] })
	for _, kv := range pairs {
		if kv[1] == "" {
			continue
		}
		for i := 0; i < len(kv[0]); i++ {
			// A separator or comment mark in a key (an unknown key kept
			// from the operator's file) is escaped, so it reads back whole.
			switch c := kv[0][i]; c {
			case ' ', '\t', '\f', '=', ':', '\\', '#', '!':
				if c != '#' && c != '!' || i == 0 {
					dst = append(dst, '\\')
				}
				dst = append(dst, c)
			default:
				dst = append(dst, c)
			}
		}
		dst = append(dst, '=')
		for i := 0; i < len(kv[1]); i++ {
			switch c := kv[1][i]; c {
			case '\\':
				dst = append(dst, `\\`...)
			case '\n':
				dst = append(dst, `\n`...)
			case '\r':
				dst = append(dst, `\r`...)
			default:
				dst = append(dst, c)
			}
		}
		dst = append(dst, '\n')
	}
	return dst
}
