// Package jsonlib is the project's one JSON configuration: json-iterator
// set to read and write as encoding/json does. Each package reaches it
// through its own json variable (jsonlib.go).
//
// Beyond jsoniter.ConfigCompatibleWithStandardLibrary it decodes strings
// as encoding/json does: a byte that is not part of valid UTF-8 becomes
// U+FFFD. Without that a name read from a request or a file could hold
// bytes that the written form (which escapes them as \ufffd) does not, so
// a table written and read back would no longer equal the one in memory.
// Map keys are read as json-iterator reads them.
package jsonlib

import (
	"unicode/utf8"
	"unsafe"

	jsoniter "github.com/json-iterator/go"
	"github.com/modern-go/reflect2"
)

// Std is the configuration every package uses.
var Std = newStd()

func newStd() jsoniter.API {
	api := jsoniter.Config{EscapeHTML: true, SortMapKeys: true, ValidateJsonRawMessage: true}.Froze()
	api.RegisterExtension(jsoniter.DecoderExtension{reflect2.TypeOf(""): validUTF8{}})
	return api
}

// validUTF8 decodes a JSON string value into a Go string, each invalid
// UTF-8 byte replaced by U+FFFD; null leaves the string as it was.
type validUTF8 struct{}

func (validUTF8) Decode(ptr unsafe.Pointer, iter *jsoniter.Iterator) {
	if iter.ReadNil() {
		return
	}
	s := iter.ReadString()
	if !utf8.ValidString(s) {
		s = replaceInvalid(s)
	}
	*(*string)(ptr) = s
}

// replaceInvalid is s with every byte that does not start a valid UTF-8
// sequence replaced by U+FFFD, as encoding/json's unquote does.
func replaceInvalid(s string) string {
	b := make([]byte, 0, len(s)+8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = utf8.AppendRune(b, utf8.RuneError)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return string(b)
}
