package remoting

// JSON header: the fastjson form of RemotingCommand, keys in alphabetical order,
// nulls omitted, every extFields value a JSON string:
//
//	{"code":105,"extFields":{"topic":"T"},"flag":0,"language":"JAVA","opaque":7,
//	 "remark":"...","serializeTypeCurrentRPC":"JSON","version":409}
//
// The decoder accepts keys in any order, ignores unknown keys, and accepts
// remark/extFields missing or null. Non-string extFields values (never sent by
// the official clients) are kept as their literal JSON text.

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

func appendJSONHeader(dst []byte, c *Command) []byte {
	dst = append(dst, `{"code":`...)
	dst = strconv.AppendInt(dst, int64(c.Code), 10)
	if len(c.ExtFields) > 0 {
		dst = append(dst, `,"extFields":{`...)
		for i, f := range c.ExtFields {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = AppendJSONString(dst, f.Key)
			dst = append(dst, ':')
			dst = AppendJSONString(dst, f.Value)
		}
		dst = append(dst, '}')
	}
	dst = append(dst, `,"flag":`...)
	dst = strconv.AppendInt(dst, int64(c.Flag), 10)
	dst = append(dst, `,"language":"`...)
	dst = append(dst, c.Language.String()...)
	dst = append(dst, `","opaque":`...)
	dst = strconv.AppendInt(dst, int64(c.Opaque), 10)
	if c.Remark != "" {
		dst = append(dst, `,"remark":`...)
		dst = AppendJSONString(dst, c.Remark)
	}
	dst = append(dst, `,"serializeTypeCurrentRPC":"`...)
	dst = append(dst, c.Serialize.String()...)
	dst = append(dst, `","version":`...)
	dst = strconv.AppendInt(dst, int64(c.Version), 10)
	return append(dst, '}')
}

const hexDigits = "0123456789abcdef"

// AppendJSONString appends s as a JSON string literal. Control characters are
// written as \uXXXX (as fastjson does for the \x01/\x02 property separators);
// other UTF-8 passes through raw; invalid UTF-8 bytes become U+FFFD.
func AppendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, "\ufffd"...)
			i++
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// decodeJSONHeader fills c from a JSON header. Strings without escapes are
// views into b, unescaped ones live in c.scratch, until the caller interns
// them. Numbers must be integers; unknown keys are skipped whatever their
// value. Beyond maxFields extFields (0: no limit) the rest are parsed but
// not stored, and ErrTooManyFields is returned once the whole header (and
// so the opaque, wherever it is) has been read.
func decodeJSONHeader(c *Command, b []byte, maxFields int) error {
	p := jsonParser{s: view(b), esc: c.scratch[:0], maxFields: maxFields}
	err := p.header(c)
	c.scratch = p.esc
	if err != nil {
		return fmt.Errorf("%w: JSON header: %v at byte %d", ErrMalformed, err, p.i)
	}
	if p.over {
		return ErrTooManyFields
	}
	return nil
}

type jsonParser struct {
	s         string
	i         int
	esc       []byte // unescaped strings; never grown in place while views into it live
	maxFields int    // extFields stored at most (0: all)
	over      bool   // more extFields than maxFields were seen
}

var (
	errJSONSyntax = errors.New("syntax error")
	errJSONRange  = errors.New("number out of range")
	errJSONDepth  = errors.New("nesting too deep")
)

