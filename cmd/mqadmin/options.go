package main

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// options is one subcommand's options as Apache's tools declare them with
// commons-cli 1.5 (Options, OptionGroup) and what DefaultParser made of a
// command line (CommandLine). Declare in Apache's order: the order of the
// required ones is the order "Missing required options" names them in.
type options struct {
	name   string // "mqadmin topicRoute"
	list   []*option
	groups []*optionGroup
	// required: keys (string) and groups (*optionGroup) in declaration
	// order, as Options.getRequiredOptions.
	required []any
}

type option struct {
	short, long string // either may be empty, not both
	arg         bool   // takes a value
	required    bool
	desc        string
	group       *optionGroup

	given  bool
	valued bool // value holds the first value given
	value  string
	str    *string
	flag   *bool
	conv   func(string) error // a number's parse, after the command line's
}

type optionGroup struct {
	required bool
	members  []*option
	selected *option
}

func (op *option) key() string {
	if op.short != "" {
		return op.short
	}
	return op.long
}

func newOptions(name string) *options { return &options{name: name} }

func (o *options) add(short, long string, arg bool, desc string) *option {
	op := &option{short: short, long: long, arg: arg, desc: desc}
	for i, p := range o.list {
		if p.key() == op.key() { // Options.addOption replaces
			o.list[i] = op
			return op
		}
	}
	o.list = append(o.list, op)
	return op
}

// String declares an option taking a value; the pointer holds its first
// value once parsed, "" when not given.
func (o *options) String(short, long, desc string) *string {
	op := o.add(short, long, true, desc)
	op.str = new(string)
	return op.str
}

// StringDef is String with a value for when the option is not given.
func (o *options) StringDef(short, long, def, desc string) *string {
	p := o.String(short, long, desc)
	*p = def
	return p
}

// Req is String for a required option.
func (o *options) Req(short, long, desc string) *string {
	p := o.String(short, long, desc)
	key := short
	if key == "" {
		key = long
	}
	o.require(o.lookup(key)) // not the list's last: a redeclared option keeps its place
	return p
}

// Int32 declares an option whose value is a 32-bit integer, def when not
// given; a value that is none fails the command (Integer.parseInt).
func (o *options) Int32(short, long string, def int32, desc string) *int32 {
	p := &def
	op := o.add(short, long, true, desc)
	op.conv = func(s string) error {
		n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 32)
		if err != nil {
			return fmt.Errorf("-%s: %q is not a 32-bit integer", op.key(), s)
		}
		*p = int32(n)
		return nil
	}
	return p
}

// Int64 is Int32 for a 64-bit integer (Long.parseLong).
func (o *options) Int64(short, long string, def int64, desc string) *int64 {
	p := &def
	op := o.add(short, long, true, desc)
	op.conv = func(s string) error {
		n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil {
			return fmt.Errorf("-%s: %q is not a 64-bit integer", op.key(), s)
		}
		*p = n
		return nil
	}
	return p
}

// convert parses the numbers given, once the command line is.
func (o *options) convert() error {
	for _, op := range o.list {
		if op.conv != nil && op.valued {
			if err := op.conv(op.value); err != nil {
				return err
			}
		}
	}
	return nil
}

// Bool declares an option without a value: true when given.
func (o *options) Bool(short, long, desc string) *bool {
	op := o.add(short, long, false, desc)
	op.flag = new(bool)
	return op.flag
}

func (o *options) require(op *option) {
	op.required = true
	o.required = append(o.required, op.key())
}

// Group makes the options named by key (declared before) exclusive, one of
// them required when required (OptionGroup).
func (o *options) Group(required bool, keys ...string) {
	g := &optionGroup{required: required}
	for _, k := range keys {
		op := o.lookup(k)
		if op == nil {
			panic("BUG: option group names undeclared option " + k)
		}
		op.group = g
		g.members = append(g.members, op)
	}
	o.groups = append(o.groups, g)
	if required {
		o.required = append(o.required, g)
	}
}

// Given reports whether the option keyed key was on the command line.
func (o *options) Given(key string) bool {
	op := o.lookup(key)
	return op != nil && op.given
}

func (o *options) lookup(key string) *option {
	for _, op := range o.list {
		if op.key() == key {
			return op
		}
	}
	return nil
}

// hasShort is Options.hasShortOption: an option keyed s (its short name,
// or its long one when it has no short).
func (o *options) hasShort(s string) bool { return o.lookup(s) != nil }

