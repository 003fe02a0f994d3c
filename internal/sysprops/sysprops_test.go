package sysprops

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/remoting"
)

// JAVA_OPT's -D words come first, the command line's win; other arguments
// keep their order.
func TestSplit(t *testing.T) {
	t.Setenv("JAVA_OPT", "-server -Xmx1g -Dtls.enable=false -Dtls.server.mode=permissive")
	props, rest := Split([]string{"-c", "b.conf", "-Dtls.enable=true", "-n", "x"})
	if len(rest) != 4 || rest[0] != "-c" || rest[3] != "x" {
		t.Fatalf("rest %q", rest)
	}
	c, err := remoting.LoadTLSConfig(props, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Mode != remoting.TLSPermissive || !c.ClientEnabled() {
		t.Fatalf("%+v", c)
	}
}

// The tls.config.file is read; a client-only process builds no server side.
func TestClientTLSReadsConfigFile(t *testing.T) {
	t.Setenv("JAVA_OPT", "")
	f := filepath.Join(t.TempDir(), "tls.properties")
	if err := os.WriteFile(f, []byte("tls.client.trustCertPath=/nonexistent/ca.pem\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ClientTLS([][2]string{{"tls.enable", "true"}, {"tls.config.file", f}}, zerolog.Nop()); err == nil {
		t.Fatal("a trust file from tls.config.file that does not exist was not reported")
	}
	if _, err := ClientTLS([][2]string{{"tls.server.mode", "enforcing"}, {"tls.test.mode.enable", "false"},
		{"tls.config.file", "/nonexistent"}}, zerolog.Nop()); err != nil {
		t.Fatalf("a client-only process needs no server certificate: %v", err)
	}
}
