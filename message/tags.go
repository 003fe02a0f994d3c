package message

import "unicode/utf8"

// TagsHash is Java's String.hashCode of tag over its UTF-16 code units
// (h = 31*h + c, int32 wrap-around), sign-extended to int64 as stored in a
// ConsumeQueue entry. Empty tag hashes to 0. Invalid UTF-8 bytes count as
// U+FFFD, as Java's decoder would produce.
func TagsHash(tag string) int64 { return int64(javaHash(tag)) }

// TagsHashBytes is TagsHash over a byte view.
func TagsHashBytes(tag []byte) int64 { return int64(javaHash(tag)) }

// JavaHash is java.lang.String.hashCode of s (UTF-16 code units).
func JavaHash(s string) int32 { return javaHash(s) }

// JavaHashMore continues a Java String.hashCode h over more text, so the
// hash of a concatenation is JavaHashMore(JavaHashMore(0, a), b) without
// building it.
func JavaHashMore[S ~string | ~[]byte](h int32, s S) int32 { return javaHashFrom(h, s) }

func javaHash[S ~string | ~[]byte](s S) int32 { return javaHashFrom(0, s) }

func javaHashFrom[S ~string | ~[]byte](h int32, s S) int32 {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			h = 31*h + int32(c)
			i++
			continue
		}
		var r rune
		var n int
		switch v := any(s).(type) {
		case string:
			r, n = utf8.DecodeRuneInString(v[i:])
		case []byte:
			r, n = utf8.DecodeRune(v[i:])
		default:
			// S is a named string/[]byte type; convert through string.
			r, n = utf8.DecodeRuneInString(string(s[i:]))
		}
		i += n
		if r >= 0x10000 {
			r -= 0x10000
			h = 31*h + int32(0xD800+(r>>10))
			h = 31*h + int32(0xDC00+(r&0x3FF))
			continue
		}
		h = 31*h + int32(r)
	}
	return h
}
