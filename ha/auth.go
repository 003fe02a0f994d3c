package ha

// The HA link's authentication, a rocketgo extension (haAuthSecret): with a
// secret configured, a master sends nothing of its commit log to a
// connection until it proved it holds the secret. Apache's HA port serves
// whoever connects and reports an offset; with the option off (the
// default) rocketgo does too, so that Apache slaves replicate.
//
// The exchange comes before the HA protocol, master first:
//
//	master → slave: "RGHA" 0x01 nonce[16]
//	slave → master: HMAC-SHA256(secret, "rocketgo-ha" ‖ nonce)[32]
//
// A connection that does not answer within AuthTimeout, or answers wrong,
// is closed. The nonce is fresh per connection, so an answer cannot be
// replayed on another.

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net"
	"time"
)

// AuthTimeout bounds the exchange on either side.
const AuthTimeout = 5 * time.Second

// MaxPendingAuth bounds the connections a master is authenticating at once;
// more are closed at once.
const MaxPendingAuth = 64

var authMagic = [5]byte{'R', 'G', 'H', 'A', 1}

// ErrAuthFailed is a slave's wrong answer, or a master's challenge that is
// not one.
var ErrAuthFailed = errors.New("ha: authentication failed")

func authMAC(secret []byte, nonce []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("rocketgo-ha"))
	m.Write(nonce)
	return m.Sum(nil)
}

// Challenge is the master's side: it returns nil once c proved it holds
// secret, and leaves c's deadline cleared.
func Challenge(c net.Conn, secret []byte) error {
	var msg [len(authMagic) + 16]byte
	copy(msg[:], authMagic[:])
	if _, err := rand.Read(msg[len(authMagic):]); err != nil {
		return err
	}
	if err := c.SetDeadline(time.Now().Add(AuthTimeout)); err != nil {
		return err
	}
	if _, err := c.Write(msg[:]); err != nil {
		return fmt.Errorf("send challenge: %w", err)
	}
	var answer [sha256.Size]byte
	if _, err := io.ReadFull(c, answer[:]); err != nil {
		return fmt.Errorf("read answer: %w", err)
	}
	if !hmac.Equal(answer[:], authMAC(secret, msg[len(authMagic):])) {
		return ErrAuthFailed
	}
	return c.SetDeadline(time.Time{})
}

// Answer is the slave's side: it reads the master's challenge and proves
// it holds secret, leaving c's deadline cleared.
func Answer(c net.Conn, secret []byte) error {
	if err := c.SetDeadline(time.Now().Add(AuthTimeout)); err != nil {
		return err
	}
	var msg [len(authMagic) + 16]byte
	if _, err := io.ReadFull(c, msg[:]); err != nil {
		return fmt.Errorf("read challenge (is haAuthSecret set on the master?): %w", err)
	}
	if [len(authMagic)]byte(msg[:len(authMagic)]) != authMagic {
		return fmt.Errorf("%w: the master sent no challenge", ErrAuthFailed)
	}
	if _, err := c.Write(authMAC(secret, msg[len(authMagic):])); err != nil {
		return fmt.Errorf("send answer: %w", err)
	}
	return c.SetDeadline(time.Time{})
}
