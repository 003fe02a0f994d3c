package remoting

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"unsafe"
)

// SerializeType is the header serialization, the top byte of a frame's second word.
type SerializeType uint8

const (
	JSON     SerializeType = 0
	RocketMQ SerializeType = 1
)

func (t SerializeType) String() string {
	switch t {
	case JSON:
		return "JSON"
	case RocketMQ:
		return "ROCKETMQ"
	}
	return "UNKNOWN(" + strconv.Itoa(int(t)) + ")"
}

// Flag bits of a Command.
const (
	FlagResponse int32 = 1 << 0 // RPC_TYPE: 0 request, 1 response
	FlagOneway   int32 = 1 << 1 // RPC_ONEWAY: the requester wants no answer
)

// LanguageCode is Apache's LanguageCode enum: its ordinal goes into binary
// headers, its name into JSON headers.
type LanguageCode uint8

const (
	LangJava  LanguageCode = 0
	LangOther LanguageCode = 7
	LangGo    LanguageCode = 9
	langCount              = 14
)

var languageNames = [langCount]string{"JAVA", "CPP", "DOTNET", "PYTHON", "DELPHI", "ERLANG",
	"RUBY", "OTHER", "HTTP", "GO", "PHP", "OMS", "RUST", "NODE_JS"}

func (l LanguageCode) String() string {
	if int(l) < len(languageNames) {
		return languageNames[l]
	}
	return "OTHER"
}

func parseLanguage(s string) LanguageCode {
	for i, n := range languageNames {
		if n == s {
			return LanguageCode(i)
		}
	}
	return LangOther
}

// Field is one extFields entry.
type Field struct{ Key, Value string }

// Command is one request or response. A decoded Command's strings are its
// own (handlers may keep them); its Body aliases the frame it came from.
//
// Requests the server decodes and responses built with NewResponse come from
// a pool: the server recycles a request once its handler has returned and a
// response once it has been written. A handler that needs its request after
// returning (a parked pull) keeps req.Clone(), never req.
type Command struct {
	Code     int32
	Language LanguageCode
	Version  int32
	Opaque   int32
	Flag     int32
	Remark   string
	// ExtFields in arrival order; when a key repeats the last one counts,
	// as in the Java decoder's HashMap.
	ExtFields []Field
	Body      []byte
	// BodyVec, when non-nil, is the body as several slices written in order
	// (a pull answer straight from the mapped commit log); Body is then unused.
	BodyVec [][]byte
	// Serialize is the header format the command arrived in, or is to be sent in.
	Serialize SerializeType
	// ReleaseBody, if set on a response, is called once the connection no
	// longer needs Body or BodyVec (written, buffered by gnet, or dropped), so
	// a pooled buffer can be reused or a mapped file let go. Until then the
	// body must not change.
	ReleaseBody func()
	// Began and ReqCode let a handler that wraps others (processor's
	// interceptors) time an answer written after its handler returned
	// (LateObserver). Began is when serving the request began, on that
	// handler's own clock; 0 when nothing asked. ReqCode is, on a response,
	// the code of the request it answers. NewResponse carries both over from
	// the request, Clone keeps Began.
	Began   int64
	ReqCode int32

	pooled  bool   // from commandPool: recycle returns it
	free    bool   // in the pool: a second recycle (a bug) must not put it twice
	frame   []byte // a pooled request's frame; Body aliases it
	scratch []byte // decode: unescaped text; pooled response: formatted values
}

// done is called once a response has been written or dropped: its body is
// released and the command recycled.
func (c *Command) done() {
	c.releaseBody()
	c.recycle()
}

// releaseBody calls ReleaseBody once.
func (c *Command) releaseBody() {
	if c.ReleaseBody != nil {
		c.ReleaseBody()
		c.ReleaseBody = nil
	}
}

// BodyLen is the length of the body, whichever form it is in.
func (c *Command) BodyLen() int {
	if c.BodyVec == nil {
		return len(c.Body)
	}
	n := 0
	for _, b := range c.BodyVec {
		n += len(b)
	}
	return n
}

// appendBody appends the body, whichever form it is in.
func (c *Command) appendBody(dst []byte) []byte {
	if c.BodyVec == nil {
		return append(dst, c.Body...)
	}
	for _, b := range c.BodyVec {
		dst = append(dst, b...)
	}
	return dst
}

// iovec returns header followed by the body's pieces, in iov's storage.
func (c *Command) iovec(iov [][]byte, header []byte) [][]byte {
	iov = append(iov[:0], header)
	if c.BodyVec == nil {
		return append(iov, c.Body)
	}
	return append(iov, c.BodyVec...)
}

// IsResponse reports whether the response bit is set.
func (c *Command) IsResponse() bool { return c.Flag&FlagResponse != 0 }

// IsOneway reports whether the requester asked for no answer. The Go client
// never sets this bit, even on its one-way calls.
func (c *Command) IsOneway() bool { return c.Flag&FlagOneway != 0 }