func (p *jsonParser) ws() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// peek returns the next non-space byte without consuming it (0 at the end).
func (p *jsonParser) peek() byte {
	p.ws()
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

func (p *jsonParser) expect(c byte) error {
	if p.peek() != c {
		return errJSONSyntax
	}
	p.i++
	return nil
}

// object calls member for every key of an object, positioned at its value.
func (p *jsonParser) object(member func(key string) error) error {
	if err := p.expect('{'); err != nil {
		return err
	}
	if p.peek() == '}' {
		p.i++
		return nil
	}
	for {
		key, err := p.str()
		if err != nil {
			return err
		}
		if err := p.expect(':'); err != nil {
			return err
		}
		if err := member(key); err != nil {
			return err
		}
		switch p.peek() {
		case ',':
			p.i++
		case '}':
			p.i++
			return nil
		default:
			return errJSONSyntax
		}
	}
}

func (p *jsonParser) header(c *Command) error {
	err := p.object(func(key string) error {
		var err error
		switch key {
		case "code":
			c.Code, err = p.int32()
		case "version":
			c.Version, err = p.int32()
		case "opaque":
			c.Opaque, err = p.int32()
		case "flag":
			c.Flag, err = p.int32()
		case "language":
			if p.peek() == '"' {
				var name string
				name, err = p.str()
				c.Language = parseLanguage(name)
			} else {
				var n int32
				n, err = p.int32()
				c.Language = LanguageCode(n)
			}
		case "remark":
			if p.null() {
				return nil
			}
			c.Remark, err = p.str()
		case "extFields":
			err = p.extFields(c)
		default:
			err = p.skip(0)
		}
		return err
	})
	if err != nil {
		return err
	}
	if p.ws(); p.i != len(p.s) {
		return errJSONSyntax // trailing bytes
	}
	return nil
}

func (p *jsonParser) extFields(c *Command) error {
	if p.null() {
		return nil
	}
	return p.object(func(key string) error {
		if p.maxFields > 0 && len(c.ExtFields) >= p.maxFields && p.peek() != 'n' {
			p.over = true
			return p.skip(0)
		}
		switch p.peek() {
		case '"':
			v, err := p.str()
			c.ExtFields = append(c.ExtFields, Field{key, v})
			return err
		case 'n':
			return p.skip(0) // Java omits nulls
		default:
			start := p.i
			if err := p.skip(0); err != nil {
				return err
			}
			c.ExtFields = append(c.ExtFields, Field{key, p.s[start:p.i]}) // a number or boolean, as its literal text
			return nil
		}
	})
}

// null consumes a null literal if one is next.
func (p *jsonParser) null() bool {
	if p.peek() == 'n' && strings.HasPrefix(p.s[p.i:], "null") {
		p.i += 4
		return true
	}
	return false
}

func (p *jsonParser) int32() (int32, error) {
	p.ws()
	start := p.i
	integer, err := p.number()
	if err != nil {
		return 0, err
	}
	if !integer {
		return 0, errJSONSyntax
	}
	n, err := strconv.ParseInt(p.s[start:p.i], 10, 32)
	if err != nil {
		return 0, errJSONRange
	}
	return int32(n), nil
}

// number scans a JSON number (RFC 8259 grammar) and reports whether it is an integer.
func (p *jsonParser) number() (integer bool, err error) {
	digits := func() int {
		n := 0
		for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	if p.i < len(p.s) && p.s[p.i] == '-' {
		p.i++
	}
	switch {
	case p.i < len(p.s) && p.s[p.i] == '0':
		p.i++
	case digits() == 0:
		return false, errJSONSyntax
	}
	integer = true
	if p.i < len(p.s) && p.s[p.i] == '.' {
		p.i++
		if digits() == 0 {
			return false, errJSONSyntax
		}
		integer = false
	}
	if p.i < len(p.s) && (p.s[p.i] == 'e' || p.s[p.i] == 'E') {
		p.i++
		if p.i < len(p.s) && (p.s[p.i] == '+' || p.s[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			return false, errJSONSyntax
		}
		integer = false
	}
	return integer, nil
}

// str reads a string; without escapes the result is a substring of the header.
func (p *jsonParser) str() (string, error) {
	if err := p.expect('"'); err != nil {
		return "", err
	}
	start := p.i
	for p.i < len(p.s) {
		switch c := p.s[p.i]; {
		case c == '"':
			p.i++
			return p.s[start : p.i-1], nil
		case c == '\\':
			return p.unescape(start)
		case c < 0x20:
			return "", errJSONSyntax
		default:
			p.i++
		}
	}
	return "", errJSONSyntax
}

// unescape finishes a string that has escapes, from its first byte at start.
// The result is a view into p.esc.
func (p *jsonParser) unescape(start int) (string, error) {
	end := p.i
	for end < len(p.s) && p.s[end] != '"' {
		if p.s[end] == '\\' {
			end++
		}
		end++
	}
	need := min(end, len(p.s)) - start // the unescaped text is never longer
	if len(p.esc)+need > cap(p.esc) {
		// Views into the old array stay valid: it is not reused.
		p.esc = make([]byte, 0, max(512, 2*need))
	}
	at := len(p.esc)
	b := append(p.esc, p.s[start:p.i]...)
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == '"':
			p.i++
			p.esc = b
			return view(b[at:]), nil
		case c < 0x20:
			return "", errJSONSyntax
		case c != '\\':
			b = append(b, c)
			p.i++
			continue
		}
		if p.i+1 >= len(p.s) {
			return "", errJSONSyntax
		}
		e := p.s[p.i+1]
		p.i += 2
		switch e {
		case '"', '\\', '/':
			b = append(b, e)
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			r, ok := p.hex4()
			if !ok {
				return "", errJSONSyntax
			}
			if utf16.IsSurrogate(r) {
				if strings.HasPrefix(p.s[p.i:], "\\u") {
					p.i += 2
					r2, ok := p.hex4()
					if !ok {
						return "", errJSONSyntax
					}
					r = utf16.DecodeRune(r, r2)
				} else {
					r = utf8.RuneError
				}
			}
			b = utf8.AppendRune(b, r)
		default:
			return "", errJSONSyntax
		}
	}
	return "", errJSONSyntax
}

func (p *jsonParser) hex4() (rune, bool) {
	if p.i+4 > len(p.s) {
		return 0, false
	}
	n, err := strconv.ParseUint(p.s[p.i:p.i+4], 16, 32)
	if err != nil {
		return 0, false
	}
	p.i += 4
	return rune(n), true
}

// skip passes over any value (unknown keys), bounding the nesting depth.
func (p *jsonParser) skip(depth int) error {
	if depth > 32 {
		return errJSONDepth
	}
	switch c := p.peek(); {
	case c == '"':
		_, err := p.str()
		return err
	case c == '{':
		return p.object(func(string) error { return p.skip(depth + 1) })
	case c == '[':
		p.i++
		if p.peek() == ']' {
			p.i++
			return nil
		}
		for {
			if err := p.skip(depth + 1); err != nil {
				return err
			}
			switch p.peek() {
			case ',':
				p.i++
			case ']':
				p.i++
				return nil
			default:
				return errJSONSyntax
			}
		}
	case c == '-' || c >= '0' && c <= '9':
		_, err := p.number()
		return err
	default:
		for _, lit := range [...]string{"true", "false", "null"} {
			if strings.HasPrefix(p.s[p.i:], lit) {
				p.i += len(lit)
				return nil
			}
		}
		return errJSONSyntax
	}
}
