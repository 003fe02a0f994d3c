package filter

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

type kind uint8

const (
	kNull kind = iota
	kBool
	kLong
	kDouble
	kString
)

type value struct {
	k kind
	b bool
	i int64
	f float64
	s string
}

var (
	vNull  = value{}
	vTrue  = value{k: kBool, b: true}
	vFalse = value{k: kBool}
)

func boolVal(b bool) value {
	if b {
		return vTrue
	}
	return vFalse
}

func (v value) String() string {
	switch v.k {
	case kBool:
		return strings.ToUpper(strconv.FormatBool(v.b))
	case kLong:
		return strconv.FormatInt(v.i, 10)
	case kDouble:
		return strconv.FormatFloat(v.f, 'g', -1, 64)
	case kString:
		return "'" + strings.ReplaceAll(v.s, "'", "''") + "'"
	}
	return "NULL"
}

type op uint8

const (
	opConst op = iota
	opProp
	opBoolCast
	opAnd
	opOr
	opNot
	opNeg
	opEq
	opIsNull
	opGt
	opGe
	opLt
	opLe
	opIn
	opContains
	opStartsWith
	opEndsWith
)

type node struct {
	op     op
	l, r   *node
	val    value    // opConst
	name   string   // opProp
	strs   []string // opIn list; opContains etc.: the search string
	not    bool     // opIn, opContains, opStartsWith, opEndsWith
	isBool bool     // Apache BooleanExpression
}

// Expr is a compiled SQL92 filter; safe for concurrent use.
type Expr struct {
	src  string
	root *node
}

// String returns the source text.
func (e *Expr) String() string { return e.src }

// errEval makes an evaluation fail (Apache: the expression throws, the
// message does not match).
var errEval = errors.New("filter: evaluation failed")

// Match evaluates the expression with get looking up message properties;
// only an exactly TRUE result matches.
func (e *Expr) Match(get func(name string) (string, bool)) bool {
	v, err := eval(e.root, get)
	return err == nil && v.k == kBool && v.b
}

// Compile parses an SQL92 expression.
func Compile(src string) (*Expr, error) {
	toks, err := lex(src)
	if err != nil {
		return nil, err
	}
	p := &parser{src: src, toks: toks}
	n, err := p.or()
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tEOF {
		return nil, errAt(src, t.pos, "unexpected %s", t)
	}
	if n, err = p.asBool(n, 0); err != nil {
		return nil, err
	}
	return &Expr{src: src, root: n}, nil
}

type parser struct {
	src   string
	toks  []token
	i     int
	depth int
}

// maxDepth bounds nesting (parentheses, NOT, signs) so hostile input cannot
// recurse without limit.
const maxDepth = 256

func (p *parser) peek() token  { return p.toks[p.i] }
func (p *parser) peek2() token { return p.toks[min(p.i+1, len(p.toks)-1)] }
func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tEOF {
		p.i++
	}
	return t
}
func (p *parser) isOp(s string) bool { t := p.peek(); return t.kind == tOp && t.text == s }

func (p *parser) expectOp(s string) error {
	if !p.isOp(s) {
		t := p.peek()
		return errAt(p.src, t.pos, "expected %q, found %s", s, t)
	}
	p.next()
	return nil
}

func (p *parser) asBool(n *node, pos int) (*node, error) {
	switch {
	case n.isBool:
		return n, nil
	case n.op == opProp:
		return &node{op: opBoolCast, l: n, isBool: true}, nil
	}
	return nil, errAt(p.src, pos, "expression %s will not result in a boolean value", describe(n))
}

func describe(n *node) string {
	switch n.op {
	case opConst:
		return n.val.String()
	case opProp:
		return n.name
	}
	return "(expression)"
}

func (p *parser) or() (*node, error)  { return p.boolChain(p.and, tOr, opOr) }
func (p *parser) and() (*node, error) { return p.boolChain(p.equality, tAnd, opAnd) }