// NewRequest builds a request from this process (broker→namesrv,
// broker→client); ext's fields go out sorted by key.
func NewRequest(code int32, ext map[string]string, body []byte) *Command {
	return &Command{Code: code, Language: LangJava, Version: ServerVersion(), ExtFields: Fields(ext), Body: body}
}

// Fields turns a map into ExtFields, sorted by key.
func Fields(m map[string]string) []Field {
	if len(m) == 0 {
		return nil
	}
	fs := make([]Field, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		fs = append(fs, Field{k, m[k]})
	}
	return fs
}

// FieldMap returns the fields as a map (tests, diagnostics; not the hot path).
func (c *Command) FieldMap() map[string]string {
	m := make(map[string]string, len(c.ExtFields))
	for _, f := range c.ExtFields {
		m[f.Key] = f.Value
	}
	return m
}

// NewResponse builds the answer to req: same opaque and serialize type,
// response bit set. It comes from the pool; the connection recycles it once
// written, so nothing may keep it (or its field values) after returning it.
func NewResponse(req *Command, code int32, remark string) *Command {
	c := commandPool.Get().(*Command)
	c.free = false
	c.Code = code
	c.Language = LangJava
	c.Version = ServerVersion()
	c.Opaque = req.Opaque
	c.Flag = FlagResponse
	c.Remark = remark
	c.Serialize = req.Serialize
	c.Began, c.ReqCode = req.Began, req.Code
	return c
}

// Lookup returns a header field and whether it is present.
func (c *Command) Lookup(key string) (string, bool) {
	for i := len(c.ExtFields) - 1; i >= 0; i-- {
		if c.ExtFields[i].Key == key {
			return c.ExtFields[i].Value, true
		}
	}
	return "", false
}

// Set stores a header field, replacing an earlier value.
func (c *Command) Set(key, value string) {
	for i := range c.ExtFields {
		if c.ExtFields[i].Key == key {
			c.ExtFields[i].Value = value
			return
		}
	}
	c.ExtFields = append(c.ExtFields, Field{key, value})
}

// SetInt64 stores an integer header field as its decimal string.
func (c *Command) SetInt64(key string, v int64) {
	var b [20]byte
	c.SetBytes(key, strconv.AppendInt(b[:0], v, 10))
}

// SetBytes stores a header field whose text is b (copied). A pooled
// response keeps the text in its own scratch space: no allocation.
func (c *Command) SetBytes(key string, b []byte) {
	if !c.pooled || len(b) == 0 {
		c.Set(key, string(b))
		return
	}
	if len(c.scratch)+len(b) > cap(c.scratch) {
		// Earlier values keep the old array alive; never grow in place.
		c.scratch = make([]byte, 0, max(256, 2*len(b)))
	}
	at := len(c.scratch)
	c.scratch = append(c.scratch, b...)
	c.Set(key, unsafe.String(&c.scratch[at], len(b)))
}

// ErrMissingField is wrapped by the header accessors when a required field is absent.
var ErrMissingField = errors.New("remoting: missing header field")

// ErrBadField is wrapped by the header accessors when a field does not parse.
var ErrBadField = errors.New("remoting: bad header field")

// Str returns a header field; "" when absent (Go sends "" for unset fields).
func (c *Command) Str(key string) string {
	v, _ := c.Lookup(key)
	return v
}

// RequireStr returns a header field that Apache marks @CFNotNull.
func (c *Command) RequireStr(key string) (string, error) {
	v, ok := c.Lookup(key)
	if !ok {
		return "", fmt.Errorf("%w: %s", ErrMissingField, key)
	}
	return v, nil
}

// Int64 parses a required integer header field.
func (c *Command) Int64(key string) (int64, error) {
	v, ok := c.Lookup(key)
	if !ok {
		return 0, fmt.Errorf("%w: %s", ErrMissingField, key)
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: %s=%q", ErrBadField, key, v)
	}
	return n, nil
}

// Int32 parses a required 32-bit integer header field.
func (c *Command) Int32(key string) (int32, error) {
	v, ok := c.Lookup(key)
	if !ok {
		return 0, fmt.Errorf("%w: %s", ErrMissingField, key)
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("%w: %s=%q", ErrBadField, key, v)
	}
	return int32(n), nil
}

// OptInt64 parses an optional integer header field; absent, empty or malformed
// values yield def, as Apache's decoder leaves such fields at their default.
func (c *Command) OptInt64(key string, def int64) int64 {
	v := c.Str(key)
	if v == "" {
		return def
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return def
	}
	return n
}

// Bool parses a boolean header field the way Java's Boolean.parseBoolean does.
func (c *Command) Bool(key string) bool {
	v := c.Str(key)
	return len(v) == 4 && (v[0]|0x20) == 't' && (v[1]|0x20) == 'r' && (v[2]|0x20) == 'u' && (v[3]|0x20) == 'e'
}
