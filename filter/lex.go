package filter

import (
	"errors"
	"fmt"
	"strings"
)

// ErrParse marks every compile error; the message says where (1-based column).
var ErrParse = errors.New("filter: parse error")

type tokKind uint8

const (
	tEOF tokKind = iota
	tIdent
	tString
	tDecimal
	tFloat
	tOp // = <> > >= < <= ( ) , + -
	tNot
	tAnd
	tOr
	tBetween
	tIn
	tTrue
	tFalse
	tNull
	tIs
	tContains
	tStartsWith
	tEndsWith
)

var keywords = map[string]tokKind{
	"NOT": tNot, "AND": tAnd, "OR": tOr, "BETWEEN": tBetween, "IN": tIn, "TRUE": tTrue, "FALSE": tFalse,
	"NULL": tNull, "IS": tIs, "CONTAINS": tContains, "STARTSWITH": tStartsWith, "ENDSWITH": tEndsWith,
}

type token struct {
	kind tokKind
	text string // identifier, operator, literal text (string: unescaped)
	pos  int    // byte offset
}

func (t token) String() string {
	switch t.kind {
	case tEOF:
		return "end of expression"
	case tString:
		return "'" + strings.ReplaceAll(t.text, "'", "''") + "'"
	}
	return fmt.Sprintf("%q", t.text)
}

func errAt(src string, pos int, format string, args ...any) error {
	return fmt.Errorf("%w at column %d of %q: %s", ErrParse, pos+1, src, fmt.Sprintf(format, args...))
}

func isIdentStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '$'
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// lex splits src into tokens.
func lex(src string) ([]token, error) {
	var out []token
	i := 0
	for i < len(src) {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			i++
		case c == '-' && i+1 < len(src) && src[i+1] == '-': // line comment
			j := strings.IndexAny(src[i:], "\r\n")
			if j < 0 {
				return nil, errAt(src, i, "line comment without end of line")
			}
			i += j + 1
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			j := strings.Index(src[i+2:], "*/")
			if j < 0 {
				return nil, errAt(src, i, "unterminated comment")
			}
			i += j + 4
		case c == '\'':
			var b strings.Builder
			j := i + 1
			for {
				if j >= len(src) {
					return nil, errAt(src, i, "unterminated string literal")
				}
				if src[j] == '\'' {
					if j+1 < len(src) && src[j+1] == '\'' {
						b.WriteByte('\'')
						j += 2
						continue
					}
					break
				}
				b.WriteByte(src[j])
				j++
			}
			out = append(out, token{tString, b.String(), i})
			i = j + 1
		case isDigit(c) || c == '.' && i+1 < len(src) && isDigit(src[i+1]):
			t, n, err := lexNumber(src, i)
			if err != nil {
				return nil, err
			}
			out = append(out, t)
			i += n
		case isIdentStart(c):
			j := i + 1
			for j < len(src) && (isIdentStart(src[j]) || isDigit(src[j])) {
				j++
			}
			word := src[i:j]
			if k, ok := keywords[strings.ToUpper(word)]; ok {
				out = append(out, token{k, word, i})
			} else {
				out = append(out, token{tIdent, word, i})
			}
			i = j
		default:
			op := ""
			for _, o := range []string{"<>", ">=", "<=", "=", ">", "<", "(", ")", ",", "+", "-"} {
				if strings.HasPrefix(src[i:], o) {
					op = o
					break
				}
			}
			if op == "" {
				return nil, errAt(src, i, "unexpected character %q", c)
			}
			out = append(out, token{tOp, op, i})
			i += len(op)
		}
	}
	return append(out, token{tEOF, "", len(src)}), nil
}

// lexNumber scans DECIMAL_LITERAL ("0" | [1-9][0-9]* [lL]) or
// FLOATING_POINT_LITERAL at src[i:].
func lexNumber(src string, i int) (token, int, error) {
	j := i
	for j < len(src) && isDigit(src[j]) {
		j++
	}
	float := false
	if j < len(src) && src[j] == '.' {
		float = true
		j++
		for j < len(src) && isDigit(src[j]) {
			j++
		}
	}
	if j < len(src) && (src[j] == 'e' || src[j] == 'E') {
		k := j + 1
		if k < len(src) && (src[k] == '+' || src[k] == '-') {
			k++
		}
		if k < len(src) && isDigit(src[k]) {
			float = true
			for k < len(src) && isDigit(src[k]) {
				k++
			}
			j = k
		}
	}
	if float {
		return token{tFloat, src[i:j], i}, j - i, nil
	}
	if src[i] == '0' && j-i > 1 {
		return token{}, 0, errAt(src, i, "number %q has a leading zero", src[i:j])
	}
	text := src[i:j]
	if j < len(src) && (src[j] == 'l' || src[j] == 'L') {
		j++
	}
	return token{tDecimal, text, i}, j - i, nil
}
