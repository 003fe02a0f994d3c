package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLinksNoBrokerPackage: mqnamesrv links neither the broker nor what the
// broker is made of. The name server's handlers live in namesrv;
// a stray import of processor, broker or store anywhere under this binary
// would pull the broker's whole store into it.
func TestLinksNoBrokerPackage(t *testing.T) {
	const module = "github.com/rocketgo/rocketgo/"
	goCmd, err := exec.LookPath("go") // go test puts its own toolchain first in PATH
	if err != nil {
		t.Fatalf("no go command to list the binary's packages: %v", err)
	}
	out, err := exec.Command(goCmd, "list", "-deps", "-f", "{{.ImportPath}}", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	var linked, forbidden []string
	for _, p := range deps {
		rel, ok := strings.CutPrefix(p, module)
		if !ok {
			continue
		}
		linked = append(linked, rel)
		for _, no := range []string{"broker", "store", "processor"} {
			if rel == no || strings.HasPrefix(rel, no+"/") {
				forbidden = append(forbidden, rel)
			}
		}
	}
	if !strings.Contains(" "+strings.Join(linked, " ")+" ", " namesrv ") {
		t.Fatalf("go list found no namesrv among %v: the check would prove nothing", linked)
	}
	if len(forbidden) > 0 {
		t.Fatalf("mqnamesrv links %v (all it links of rocketgo: %v)", forbidden, linked)
	}
}
