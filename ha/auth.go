package ha

// The HA link's authentication, a rocketgo extension (haAuthSecret): with a
// secret configured, a master sends nothing of its commit log to a
// connection until it proved it holds the secret, and a slave appends
// nothing from a master that did not prove it holds it too. Apache's HA
// port serves whoever connects and reports an offset; with the option off
// (the default) rocketgo does too, so that Apache slaves replicate.
//
// The exchange comes before the HA protocol, master first:
//
//	master → slave:  "RGHA" 0x02 nonceM[16]
//	slave → master:  nonceS[16] HMAC-SHA256(secret, "rocketgo-ha slave" ‖ nonceM ‖ nonceS)[32]
//	master → slave:  HMAC-SHA256(secret, "rocketgo-ha master" ‖ nonceS ‖ nonceM)[32]
//
// A side that does not answer within AuthTimeout, or answers wrong, is
// closed. Both nonces are fresh per connection, and each proof names its
// side, so an answer cannot be replayed on another connection nor
// reflected back. What it does not give: the frames that follow are
// neither signed nor encrypted (a party on the path can read or alter
// them), which docs/replication.md states.

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

// MaxPendingAuth bounds the connections a master is authenticating at
// once, and MaxPendingAuthPerAddr those from one IP address; a newcomer
// past either bound closes the oldest pending one (of its address first),
// so that a stranger holding connections open cannot keep a slave out.
const (
	MaxPendingAuth        = 64
	MaxPendingAuthPerAddr = 8
)

const nonceSize = 16

var authMagic = [5]byte{'R', 'G', 'H', 'A', 2}

// ChallengeSize is what a master sends first, and all a stranger reads.
const ChallengeSize = len(authMagic) + nonceSize

// ErrAuthFailed is a wrong proof from either side, or a master's
// challenge that is not one.
var ErrAuthFailed = errors.New("ha: authentication failed")

func authMAC(secret []byte, side string, first, second []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("rocketgo-ha " + side))
	m.Write(first)
	m.Write(second)
	return m.Sum(nil)
}

// Challenge is the master's side: it returns nil once c proved it holds
// secret and the master's proof is sent, and leaves c's deadline cleared.
func Challenge(c net.Conn, secret []byte) error {
	var msg [ChallengeSize]byte
	copy(msg[:], authMagic[:])
	nonceM := msg[len(authMagic):]
	if _, err := rand.Read(nonceM); err != nil {
		return err
	}
	if err := c.SetDeadline(time.Now().Add(AuthTimeout)); err != nil {
		return err
	}
	if _, err := c.Write(msg[:]); err != nil {
		return fmt.Errorf("send challenge: %w", err)
	}
	var answer [nonceSize + sha256.Size]byte
	if _, err := io.ReadFull(c, answer[:]); err != nil {
		return fmt.Errorf("read answer: %w", err)
	}
	nonceS := answer[:nonceSize]
	if !hmac.Equal(answer[nonceSize:], authMAC(secret, "slave", nonceM, nonceS)) {
		return ErrAuthFailed
	}
	if _, err := c.Write(authMAC(secret, "master", nonceS, nonceM)); err != nil {
		return fmt.Errorf("send proof: %w", err)
	}
	return c.SetDeadline(time.Time{})
}

// Answer is the slave's side: it reads the master's challenge, proves it
// holds secret and checks the master's proof, leaving c's deadline
// cleared.
func Answer(c net.Conn, secret []byte) error {
	if err := c.SetDeadline(time.Now().Add(AuthTimeout)); err != nil {
		return err
	}
	var msg [ChallengeSize]byte
	if _, err := io.ReadFull(c, msg[:]); err != nil {
		return fmt.Errorf("read challenge (is haAuthSecret set on the master?): %w", err)
	}
	if [len(authMagic)]byte(msg[:len(authMagic)]) != authMagic {
		return fmt.Errorf("%w: the master sent no challenge", ErrAuthFailed)
	}
	nonceM := msg[len(authMagic):]
	var answer [nonceSize + sha256.Size]byte
	nonceS := answer[:nonceSize]
	if _, err := rand.Read(nonceS); err != nil {
		return err
	}
	copy(answer[nonceSize:], authMAC(secret, "slave", nonceM, nonceS))
	if _, err := c.Write(answer[:]); err != nil {
		return fmt.Errorf("send answer: %w", err)
	}
	var proof [sha256.Size]byte
	if _, err := io.ReadFull(c, proof[:]); err != nil {
		return fmt.Errorf("read the master's proof (wrong haAuthSecret?): %w", err)
	}
	if !hmac.Equal(proof[:], authMAC(secret, "master", nonceS, nonceM)) {
		return fmt.Errorf("%w: the master does not hold the secret", ErrAuthFailed)
	}
	return c.SetDeadline(time.Time{})
}
