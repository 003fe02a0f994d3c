// Package logging builds a server's logger from its environment, the same
// way for mqnamesrv, mqbroker and mqproxy:
//
//   - ROCKETGO_LOG: the level (trace … error; default info);
//   - ROCKETGO_LOG_FORMAT: json (one JSON object per line), console
//     (readable lines) or auto (the default: console when stderr is a
//     terminal, json otherwise, so collectors get JSON and people text);
//   - ROCKETGO_LOG_DIR: a directory where <program>.log is also written,
//     rotated at 128 MiB with 10 old files kept (compressed), as the image
//     does under /home/rocketmq/logs.
//
// Owns: the writers behind the logger. Never: decides what is logged.
package logging

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rs/zerolog"
	"golang.org/x/sys/unix"
	"gopkg.in/natefinch/lumberjack.v2"
)

// Rotation of the log file (lumberjack's units: MiB, files).
const (
	rotateMiB  = 128
	rotateKeep = 10
)

// New returns program's logger and what to close at exit (flushes nothing:
// zerolog writes through; it closes the log file).
func New(program string) (zerolog.Logger, io.Closer, error) {
	level := zerolog.InfoLevel
	if l, err := zerolog.ParseLevel(os.Getenv("ROCKETGO_LOG")); err == nil && l != zerolog.NoLevel {
		level = l
	}
	zerolog.TimeFieldFormat = time.RFC3339Nano
	var out io.Writer = os.Stderr
	f := strings.ToLower(os.Getenv("ROCKETGO_LOG_FORMAT"))
	if f == "" || f == "auto" {
		f = "json"
		if isTerminal(os.Stderr) {
			f = "console"
		}
	}
	switch f {
	case "json":
	case "console":
		out = zerolog.ConsoleWriter{Out: os.Stderr, TimeFormat: "2006-01-02 15:04:05.000"}
	default:
		return zerolog.Nop(), nopCloser{}, fmt.Errorf("ROCKETGO_LOG_FORMAT=%q: auto, json or console", f)
	}
	var closer io.Closer = nopCloser{}
	if dir := os.Getenv("ROCKETGO_LOG_DIR"); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return zerolog.Nop(), closer, fmt.Errorf("ROCKETGO_LOG_DIR: %w", err)
		}
		file := &lumberjack.Logger{Filename: filepath.Join(dir, program+".log"), MaxSize: rotateMiB,
			MaxBackups: rotateKeep, Compress: true}
		closer = file
		out = zerolog.MultiLevelWriter(out, file) // the file in JSON whatever the terminal's format
	}
	return zerolog.New(out).Level(level).With().Timestamp().Logger(), closer, nil
}

// isTerminal reports whether f is a terminal (it answers the terminal
// attributes ioctl).
func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

type nopCloser struct{}

func (nopCloser) Close() error { return nil }

// Cut shortens what goes into a log line: a name a request carried may be
// as long as a frame.
func Cut(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}