// boolChain parses operand (sep operand)* into a left-deep tree of o, every
// operand checked to be boolean at its own position.
func (p *parser) boolChain(operand func() (*node, error), sep tokKind, o op) (*node, error) {
	pos := p.peek().pos
	l, err := operand()
	if err != nil {
		return nil, err
	}
	for p.peek().kind == sep {
		rpos := p.next().pos
		r, err := operand()
		if err != nil {
			return nil, err
		}
		if l, err = p.asBool(l, pos); err != nil {
			return nil, err
		}
		if r, err = p.asBool(r, rpos); err != nil {
			return nil, err
		}
		l = &node{op: o, l: l, r: r, isBool: true}
	}
	return l, nil
}

func (p *parser) equality() (*node, error) {
	pos := p.peek().pos
	l, err := p.comparison()
	if err != nil {
		return nil, err
	}
	for {
		switch {
		case p.isOp("=") || p.isOp("<>"):
			ne := p.next().text == "<>"
			rpos := p.peek().pos
			r, err := p.comparison()
			if err != nil {
				return nil, err
			}
			if err := p.checkEqual(l, r, pos, rpos); err != nil {
				return nil, err
			}
			l = &node{op: opEq, l: l, r: r, isBool: true}
			if ne {
				l = &node{op: opNot, l: l, isBool: true}
			}
		case p.peek().kind == tIs:
			p.next()
			not := false
			if p.peek().kind == tNot {
				p.next()
				not = true
			}
			if t := p.next(); t.kind != tNull {
				return nil, errAt(p.src, t.pos, "expected NULL after IS, found %s", t)
			}
			l = &node{op: opIsNull, l: l, isBool: true}
			if not {
				l = &node{op: opNot, l: l, isBool: true}
			}
		default:
			return l, nil
		}
	}
}

// checkEqual applies Apache's checkEqualOperand and checkEqualOperandCompatability.
func (p *parser) checkEqual(l, r *node, lpos, rpos int) error {
	for _, x := range []struct {
		n   *node
		pos int
	}{{l, lpos}, {r, rpos}} {
		if x.n.op == opConst && x.n.val.k == kNull {
			return errAt(p.src, x.pos, "NULL cannot be compared with =, use IS NULL")
		}
	}
	if l.op == opConst && r.op == opConst && l.isBool && !r.isBool {
		return errAt(p.src, lpos, "%s cannot be compared with %s", l.val, r.val)
	}
	return nil
}

// checkOrdered applies Apache's checkLessThanOperand: constants must be
// numbers, and boolean expressions cannot be ordered.
func (p *parser) checkOrdered(n *node, pos int) error {
	if n.op == opConst {
		if n.val.k == kLong || n.val.k == kDouble {
			return nil
		}
		return errAt(p.src, pos, "value %s cannot be compared", n.val)
	}
	if n.isBool {
		return errAt(p.src, pos, "a boolean expression cannot be compared")
	}
	return nil
}

