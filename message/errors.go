package message

import "errors"

// Sentinel errors returned (wrapped) by the decoders.
var (
	// ErrShortBuffer: the buffer ends before the structure does (a torn
	// tail when scanning a file).
	ErrShortBuffer = errors.New("message: short buffer")
	// ErrBlank: the buffer starts with the end-of-file BLANK record.
	ErrBlank = errors.New("message: blank end-of-file record")
	// ErrBadMagic: the magic code is not a message magic code.
	ErrBadMagic = errors.New("message: bad magic code")
	// ErrCorrupt: lengths inside the structure are inconsistent.
	ErrCorrupt = errors.New("message: corrupt record")
	// ErrTooLong: a field exceeds what its length prefix can carry.
	ErrTooLong = errors.New("message: field too long")
	// ErrBadMsgID: a message id string cannot be decoded.
	ErrBadMsgID = errors.New("message: bad message id")
)