// get is Options.getOption: by key, else by long name.
func (o *options) get(name string) *option {
	if op := o.lookup(name); op != nil {
		return op
	}
	return o.byLong(name)
}

func (o *options) byLong(l string) *option {
	for _, op := range o.list {
		if op.long != "" && op.long == l {
			return op
		}
	}
	return nil
}

// matching is Options.getMatchingOptions: the long names equal to name
// without its leading hyphens, else those it is a prefix of.
func (o *options) matching(name string) []string {
	name = strings.TrimLeft(name, "-")
	if o.byLong(name) != nil {
		return []string{name}
	}
	var out []string
	for _, op := range o.list {
		if op.long != "" && strings.HasPrefix(op.long, name) {
			out = append(out, op.long)
		}
	}
	return out
}

// parseError is commons-cli's ParseException: its message on stderr, the
// usage on stdout, exit 1.
type parseError struct{ msg string }

func (e *parseError) Error() string { return e.msg }

// errHelp: -h was given; the usage is printed, exit 0.
var errHelp = errors.New("help requested")

// parser is commons-cli 1.5's DefaultParser over one options.
type parser struct {
	o       *options
	current *option // the option waiting for its value
	token   string
	rest    []string // arguments that are no option (Apache ignores them)
	skip    bool
}

// parse reads args as DefaultParser does: -S V, -SV, -S=V, --L V, --L=V, -L V,
// unique prefixes of long names, values taken from the next token unless it
// is an option (a negative number is a value); "--" ends the options.
func (o *options) parse(args []string) error {
	p := &parser{o: o}
	for _, t := range args {
		if err := p.handle(t); err != nil {
			return err
		}
	}
	if err := p.checkArg(); err != nil {
		return err
	}
	var missing []string
	for _, r := range o.required {
		switch r := r.(type) {
		case string:
			if !o.lookup(r).given {
				missing = append(missing, r)
			}
		case *optionGroup:
			if r.selected == nil {
				missing = append(missing, r.String())
			}
		}
	}
	if len(missing) > 0 {
		s := ""
		if len(missing) > 1 {
			s = "s"
		}
		return &parseError{fmt.Sprintf("Missing required option%s: %s", s, strings.Join(missing, ", "))}
	}
	return nil
}

