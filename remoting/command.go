package remoting

import (
	"errors"
	"fmt"
	"strconv"
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

// ServerVersion is the MQVersion ordinal rocketgo reports in its responses and
// requests: V4_9_8 (409). Clients store it as the broker version; it must be
// ≥ 232 for Java to allow SQL92 pulls.
const ServerVersion int32 = 409

// Command is one request or response. A decoded Command owns all its memory.
type Command struct {
	Code      int32
	Language  LanguageCode
	Version   int32
	Opaque    int32
	Flag      int32
	Remark    string
	ExtFields map[string]string
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

// IsResponse reports whether the response bit is set.
func (c *Command) IsResponse() bool { return c.Flag&FlagResponse != 0 }

// IsOneway reports whether the requester asked for no answer. The Go client
// never sets this bit, even on its one-way calls.
func (c *Command) IsOneway() bool { return c.Flag&FlagOneway != 0 }

// NewRequest builds a request from this process (broker→namesrv, broker→client).
func NewRequest(code int32, ext map[string]string, body []byte) *Command {
	return &Command{Code: code, Language: LangJava, Version: ServerVersion, ExtFields: ext, Body: body}
}

// NewResponse builds the answer to req: same opaque and serialize type, response bit set.
func NewResponse(req *Command, code int32, remark string) *Command {
	return &Command{
		Code:      code,
		Language:  LangJava,
		Version:   ServerVersion,
		Opaque:    req.Opaque,
		Flag:      FlagResponse,
		Remark:    remark,
		Serialize: req.Serialize,
	}
}

// Set stores a header field, creating the map on first use.
func (c *Command) Set(key, value string) {
	if c.ExtFields == nil {
		c.ExtFields = make(map[string]string, 8)
	}
	c.ExtFields[key] = value
}

// SetInt64 stores an integer header field as its decimal string.
func (c *Command) SetInt64(key string, v int64) { c.Set(key, strconv.FormatInt(v, 10)) }

// ErrMissingField is wrapped by the header accessors when a required field is absent.
var ErrMissingField = errors.New("remoting: missing header field")

// ErrBadField is wrapped by the header accessors when a field does not parse.
var ErrBadField = errors.New("remoting: bad header field")

// Str returns a header field; "" when absent (Go sends "" for unset fields).
func (c *Command) Str(key string) string { return c.ExtFields[key] }

// RequireStr returns a header field that Apache marks @CFNotNull.
func (c *Command) RequireStr(key string) (string, error) {
	v, ok := c.ExtFields[key]
	if !ok {
		return "", fmt.Errorf("%w: %s", ErrMissingField, key)
	}
	return v, nil
}

// Int64 parses a required integer header field.
func (c *Command) Int64(key string) (int64, error) {
	v, ok := c.ExtFields[key]
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
	v, ok := c.ExtFields[key]
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
	v := c.ExtFields[key]
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
	v := c.ExtFields[key]
	return len(v) == 4 && (v[0]|0x20) == 't' && (v[1]|0x20) == 'r' && (v[2]|0x20) == 'u' && (v[3]|0x20) == 'e'
}