func (p *parser) comparison() (*node, error) {
	pos := p.peek().pos
	l, err := p.unary()
	if err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		switch {
		case t.kind == tOp && (t.text == ">" || t.text == ">=" || t.text == "<" || t.text == "<="):
			p.next()
			rpos := p.peek().pos
			r, err := p.unary()
			if err != nil {
				return nil, err
			}
			if err := p.checkOrdered(l, pos); err != nil {
				return nil, err
			}
			if err := p.checkOrdered(r, rpos); err != nil {
				return nil, err
			}
			o := map[string]op{">": opGt, ">=": opGe, "<": opLt, "<=": opLe}[t.text]
			l = &node{op: o, l: l, r: r, isBool: true}
		case t.kind == tBetween || t.kind == tNot && p.peek2().kind == tBetween:
			not := p.next().kind == tNot
			if not {
				p.next()
			}
			lopos := p.peek().pos
			lo, err := p.unary()
			if err != nil {
				return nil, err
			}
			if t := p.next(); t.kind != tAnd {
				return nil, errAt(p.src, t.pos, "expected AND in BETWEEN, found %s", t)
			}
			hipos := p.peek().pos
			hi, err := p.unary()
			if err != nil {
				return nil, err
			}
			for _, x := range []struct {
				n   *node
				pos int
			}{{l, pos}, {lo, lopos}, {hi, hipos}} {
				if err := p.checkOrdered(x.n, x.pos); err != nil {
					return nil, err
				}
			}
			if not { // NOT BETWEEN = left < low OR left > high
				l = &node{op: opOr, l: &node{op: opLt, l: l, r: lo, isBool: true}, r: &node{op: opGt, l: l, r: hi, isBool: true}, isBool: true}
			} else {
				l = &node{op: opAnd, l: &node{op: opGe, l: l, r: lo, isBool: true}, r: &node{op: opLe, l: l, r: hi, isBool: true}, isBool: true}
			}
		case t.kind == tIn || t.kind == tNot && p.peek2().kind == tIn:
			not := p.next().kind == tNot
			if not {
				p.next()
			}
			if l.op != opProp {
				return nil, errAt(p.src, pos, "expected a property for IN, found %s", describe(l))
			}
			if err := p.expectOp("("); err != nil {
				return nil, err
			}
			var list []string
			for {
				s, err := p.stringLit()
				if err != nil {
					return nil, err
				}
				list = append(list, s)
				if !p.isOp(",") {
					break
				}
				p.next()
			}
			if err := p.expectOp(")"); err != nil {
				return nil, err
			}
			l = &node{op: opIn, l: l, strs: list, not: not, isBool: true}
		case isMatchKw(t.kind) || t.kind == tNot && isMatchKw(p.peek2().kind):
			not := p.next().kind == tNot
			kw := t.kind
			if not {
				kw = p.next().kind
			}
			s, err := p.stringLit()
			if err != nil {
				return nil, err
			}
			o := map[tokKind]op{tContains: opContains, tStartsWith: opStartsWith, tEndsWith: opEndsWith}[kw]
			l = &node{op: o, l: l, strs: []string{s}, not: not, isBool: true}
		default:
			return l, nil
		}
	}
}

func isMatchKw(k tokKind) bool { return k == tContains || k == tStartsWith || k == tEndsWith }

func (p *parser) stringLit() (string, error) {
	t := p.next()
	if t.kind != tString {
		return "", errAt(p.src, t.pos, "expected a string literal, found %s", t)
	}
	return t.text, nil
}

func (p *parser) unary() (*node, error) {
	t := p.peek()
	if p.depth++; p.depth > maxDepth {
		return nil, errAt(p.src, t.pos, "nested more than %d levels", maxDepth)
	}
	defer func() { p.depth-- }()
	switch {
	case t.kind == tOp && t.text == "+":
		p.next()
		return p.unary()
	case t.kind == tOp && t.text == "-":
		p.next()
		x, err := p.unary()
		if err != nil {
			return nil, err
		}
		if x.op == opConst && x.val.k == kLong {
			return &node{op: opConst, val: value{k: kLong, i: -x.val.i}}, nil
		}
		if x.op == opConst && x.val.k == kDouble {
			return &node{op: opConst, val: value{k: kDouble, f: -x.val.f}}, nil
		}
		return &node{op: opNeg, l: x}, nil
	case t.kind == tNot:
		p.next()
		pos := p.peek().pos
		x, err := p.unary()
		if err != nil {
			return nil, err
		}
		if x, err = p.asBool(x, pos); err != nil {
			return nil, err
		}
		return &node{op: opNot, l: x, isBool: true}, nil
	}
	return p.primary()
}