// String is OptionGroup.toString.
func (g *optionGroup) String() string {
	parts := make([]string, len(g.members))
	for i, op := range g.members {
		if op.short != "" {
			parts[i] = "-" + op.short
		} else {
			parts[i] = "--" + op.long
		}
		parts[i] += " " + op.desc
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func (p *parser) handle(t string) error {
	p.token = t
	var err error
	switch {
	case p.skip:
		p.rest = append(p.rest, t)
	case t == "--":
		p.skip = true
	case p.current != nil && p.isArgument(t):
		p.addValue(stripQuotes(t))
	case strings.HasPrefix(t, "--"):
		err = p.long(t)
	case strings.HasPrefix(t, "-") && t != "-":
		err = p.shortOrLong(t)
	default:
		err = p.unknown(t)
	}
	return err
}

// addValue gives the waiting option its value (one: Option.hasArg); a
// repeated option keeps its first (CommandLine.getOptionValue).
func (p *parser) addValue(v string) {
	op := p.current
	p.current = nil
	if op.valued {
		return
	}
	op.value, op.valued = v, true
	if op.str != nil {
		*op.str = v
	}
}

// isArgument: not an option, or a negative number.
func (p *parser) isArgument(t string) bool {
	return !p.isOption(t) || isNegativeNumber(t)
}

func isNegativeNumber(t string) bool {
	if !strings.HasPrefix(t, "-") {
		return false
	}
	var f float64
	_, err := fmt.Sscan(t, &f)
	if err != nil {
		return false
	}
	// Double.parseDouble takes the whole token
	rest := strings.TrimLeft(t[1:], "0123456789.eE+-")
	return rest == ""
}

func (p *parser) isOption(t string) bool { return p.isLongOption(t) || p.isShortOption(t) }

func (p *parser) isShortOption(t string) bool {
	if !strings.HasPrefix(t, "-") || len(t) == 1 {
		return false
	}
	name := t[1:]
	if i := strings.IndexByte(t, '='); i >= 0 {
		name = t[1:i]
	}
	if p.o.hasShort(name) {
		return true
	}
	return len(name) > 0 && p.o.hasShort(name[:1])
}

func (p *parser) isLongOption(t string) bool {
	if !strings.HasPrefix(t, "-") || len(t) == 1 {
		return false
	}
	name := t
	if i := strings.IndexByte(t, '='); i >= 0 {
		name = t[:i]
	}
	if len(p.o.matching(name)) > 0 {
		return true
	}
	return p.longPrefix(t) != "" && !strings.HasPrefix(t, "--")
}

// longPrefix is the longest long name t starts with ("-Xmx512m").
func (p *parser) longPrefix(t string) string {
	t = strings.TrimLeft(t, "-")
	for i := len(t) - 2; i > 1; i-- {
		if p.o.byLong(t[:i]) != nil {
			return t[:i]
		}
	}
	return ""
}

func (p *parser) unknown(t string) error {
	if strings.HasPrefix(t, "-") && len(t) > 1 {
		return &parseError{"Unrecognized option: " + t}
	}
	p.rest = append(p.rest, t)
	return nil
}

func (p *parser) long(t string) error {
	name, value, eq := strings.Cut(t, "=")
	if !eq {
		return p.longWithoutEqual(t)
	}
	m := p.o.matching(name)
	if len(m) == 0 {
		return p.unknown(p.token)
	}
	if len(m) > 1 && p.o.byLong(strings.TrimLeft(name, "-")) == nil {
		return ambiguous(name, m)
	}
	op := p.o.byLong(m[0])
	if !op.arg {
		return p.unknown(p.token)
	}
	if err := p.option(op); err != nil {
		return err
	}
	p.addValue(value)
	return nil
}

func ambiguous(name string, m []string) error {
	q := make([]string, len(m))
	for i, s := range m {
		q[i] = "'" + s + "'"
	}
	return &parseError{fmt.Sprintf("Ambiguous option: '%s'  (could be: %s)", name, strings.Join(q, ", "))}
}

func (p *parser) longWithoutEqual(t string) error {
	m := p.o.matching(t)
	switch {
	case len(m) == 0:
		return p.unknown(p.token)
	case len(m) > 1 && p.o.byLong(strings.TrimLeft(t, "-")) == nil:
		return ambiguous(t, m)
	}
	return p.option(p.o.byLong(m[0]))
}

func (p *parser) shortOrLong(token string) error {
	t := strings.TrimLeft(token, "-")
	pos := strings.IndexByte(t, '=')
	switch {
	case len(t) == 1:
		if p.o.hasShort(t) {
			return p.option(p.o.lookup(t))
		}
		return p.unknown(token)
	case pos < 0:
		if p.o.hasShort(t) {
			return p.option(p.o.lookup(t))
		}
		if len(p.o.matching(t)) > 0 {
			return p.longWithoutEqual(token)
		}
		if l := p.longPrefix(t); l != "" && p.o.byLong(l).arg {
			if err := p.option(p.o.byLong(l)); err != nil {
				return err
			}
			p.addValue(t[len(l):])
			return nil
		}
		return p.concatenated(token)
	default:
		name, value := t[:pos], t[pos+1:]
		if len(name) == 1 {
			op := p.o.get(name)
			if op == nil || !op.arg {
				return p.unknown(token)
			}
			if err := p.option(op); err != nil {
				return err
			}
			p.addValue(value)
			return nil
		}
		return p.long(token)
	}
}

// concatenated: -S1S2S3 or -SV (the rest of the token is S's value).
func (p *parser) concatenated(token string) error {
	for i := 1; i < len(token); i++ {
		ch := token[i : i+1]
		if !p.o.hasShort(ch) && p.o.byLong(ch) == nil {
			return p.unknown(token)
		}
		op := p.o.get(ch)
		if err := p.option(op); err != nil {
			return err
		}
		if p.current != nil && len(token) != i+1 {
			p.addValue(token[i+1:])
			return nil
		}
	}
	return nil
}

// checkArg: the option before still needs its value.
func (p *parser) checkArg() error {
	if p.current != nil {
		return &parseError{"Missing argument for option: " + p.current.key()}
	}
	return nil
}

func (p *parser) option(op *option) error {
	if err := p.checkArg(); err != nil {
		return err
	}
	if g := op.group; g != nil {
		if g.selected != nil && g.selected != op {
			return &parseError{fmt.Sprintf("The option '%s' was specified but an option from this group has already been selected: '%s'",
				op.key(), g.selected.key())}
		}
		g.selected = op
	}
	op.given = true
	if op.flag != nil {
		*op.flag = true
	}
	p.current = nil
	if op.arg {
		p.current = op
	}
	return nil
}

// stripQuotes is Util.stripLeadingAndTrailingQuotes: one pair of double
// quotes around a value without others goes.
func stripQuotes(s string) string {
	if len(s) > 1 && s[0] == '"' && s[len(s)-1] == '"' && !strings.Contains(s[1:len(s)-1], `"`) {
		return s[1 : len(s)-1]
	}
	return s
}

// helpWidth is ServerUtil's HelpFormatter width.
const helpWidth = 110

// sorted is the options in HelpFormatter's order: by key, ignoring case.
func (o *options) sorted(list []*option) []*option {
	out := append([]*option(nil), list...)
	sort.SliceStable(out, func(i, j int) bool {
		return strings.ToLower(out[i].key()) < strings.ToLower(out[j].key())
	})
	return out
}

// usage prints HelpFormatter.printHelp(name, options, true): the usage
// line, required options unbracketed, groups as "a | b", wrapped at 110,
// then one line per option.
func (o *options) usage(w io.Writer) {
	var b strings.Builder
	b.WriteString("usage: " + o.name + " ")
	done := map[*optionGroup]bool{}
	all := o.sorted(o.list)
	for i, op := range all {
		if g := op.group; g != nil {
			if !done[g] {
				done[g] = true
				if !g.required {
					b.WriteString("[")
				}
				for j, m := range o.sorted(g.members) {
					appendOption(&b, m, true)
					if j < len(g.members)-1 {
						b.WriteString(" | ")
					}
				}
				if !g.required {
					b.WriteString("]")
				}
			}
		} else {
			appendOption(&b, op, op.required)
		}
		if i < len(all)-1 {
			b.WriteString(" ")
		}
	}
	var sb strings.Builder
	text := b.String()
	wrapText(&sb, helpWidth, strings.IndexByte(text, ' ')+1, text)
	sb.WriteString("\n")

	prefixes := make([]string, len(all))
	max := 0
	for i, op := range all {
		var p string
		if op.short == "" {
			p = " " + "   --" + op.long
		} else {
			p = " -" + op.short
			if op.long != "" {
				p += ",--" + op.long
			}
		}
		if op.arg {
			p += " <arg>"
		}
		prefixes[i] = p
		if len(p) > max {
			max = len(p)
		}
	}
	for i, op := range all {
		line := prefixes[i] + strings.Repeat(" ", max-len(prefixes[i])) + "   " + op.desc
		wrapText(&sb, helpWidth, max+3, line)
		sb.WriteString("\n")
	}
	_, _ = io.WriteString(w, sb.String()) // a failed write to stdout has no one to tell
}

func appendOption(b *strings.Builder, op *option, required bool) {
	if !required {
		b.WriteString("[")
	}
	if op.short != "" {
		b.WriteString("-" + op.short)
	} else {
		b.WriteString("--" + op.long)
	}
	if op.arg {
		b.WriteString(" <arg>")
	}
	if !required {
		b.WriteString("]")
	}
}

// wrapText is HelpFormatter.renderWrappedText.
func wrapText(sb *strings.Builder, width, tab int, text string) {
	pos := findWrapPos(text, width, 0)
	if pos == -1 {
		sb.WriteString(rtrim(text))
		return
	}
	sb.WriteString(rtrim(text[:pos]) + "\n")
	if tab >= width {
		tab = 1
	}
	pad := strings.Repeat(" ", tab)
	for {
		text = pad + strings.TrimSpace(text[pos:])
		pos = findWrapPos(text, width, 0)
		if pos == -1 {
			sb.WriteString(text)
			return
		}
		if len(text) > width && pos == tab-1 {
			pos = width
		}
		sb.WriteString(rtrim(text[:pos]) + "\n")
	}
}

func findWrapPos(text string, width, start int) int {
	if i := strings.IndexByte(text[start:], '\n'); i >= 0 && start+i <= width {
		return start + i + 1
	}
	if i := strings.IndexByte(text[start:], '\t'); i >= 0 && start+i <= width {
		return start + i + 1
	}
	if start+width >= len(text) {
		return -1
	}
	pos := start + width
	for ; pos >= start; pos-- {
		if c := text[pos]; c == ' ' || c == '\n' || c == '\r' {
			break
		}
	}
	if pos > start {
		return pos
	}
	pos = start + width
	if pos == len(text) {
		return -1
	}
	return pos
}

func rtrim(s string) string { return strings.TrimRight(s, " \t\n\r") }
