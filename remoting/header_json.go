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
	"fmt"
	"strconv"
	"unicode/utf8"

	jsoniter "github.com/json-iterator/go"
)

func appendJSONHeader(dst []byte, c *Command) []byte {
	dst = append(dst, `{"code":`...)
	dst = strconv.AppendInt(dst, int64(c.Code), 10)
	if c.ExtFields != nil {
		dst = append(dst, `,"extFields":{`...)
		first := true
		for k, v := range c.ExtFields {
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst = AppendJSONString(dst, k)
			dst = append(dst, ':')
			dst = AppendJSONString(dst, v)
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

var jsonAPI = jsoniter.ConfigCompatibleWithStandardLibrary

func decodeJSONHeader(b []byte) (c *Command, err error) {
	it := jsonAPI.BorrowIterator(b)
	defer jsonAPI.ReturnIterator(it)
	c = &Command{}
	if it.WhatIsNext() != jsoniter.ObjectValue {
		return nil, fmt.Errorf("%w: JSON header is not an object", ErrMalformed)
	}
	it.ReadObjectCB(func(it *jsoniter.Iterator, field string) bool {
		switch field {
		case "code":
			c.Code = it.ReadInt32()
		case "version":
			c.Version = it.ReadInt32()
		case "opaque":
			c.Opaque = it.ReadInt32()
		case "flag":
			c.Flag = it.ReadInt32()
		case "language":
			if it.WhatIsNext() == jsoniter.StringValue {
				c.Language = parseLanguage(it.ReadString())
			} else {
				c.Language = LanguageCode(it.ReadUint8())
			}
		case "remark":
			if it.WhatIsNext() == jsoniter.NilValue {
				it.Skip()
			} else {
				c.Remark = it.ReadString()
			}
		case "extFields":
			readExtFields(it, c)
		default:
			it.Skip()
		}
		return it.Error == nil
	})
	if it.Error != nil {
		return nil, fmt.Errorf("%w: JSON header: %v", ErrMalformed, it.Error)
	}
	return c, nil
}

func readExtFields(it *jsoniter.Iterator, c *Command) {
	if it.WhatIsNext() == jsoniter.NilValue {
		it.Skip()
		return
	}
	c.ExtFields = make(map[string]string, 8)
	it.ReadMapCB(func(it *jsoniter.Iterator, key string) bool {
		switch it.WhatIsNext() {
		case jsoniter.StringValue:
			c.ExtFields[key] = it.ReadString()
		case jsoniter.NilValue:
			it.Skip()
		default:
			c.ExtFields[key] = string(it.SkipAndReturnBytes())
		}
		return it.Error == nil
	})
}