func (p *parser) primary() (*node, error) {
	t := p.next()
	switch t.kind {
	case tString:
		return &node{op: opConst, val: value{k: kString, s: t.text}}, nil
	case tDecimal:
		n, err := strconv.ParseInt(t.text, 10, 64)
		if err != nil {
			return nil, errAt(p.src, t.pos, "number %s out of range", t.text)
		}
		return &node{op: opConst, val: value{k: kLong, i: n}}, nil
	case tFloat:
		f, err := strconv.ParseFloat(t.text, 64)
		// Apache's ConstantExpression.createFloat refuses values above
		// Double.MAX_VALUE and below Double.MIN_VALUE (so 0.0 too).
		if err != nil || f > math.MaxFloat64 || f < math.SmallestNonzeroFloat64 {
			return nil, errAt(p.src, t.pos, "floating point number %s out of range", t.text)
		}
		return &node{op: opConst, val: value{k: kDouble, f: f}}, nil
	case tTrue:
		return &node{op: opConst, val: vTrue, isBool: true}, nil
	case tFalse:
		return &node{op: opConst, val: vFalse, isBool: true}, nil
	case tNull:
		return &node{op: opConst, val: vNull, isBool: true}, nil
	case tIdent:
		return &node{op: opProp, name: t.text}, nil
	case tOp:
		if t.text == "(" {
			n, err := p.or()
			if err != nil {
				return nil, err
			}
			if err := p.expectOp(")"); err != nil {
				return nil, err
			}
			return n, nil
		}
	}
	return nil, errAt(p.src, t.pos, "unexpected %s", t)
}

// ---------------------------------------------------------------------------
// evaluation

func eval(n *node, get func(string) (string, bool)) (value, error) {
	switch n.op {
	case opConst:
		return n.val, nil
	case opProp:
		if s, ok := get(n.name); ok {
			return value{k: kString, s: s}, nil
		}
		return vNull, nil
	case opBoolCast:
		v, err := eval(n.l, get)
		if err != nil || v.k == kNull {
			return vNull, err
		}
		return boolVal(v.k == kBool && v.b), nil
	case opAnd, opOr:
		short := n.op == opOr // OR stops at TRUE, AND at FALSE
		l, err := eval(n.l, get)
		if err != nil {
			return vNull, err
		}
		if l.k == kBool && l.b == short {
			return l, nil
		}
		r, err := eval(n.r, get)
		if err != nil {
			return vNull, err
		}
		if r.k == kBool && r.b == short {
			return r, nil
		}
		if l.k != kBool || r.k != kBool {
			return vNull, nil
		}
		return boolVal(!short), nil
	case opNot:
		v, err := eval(n.l, get)
		if err != nil || v.k != kBool {
			return vNull, err
		}
		return boolVal(!v.b), nil
	case opNeg:
		v, err := eval(n.l, get)
		switch {
		case err != nil:
			return vNull, err
		case v.k == kLong:
			return value{k: kLong, i: -v.i}, nil
		case v.k == kDouble:
			return value{k: kDouble, f: -v.f}, nil
		}
		return vNull, nil
	case opIsNull:
		v, err := eval(n.l, get)
		return boolVal(v.k == kNull), err
	case opEq:
		l, err := eval(n.l, get)
		if err != nil {
			return vNull, err
		}
		r, err := eval(n.r, get)
		if err != nil {
			return vNull, err
		}
		if (l.k == kNull) != (r.k == kNull) {
			if l.k == kNull {
				return vNull, nil
			}
			return vFalse, nil
		}
		if l.k == kNull {
			return vTrue, nil
		}
		c, err := compare(l, r)
		if err != nil {
			return vNull, err
		}
		return boolVal(c == 0), nil
	case opGt, opGe, opLt, opLe:
		l, err := eval(n.l, get)
		if err != nil || l.k == kNull {
			return vNull, err
		}
		r, err := eval(n.r, get)
		if err != nil || r.k == kNull {
			return vNull, err
		}
		if l.k == kString && r.k == kString { // Apache compares two strings as doubles
			lf, err1 := parseJavaDouble(l.s)
			rf, err2 := parseJavaDouble(r.s)
			if err1 != nil || err2 != nil {
				return vNull, errEval
			}
			l, r = value{k: kDouble, f: lf}, value{k: kDouble, f: rf}
		}
		c, err := compare(l, r)
		if err != nil {
			return vNull, err
		}
		switch n.op {
		case opGt:
			return boolVal(c > 0), nil
		case opGe:
			return boolVal(c >= 0), nil
		case opLt:
			return boolVal(c < 0), nil
		}
		return boolVal(c <= 0), nil
	case opIn:
		v, err := eval(n.l, get)
		if err != nil || v.k != kString {
			return vNull, err
		}
		in := false
		for _, s := range n.strs {
			if s == v.s {
				in = true
				break
			}
		}
		return boolVal(in != n.not), nil
	case opContains, opStartsWith, opEndsWith:
		v, err := eval(n.l, get)
		search := n.strs[0]
		if err != nil || search == "" || v.k != kString {
			return vFalse, err
		}
		var hit bool
		switch n.op {
		case opContains:
			hit = strings.Contains(v.s, search)
		case opStartsWith:
			hit = strings.HasPrefix(v.s, search)
		default:
			hit = strings.HasSuffix(v.s, search)
		}
		return boolVal(hit != n.not), nil
	}
	panic(fmt.Sprintf("BUG: filter: unknown op %d", n.op))
}

