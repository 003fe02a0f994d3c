// Package sysprops reads Java-style system properties (-Dkey=value) from
// a binary's command line, as Apache's scripts pass them to the JVM, and
// builds what they configure: the tls.* settings (remoting.TLS).
//
// Owns: splitting -D arguments from flags; loading tls.config.file.
// Never: holds defaults (remoting.DefaultTLSConfig does).
package sysprops

import (
	"flag"
	"os"
	"strings"

	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/config"
	"github.com/rocketgo/rocketgo/remoting"
)

// ParseFlags parses the command line: -Dkey=value arguments are returned,
// the rest goes to the flag package (flag.Parse's behaviour on errors).
func ParseFlags() [][2]string {
	props, rest := Split(os.Args[1:])
	_ = flag.CommandLine.Parse(rest) // ExitOnError: exits itself
	return props
}

// Split returns the -D properties of JAVA_OPT (which Apache's scripts pass
// to the JVM) and then of args, so that args win, and the other arguments.
func Split(args []string) (props [][2]string, rest []string) {
	props, _ = remoting.SystemProperties(strings.Fields(os.Getenv("JAVA_OPT")))
	argProps, rest := remoting.SystemProperties(args)
	return append(props, argProps...), rest
}

// ClientTLS builds TLS settings for a process that only dials (mqadmin):
// servers' settings are left out.
func ClientTLS(props [][2]string, log zerolog.Logger) (*remoting.TLS, error) {
	c, err := remoting.LoadTLSConfig(props, config.ReadPropertiesFile)
	if err != nil {
		return nil, err
	}
	c.Enable, c.EnableSet = c.ClientEnabled(), true
	c.Mode = remoting.TLSDisabled
	return remoting.NewTLS(c, log)
}

// TLS builds the TLS settings from props and the tls.config.file they name
// (default /etc/rocketmq/tls.properties, if it exists).
func TLS(props [][2]string, log zerolog.Logger) (*remoting.TLS, error) {
	c, err := remoting.LoadTLSConfig(props, config.ReadPropertiesFile)
	if err != nil {
		return nil, err
	}
	return remoting.NewTLS(c, log)
}