// compare is Apache's ComparisonExpression.__compare with string conversion
// on: mixed kinds convert the string side (a failure fails the evaluation),
// numbers widen to double; other mixes compare as "less".
func compare(l, r value) (int, error) {
	if l.k != r.k {
		var err error
		switch {
		case l.k == kBool:
			if r.k == kString {
				return 0, errEval // Apache casts the Boolean to String and throws
			}
			return -1, nil
		case l.k == kLong && r.k == kDouble:
			l = value{k: kDouble, f: float64(l.i)}
		case l.k == kDouble && r.k == kLong:
			r = value{k: kDouble, f: float64(r.i)}
		case (l.k == kLong || l.k == kDouble) && r.k == kString:
			r, err = convert(r.s, l.k)
		case l.k == kString && r.k != kNull:
			l, err = convert(l.s, r.k)
		default:
			return -1, nil
		}
		if err != nil {
			return 0, err
		}
	}
	switch l.k {
	case kBool:
		return cmpBool(l.b, r.b), nil
	case kLong:
		return cmp3(l.i < r.i, l.i > r.i), nil
	case kDouble:
		return cmp3(l.f < r.f, l.f > r.f), nil
	case kString:
		return strings.Compare(l.s, r.s), nil
	}
	return 0, nil
}

func cmp3(less, more bool) int {
	switch {
	case less:
		return -1
	case more:
		return 1
	}
	return 0
}

func cmpBool(a, b bool) int {
	if a == b {
		return 0
	}
	if !a {
		return -1
	}
	return 1
}

// convert parses s as kind k with Java's valueOf rules.
func convert(s string, k kind) (value, error) {
	switch k {
	case kBool:
		return boolVal(strings.EqualFold(s, "true")), nil
	case kLong:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return vNull, errEval
		}
		return value{k: kLong, i: n}, nil
	case kDouble:
		f, err := parseJavaDouble(s)
		if err != nil {
			return vNull, errEval
		}
		return value{k: kDouble, f: f}, nil
	}
	return vNull, errEval
}

// parseJavaDouble approximates Double.valueOf: surrounding whitespace is
// ignored and a trailing d/D/f/F type suffix is allowed.
func parseJavaDouble(s string) (float64, error) {
	s = strings.TrimSpace(s)
	if n := len(s); n > 1 && strings.ContainsRune("dDfF", rune(s[n-1])) && (isDigit(s[n-2]) || s[n-2] == '.') {
		s = s[:n-1]
	}
	if strings.ContainsAny(s, "_xXpPnN") { // Go syntax Java rejects (hex, underscores, inf, nan)
		return 0, errEval
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, errEval
	}
	return f, nil
}
